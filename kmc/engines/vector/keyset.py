"""Sets of exact packed keys: first occurrences in a batch, and the sorted visited set.

A key is one or more uint64 words (kmc/engines/vector/packing.py). Everything here sorts and
searches on one 64-bit *sort key* per state: the word itself when a key is one word; with
more words, the first word XOR a bijective mix of the others. The other words are kept
alongside (as uint32 when they fit), so (sort key, other words) determines the key exactly
and equality is always decided on the whole key. Two different keys may share a sort key;
that is checked for, and settled by exact comparison, every time.

The visited set is one array sorted by sort key (plus the other words). Each new level is
merged into it, never re-sorted: one-word keys by appending them and numpy's stable sort (a
timsort, which merges the two sorted runs in one pass), longer keys by inserting them at the
positions a search gave. A level's keys, while its chunks add to them, are a few sorted runs
(`Runs`).
"""

from __future__ import annotations

from concurrent.futures import Executor
from typing import Callable, Protocol, Sequence, Union

import numpy as np

from kmc.engines.vector.bounds import Index, LowerBounds, LowerBoundsFrom, lower_bounds, lower_bounds_from

U64 = np.uint64
_GOLDEN = U64(0x9E3779B97F4A7C15)
_M1, _M2 = U64(0xBF58476D1CE4E5B9), U64(0x94D049BB133111EB)
New = Union[np.ndarray, Callable[[], np.ndarray]]  # an array merged in, or a function that makes it
Decode = Callable[[list[np.ndarray]], list[np.ndarray]]  # coded other words to the words themselves
# inserts new values, each before a given position, into the sorted first n values of arrays with room
Insert = Callable[[list[np.ndarray], int, Sequence[New], np.ndarray], None]


class CodedWords(Protocol):
    """How a key's other words are stored when coded (kmc/engines/vector/wordcodes.py:WordCodes,
    which imports this module): each word's dtype, which grows as its dictionary fills."""

    dtypes: list[np.dtype]


def mix(x: np.ndarray) -> np.ndarray:
    """A bijection of uint64 that spreads every input bit over the output (splitmix64)."""
    x = x + _GOLDEN
    x = (x ^ (x >> U64(30))) * _M1
    x = (x ^ (x >> U64(27))) * _M2
    return x ^ (x >> U64(31))


class Rows:
    """Rows `rows` of an array, gathered only where read: `Rows(x, rows)[i]` is `x[rows][i]`.
    A search compares the other words of the keys it looks for only where it finds their sort
    keys, so keys searched run after run are not gathered word by word for each run (on kraft
    v3.5's goal run, with 38 runs, that gathering was a quarter of the searches' time). Rows of
    rows keep both index arrays, composed only where read."""

    __slots__ = ("of", "chain")

    def __init__(self, of: np.ndarray | Rows, rows: np.ndarray):
        self.of: np.ndarray = of.of if isinstance(of, Rows) else of
        self.chain: tuple[np.ndarray, ...] = (*of.chain, rows) if isinstance(of, Rows) else (rows,)

    def __getitem__(self, i: np.ndarray | int) -> np.ndarray:
        for rows in reversed(self.chain):
            i = rows[i]
        return self.of[i]


Words = Sequence[Union[np.ndarray, Rows]]  # the other words of keys searched for


