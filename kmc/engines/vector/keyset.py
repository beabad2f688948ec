"""Sets of exact packed keys: first occurrences in a batch, and the sorted visited set.

A key is one or more uint64 words (kmc/engines/vector/packing.py). Everything here sorts and
searches on one 64-bit *sort key* per state: the word itself when a key is one word; with
more words, the first word XOR a bijective mix of the others. The other words are kept
alongside (as uint32 when they fit), so (sort key, other words) determines the key exactly
and equality is always decided on the whole key. Two different keys may share a sort key;
that is checked for, and settled by exact comparison, every time.

The visited set is one array sorted by sort key (plus the other words). Each new level is
merged into it (its new keys are sorted; `np.insert` places them in one pass), never
re-sorted.
"""

from __future__ import annotations

import numpy as np

U64 = np.uint64
_GOLDEN = U64(0x9E3779B97F4A7C15)
_M1, _M2 = U64(0xBF58476D1CE4E5B9), U64(0x94D049BB133111EB)


def mix(x: np.ndarray) -> np.ndarray:
    """A bijection of uint64 that spreads every input bit over the output (splitmix64)."""
    x = x + _GOLDEN
    x = (x ^ (x >> U64(30))) * _M1
    x = (x ^ (x >> U64(27))) * _M2
    return x ^ (x >> U64(31))


class KeyFormat:
    """How keys of `words` words (of `word_bits` bits each) are stored and sorted."""

    def __init__(self, word_bits: list[int]):
        self.words = len(word_bits)
        self.extra_dtypes = [np.dtype(np.uint32) if b <= 32 else np.dtype(U64) for b in word_bits[1:]]

    def split(self, words: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """(sort key, other words) of keys given as words (W x N, uint64)."""
        if self.words == 1:
            return words[0], []
        h = mix(words[1])
        for w in range(2, self.words):
            h = mix(h ^ words[w])
        return words[0] ^ h, [words[w].astype(dt) for w, dt in zip(range(1, self.words), self.extra_dtypes)]

    def join(self, sort_key: np.ndarray, extras: list[np.ndarray]) -> np.ndarray:
        """Words (W x N) back from (sort key, other words)."""
        if self.words == 1:
            return sort_key[None, :]
        rest = [e.astype(U64) for e in extras]
        h = mix(rest[0])
        for w in range(1, len(rest)):
            h = mix(h ^ rest[w])
        return np.stack([sort_key ^ h, *rest])


def _starts(sort_key: np.ndarray, extras: list[np.ndarray], start: np.ndarray | None = None) -> np.ndarray:
    """Whether each element of a sorted batch starts a new key (given where the sort key
    changes, if known)."""
    if start is None:
        start = np.empty(len(sort_key), dtype=bool)
        start[:1] = True
        np.not_equal(sort_key[1:], sort_key[:-1], out=start[1:])
    else:
        start = start.copy()
    for e in extras:
        start[1:] |= e[1:] != e[:-1]
    return start


def first_occurrences(
    sort_key: np.ndarray, extras: list[np.ndarray], rank: np.ndarray
) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """The distinct keys of a batch, ordered by sort key, each with its smallest rank."""
    if len(sort_key) == 0:
        return sort_key, extras, rank
    order = np.argsort(sort_key)
    s = sort_key[order]
    e = [x[order] for x in extras]
    start = _starts(s, [])
    if extras:
        by_sort_key, start = start, _starts(s, e, start)
    if extras and not np.array_equal(start, by_sort_key):
        # two different keys share a sort key somewhere: order by the whole key instead
        order = np.lexsort([*reversed(extras), sort_key])
        s = sort_key[order]
        e = [x[order] for x in extras]
        start = _starts(s, e)
    first = np.flatnonzero(start)
    return s[first], [x[first] for x in e], np.minimum.reduceat(rank[order], first)


class Visited:
    """The keys of every state found so far, sorted by sort key."""

    def __init__(self, fmt: KeyFormat):
        self.fmt = fmt
        self.sort_key = np.zeros(0, dtype=U64)
        self.extras = [np.zeros(0, dtype=dt) for dt in fmt.extra_dtypes]

    def __len__(self) -> int:
        return len(self.sort_key)

    @property
    def nbytes(self) -> int:
        return self.sort_key.nbytes + sum(e.nbytes for e in self.extras)

    def find(self, sort_key: np.ndarray, extras: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(found, insertion position) of distinct keys given in sort-key order."""
        n = len(self.sort_key)
        pos = np.searchsorted(self.sort_key, sort_key)
        if n == 0:
            return np.zeros(len(sort_key), dtype=bool), pos
        at = np.minimum(pos, n - 1)
        found = self.sort_key[at] == sort_key
        if not extras:
            return found, pos
        same = found.copy()
        for mine, theirs in zip(self.extras, extras):
            same &= mine[at] == theirs
        for k in np.flatnonzero(found & ~same).tolist():
            # a stored key shares this sort key: look through every stored key that does
            j = int(pos[k])
            while j < n and self.sort_key[j] == sort_key[k]:
                if all(mine[j] == theirs[k] for mine, theirs in zip(self.extras, extras)):
                    same[k] = True
                    break
                j += 1
        return same, pos

    def merge(self, sort_key: np.ndarray, extras: list[np.ndarray], pos: np.ndarray) -> None:
        """Add new keys (in sort-key order, with the positions `find` gave)."""
        if len(sort_key) == 0:
            return
        self.sort_key = np.insert(self.sort_key, pos, sort_key)
        self.extras = [np.insert(mine, pos, theirs) for mine, theirs in zip(self.extras, extras)]
