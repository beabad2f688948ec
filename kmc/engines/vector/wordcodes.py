"""Exact compression of wide keys' other words: each word as its index in a dictionary of the
values it has taken (kmc/engines/vector/keyset.py stores and searches the coded keys)."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from kmc.engines.vector.keyset import KeyFormat, Runs, Visited

U64 = np.uint64
# words (W x N) and a dictionary per word -> (each word's index in its dictionary, whether a key has a word not there)
Search = Callable[[np.ndarray, list[tuple[np.ndarray, np.ndarray]]], tuple[np.ndarray, np.ndarray]]


class WordCodes:
    """Exact compression of wide keys: each of a key's other words is stored as its index in a
    dictionary of the values that word has taken so far, in the order they were first seen.

    A wide state (3-broker kraft: a key of 47 words, 376 bytes) reaches few of the values each
    word could hold (1 to 10,661 per word on the first million states of its shipped
    configuration), so most words take one byte. Each dictionary is a bijection between values
    and indices, so (sort key, indices) still determines the key exactly: no fingerprints. An
    index is stored as uint8 while its dictionary has at most 256 values, then uint16, then
    uint32; when a dictionary outgrows its dtype, the stores given to `code` widen that word.

    One thread adds values (`code`) while others read (`lookup`): each word's sorted values and
    their indices are replaced together, as one tuple, and an index once given never changes.
    """

    def __init__(self, fmt: KeyFormat):
        n = fmt.words - 1
        self.fmt = fmt
        self.values = [np.zeros(0, dtype=U64) for _ in range(n)]  # index -> value
        # per word: (the values ascending, their indices in that order)
        self.tables = [(np.zeros(0, dtype=U64), np.zeros(0, dtype=np.int64)) for _ in range(n)]
        self.dtypes: list[np.dtype] = [np.dtype(np.uint8)] * n

    def restore(self, w: int, values: np.ndarray) -> None:
        """Word w's dictionary as a run kept it (distinct values, in index order)."""
        values = self.values[w] = values.astype(U64, copy=False)
        index = np.argsort(values, kind="stable")
        self.tables[w] = (values[index], index)
        self.dtypes[w] = _code_dtype(len(values))

    def code(self, extras: list[np.ndarray], stores: Sequence[Visited | Runs]) -> list[np.ndarray]:
        """The indices of the other words `extras` (values not seen before are added)."""
        out = []
        for w, x in enumerate(extras):
            x = x.astype(U64, copy=False)
            ascending, index = self.tables[w]
            pos = np.searchsorted(ascending, x)
            hit = pos < len(ascending)
            hit[hit] = ascending[pos[hit]] == x[hit]
            if not hit.all():
                # the new values (none of them known) go into the sorted table where they belong,
                # one pass over it: the dictionary is not sorted again (O(n log n) for each new word)
                new = np.unique(x[~hit])
                known = len(self.values[w])
                values = self.values[w] = np.concatenate([self.values[w], new])
                at = np.searchsorted(ascending, new)
                ascending = np.insert(ascending, at, new)
                index = np.insert(index, at, np.arange(known, len(values), dtype=index.dtype))
                self.tables[w] = (ascending, index)
                pos = np.searchsorted(ascending, x)
                dtype = _code_dtype(len(values))
                if dtype.itemsize > self.dtypes[w].itemsize:
                    self.dtypes[w] = dtype
                    for store in stores:
                        store.widen(w, dtype)
            out.append(index[pos].astype(self.dtypes[w]))
        return out

    def lookup(self, extras: list[np.ndarray], search: Search | None = None) -> tuple[list[np.ndarray], np.ndarray]:
        """(the indices of the other words `extras`, whether each key has a word no dictionary
        holds yet): adds nothing, so any thread may call it while one codes. A key with an
        unknown word is in no store; its indices mean nothing. `search`: every word looked up
        in one call (kmc/semantics/compiled/keys.py:KeyKernels.search)."""
        tables = list(self.tables)  # one snapshot of each word's dictionary
        if search is not None and extras and len(extras[0]) and all(len(t[0]) for t in tables):
            words = np.empty((len(extras), len(extras[0])), dtype=U64)
            for w, x in enumerate(extras):
                words[w] = x
            found, missing = search(words, tables)
            return [found[w].astype(_code_dtype(len(t[0]))) for w, t in enumerate(tables)], missing
        unknown = np.zeros(len(extras[0]) if extras else 0, dtype=bool)
        out: list[np.ndarray] = []
        for x in extras:
            ascending, index = tables[len(out)]
            if not len(ascending):
                unknown[:] = True
                out.append(np.zeros(len(x), dtype=np.uint8))
                continue
            x = x.astype(U64, copy=False)
            pos = np.minimum(np.searchsorted(ascending, x), len(ascending) - 1)
            unknown |= ascending[pos] != x
            out.append(index[pos].astype(_code_dtype(len(ascending))))
        return out, unknown

    def decode_into(self, codes: list[np.ndarray], out: np.ndarray) -> None:
        """The other words of coded ones, as uint64, into the rows of `out`."""
        for w, c in enumerate(codes):
            np.take(self.values[w], c, out=out[w])

    def decode(self, codes: list[np.ndarray]) -> list[np.ndarray]:
        """The other words (in the key format's dtypes) of coded ones."""
        return [self.values[w][c].astype(dt, copy=False) for w, (c, dt) in enumerate(zip(codes, self.fmt.extra_dtypes))]


def _code_dtype(size: int) -> np.dtype:
    """The narrowest dtype of the indices into a dictionary of `size` values."""
    return np.dtype(np.uint8 if size <= 2**8 else np.uint16 if size <= 2**16 else np.uint32)