class KeyFormat:
    """How keys of `words` words (of `word_bits` bits each) are stored and sorted."""

    def __init__(self, word_bits: list[int]):
        self.words = len(word_bits)
        self.extra_dtypes = [np.dtype(np.uint32) if b <= 32 else np.dtype(U64) for b in word_bits[1:]]
        # where sorted sort keys are searched: numpy, or native kernels that do the same (the
        # compiled engine's: kmc/semantics/compiled/keys.py:KeyKernels.lower_bounds)
        self.lower_bounds: LowerBounds = lower_bounds
        self.lower_bounds_from: LowerBoundsFrom = lower_bounds_from
        # the sort keys of keys given as words (W x N): numpy, or a native kernel that does the
        # same in one pass (kmc/semantics/compiled/keys.py:KeyKernels.sort_keys)
        self.sort_keys: Callable[[np.ndarray], np.ndarray] = self._sort_keys
        # how new keys go into the visited set's arrays: numpy, or a native memmove per run of
        # stored keys (kmc/semantics/compiled/keys.py:KeyKernels.insert)
        self.insert: Insert = insert

    def __getstate__(self) -> dict:  # native functions do not pickle
        return {**self.__dict__, "lower_bounds": lower_bounds, "lower_bounds_from": lower_bounds_from,
                "sort_keys": None, "insert": insert}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.sort_keys = self._sort_keys

    def positions(self, ascending: np.ndarray, keys: np.ndarray, index: Index | None = None) -> np.ndarray:
        """Where each key goes in sorted sort keys (side left), through their sparse `index`
        (kmc/engines/vector/bounds.py) if they have one."""
        if index is None:
            return self.lower_bounds(ascending, keys)
        return index.lower_bounds(ascending, keys, self.lower_bounds, self.lower_bounds_from)

    def split(self, words: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """(sort key, other words) of keys given as words (W x N, uint64)."""
        if self.words == 1:
            return words[0], []
        return self._sort_keys(words), [words[w].astype(dt) for w, dt in zip(range(1, self.words), self.extra_dtypes)]

    def _sort_keys(self, words: np.ndarray) -> np.ndarray:
        """The first word XOR a mix of the others, for keys given as words (W x N, uint64)."""
        h = mix(words[1])
        for w in range(2, self.words):
            h = mix(h ^ words[w])
        return words[0] ^ h

    def join(self, sort_key: np.ndarray, extras: list[np.ndarray]) -> np.ndarray:
        """Words (W x N) back from (sort key, other words): the other words' mix is the sort key
        of the words with a first word of zero."""
        if self.words == 1:
            return sort_key[None, :]
        words = np.empty((self.words, len(sort_key)), dtype=U64)
        for w, e in enumerate(extras, 1):
            words[w] = e
        return self.with_first_word(sort_key, words)

    def with_first_word(self, sort_key: np.ndarray, words: np.ndarray) -> np.ndarray:
        """`words` (W x N, uint64, the other words given) with the first word that gives them
        `sort_key`."""
        words[0] = 0
        if len(sort_key):
            words[0] = sort_key ^ self.sort_keys(words)
        return words


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


Distinct = tuple[np.ndarray, list[np.ndarray], np.ndarray]  # (sort keys, other words, smallest ranks)


def first_occurrences(sort_key: np.ndarray, extras: list[np.ndarray], rank: np.ndarray | None,
                      runs: bool = False) -> Distinct:
    """The distinct keys of a batch, ordered by sort key, each with its smallest rank (rank
    None: each element's position, without building or gathering an array of them). With
    `runs`, the batch is runs of distinct keys each sorted by sort key (several batches'
    results, concatenated): a stable sort (numpy's timsort) merges them, several times faster
    than sorting the batch afresh."""
    if len(sort_key) == 0:
        return sort_key, extras, np.zeros(0, dtype=np.int64) if rank is None else rank
    if not extras:
        shift = max(len(sort_key) - 1 if rank is None else int(rank.max()), 1).bit_length()
        if int(sort_key.max()).bit_length() + shift <= 64:
            # one sort of key * 2**b + rank: each key's first element holds its smallest rank
            ranks = np.arange(len(sort_key), dtype=U64) if rank is None else rank.astype(U64)
            combined = (sort_key << U64(shift)) | ranks
            combined.sort(kind="stable" if runs else None)
            s = combined >> U64(shift)
            first = np.flatnonzero(_starts(s, []))
            return s[first], [], (combined[first] & U64((1 << shift) - 1)).astype(np.int64)
    if runs:
        order = np.argsort(sort_key, kind="stable")
        s = sort_key[order]
    else:
        order, s = _argsort(sort_key)
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
    return s[first], [x[first] for x in e], np.minimum.reduceat(order if rank is None else rank[order], first)


def sorted_distinct(sort_key: np.ndarray, gather: Callable[[np.ndarray], list[np.ndarray]], rank: np.ndarray
                    ) -> Distinct:
    """Distinct keys given in any order (their sort keys; `gather(at)`: the other words of the
    keys at positions `at`; their ranks) in `first_occurrences`' order: by sort key, and keys
    that share a sort key by their other words."""
    order, s = _argsort(sort_key)
    e, r = gather(order), rank[order]
    if len(s) > 1 and e and bool((s[1:] == s[:-1]).any()):
        order = np.lexsort([*reversed(e), s])
        s, e, r = s[order], [x[order] for x in e], r[order]
    return s, e, r


def _argsort(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order, keys[order]): by sorting key * 2**b + index when that fits in 64 bits, which
    numpy does several times faster than an argsort; otherwise by an argsort."""
    n = len(keys)
    shift = max(n - 1, 1).bit_length()
    if int(keys.max()).bit_length() + shift <= 64:
        combined = (keys << U64(shift)) | np.arange(n, dtype=U64)
        combined.sort()
        return (combined & U64((1 << shift) - 1)).astype(np.int64), combined >> U64(shift)
    order = np.argsort(keys)
    return order, keys[order]


class Visited:
    """The keys of every state found so far, sorted by sort key.

    A merge grows the arrays to the size they need by `ndarray.resize` (a realloc, which the C
    library does for large arrays by remapping pages, not copying) and shifts the stored keys
    up in place, a block at a time from the top, so merging never holds two copies of the
    visited set."""

    # a run on disk: every 512th sort key, in memory (kmc/engines/vector/bounds.py); a merge drops it
    index: Index | None = None

    def __init__(self, fmt: KeyFormat, extra_dtypes: list[np.dtype] | None = None):
        self.fmt = fmt
        self.n = 0
        self._sort_key = np.zeros(0, dtype=U64)
        self._extras = [np.zeros(0, dtype=dt) for dt in (fmt.extra_dtypes if extra_dtypes is None else extra_dtypes)]

    @classmethod
    def holding(cls, fmt: KeyFormat, sort_key: np.ndarray, extras: list[np.ndarray]) -> Visited:
        """The visited set of keys given sorted, over the arrays given (read-only ones too: the
        first merge copies them into arrays of its own)."""
        v = cls(fmt, [e.dtype for e in extras])
        v._sort_key, v._extras, v.n = sort_key, list(extras), len(sort_key)
        return v

    def __len__(self) -> int:
        return self.n

    def indexed(self) -> Visited:
        """This set, searched from now on through a sparse index of its sort keys (for a run on
        disk, whose keys never change: kmc/engines/vector/bounds.py)."""
        self.index = Index(self.sort_key)
        return self

    def arrays(self) -> list[np.ndarray]:
        """The arrays that hold the keys (those of a run on disk map its files)."""
        return [self._sort_key, *self._extras]

    def __getstate__(self) -> dict:
        return {"fmt": self.fmt, "n": self.n, "_sort_key": self.sort_key.copy(),
                "_extras": [e.copy() for e in self.extras]}

    @property
    def sort_key(self) -> np.ndarray:
        return self._sort_key[: self.n]

    @property
    def extras(self) -> Sequence[np.ndarray]:
        return [e[: self.n] for e in self._extras]

    @property
    def nbytes(self) -> int:
        return self.sort_key.nbytes + sum(e.nbytes for e in self.extras)

    def find(self, sort_key: np.ndarray, extras: Words, decode: Decode | None = None,
             ) -> tuple[np.ndarray, np.ndarray]:
        """(found, insertion position) of distinct keys given in sort-key order; with `decode`,
        their other words are given as they are (not coded) and the stored ones decoded to
        compare (kmc/engines/vector/wordcodes.py:WordCodes.decode)."""
        def stored(at: np.ndarray) -> list[np.ndarray]:
            words = self.stored(at, len(extras))
            return words if decode is None else decode(words)

        n = self.n
        mine_key = self.sort_key
        pos = self.fmt.positions(mine_key, sort_key, self.index)
        if n == 0:
            return np.zeros(len(sort_key), dtype=bool), pos
        at = np.minimum(pos, n - 1)
        found = mine_key[at] == sort_key
        if not extras:
            return found, pos
        same = found.copy()
        hit = np.flatnonzero(found)  # the other words are read only where the sort key is here: a run
        # on disk is read where it holds the key, not at every key searched
        for mine, theirs in zip(stored(at[hit]), extras):
            same[hit] &= mine == theirs[hit]
        for k in np.flatnonzero(found & ~same).tolist():
            # a stored key shares this sort key: look through every stored key that does
            j = int(pos[k])
            while j < n and mine_key[j] == sort_key[k]:
                if all(mine[0] == theirs[k] for mine, theirs in zip(stored(np.array([j])), extras)):
                    same[k] = True
                    break
                j += 1
        return same, pos

    def stored(self, at: np.ndarray, count: int) -> list[np.ndarray]:
        """The first `count` other words of the keys stored at positions `at`."""
        return [e[at] for e in self.extras[:count]]

    def _incoming(self, extras: Sequence[New], m: int) -> Sequence[New]:
        """New keys' other words (m keys) as this set stores them."""
        return extras

    def widen(self, w: int, dtype: np.dtype) -> None:
        """Store other word w (coded: kmc/engines/vector/wordcodes.py) in a wider dtype."""
        self._extras[w] = self._extras[w].astype(dtype)

    def merge(self, sort_key: np.ndarray, extras: Sequence[New], pos: np.ndarray | None = None,
              pool: Executor | None = None, ways: int = 1) -> None:
        """Add new keys (in sort-key order, with the positions `find` gave, or None; their other
        words as arrays or functions that make them); with a pool, its threads each move
        `ways`-th of the arrays (numpy lets go of the GIL)."""
        m = len(sort_key)
        if m == 0:
            return
        self.index = None
        extras = self._incoming(extras, m)
        need = self.n + m
        if need > len(self._sort_key):
            # no room to spare: it would be resident memory (ndarray.resize writes zeros into it)
            self._sort_key = grown(self._sort_key, need)
            self._extras = [grown(e, need) for e in self._extras]
        if pos is None and not extras:
            # one-word keys: appended, then merged by a stable sort (numpy's timsort finds the
            # two sorted runs and merges them in one pass, with a buffer the size of the smaller)
            self._sort_key[self.n:need] = sort_key
            self._sort_key[:need].sort(kind="stable")
            self.n = need
            return
        if pos is None:
            pos = self.fmt.lower_bounds(self.sort_key, sort_key)
        arrays, news = [self._sort_key, *self._extras], [sort_key, *extras]
        if pool is None or ways < 2:
            self.fmt.insert(arrays, self.n, news, pos)
        else:
            n, at, put = self.n, pos, self.fmt.insert
            list(pool.map(lambda k: put(arrays[k::ways], n, news[k::ways], at), range(ways)))
        self.n = need


class Runs:
    """The keys found so far in a level, chunk by chunk: a few sorted runs, each at least twice
    the size of the next newer one (a binary counter). A chunk's new keys become a run and
    merge with the runs no larger than twice theirs, so a key is moved O(log chunks) times in
    all, where merging every chunk into one sorted array moved the whole level at every chunk."""

    def __init__(self, fmt: KeyFormat, codes: CodedWords | None = None):
        self.fmt = fmt
        self.codes = codes  # the other words are coded by these (their dtypes grow as they fill)
        self.runs: list[Visited] = []

    def __len__(self) -> int:
        return sum(len(r) for r in self.runs)

    def find(self, sort_key: np.ndarray, extras: Words) -> np.ndarray:
        """Whether each of distinct keys given in sort-key order is in a run."""
        found = np.zeros(len(sort_key), dtype=bool)
        for run in self.runs:
            unsure = np.flatnonzero(~found)
            found[unsure] = run.find(sort_key[unsure], [Rows(x, unsure) for x in extras])[0]
        return found

    def add(self, sort_key: np.ndarray, extras: list[np.ndarray]) -> None:
        """Add distinct keys, given in sort-key order, that no run holds."""
        if not len(sort_key):
            return
        run = self._empty()
        run.merge(sort_key, extras)
        self.runs.append(run)
        while len(self.runs) > 1 and len(self.runs[-2]) <= 2 * len(self.runs[-1]):
            self._merge_newest()

    def merged(self) -> Visited:
        """Every key, as one sorted run (the runs are let go)."""
        while len(self.runs) > 1:
            self._merge_newest()
        return self.runs.pop() if self.runs else self._empty()

    def widen(self, w: int, dtype: np.dtype) -> None:
        for run in self.runs:
            run.widen(w, dtype)

    def _merge_newest(self) -> None:
        newer = self.runs.pop()
        self.runs[-1].merge(newer.sort_key, newer.extras)

    def _empty(self) -> Visited:
        dtypes = list(self.fmt.extra_dtypes if self.codes is None else self.codes.dtypes)
        return Visited(self.fmt, dtypes)


_SHIFT_BLOCK = 1 << 18


def grown(a: np.ndarray, size: int) -> np.ndarray:
    """`a` with room for `size` elements, in place when `a` owns its memory."""
    if a.flags.owndata and a.base is None:
        a.resize(size, refcheck=False)
        return a
    out = np.zeros(size, dtype=a.dtype)
    out[: len(a)] = a
    return out


def insert(arrays: list[np.ndarray], n: int, news: Sequence[New], pos: np.ndarray) -> None:
    """Insert each of `news` into the sorted first n elements of its array in `arrays` (which
    have room for them), new[i] before a[pos[i]] (pos ascending): each stored element moves up
    by the number of new ones inserted at or below it, a block at a time from the top, so
    nothing is overwritten before it is read. The places are worked out once for all the arrays
    (a key's sort key and its other words). A new array given as a function is made when it is
    written, one at a time."""
    pos = np.asarray(pos, dtype=np.int64)
    for top in range(n, 0, -_SHIFT_BLOCK):
        low = max(0, top - _SHIFT_BLOCK)
        first, last = np.searchsorted(pos, [low, top])  # the new keys inserted within this block
        shift = int(first)  # those inserted below it
        if last == 0:
            break  # nothing is inserted at or below this block, nor below it
        if first == last:
            for a in arrays:
                a[low + shift: top + shift] = a[low:top].copy()
            continue
        moved = np.cumsum(np.bincount(pos[first:last] - low, minlength=top - low))
        moved += np.arange(low, top, dtype=np.int64) + shift
        for a in arrays:
            a[moved] = a[low:top].copy()
    at = pos + np.arange(len(pos), dtype=np.int64)
    for a, new in zip(arrays, news):
        a[at] = new() if callable(new) else new
