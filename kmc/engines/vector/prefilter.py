"""A bit per hashed key in front of the sorted sets: most new keys skip their searches.

Searching the sorted visited set (kmc/engines/vector/keyset.py) is a binary search per key,
a cache miss at nearly every step once the set is larger than the cache. Most of a chunk's
distinct candidates are often not visited: at two-phase commit, none is (every path to a
state has the same length, so a successor is never in an earlier level). This filter is a
bit array with one hash (a Bloom filter with k = 1) holding the visited keys and the keys
the current level has found so far: a key whose bit is clear is certainly in neither, and
skips both searches (the visited set's and the level's runs'); only the others are
searched. Exact either way: the filter only ever skips searches whose answer is "not found".

It costs 1 to 2 bytes per visited state. A level's keys are added chunk by chunk as they are
found (the filter may fill beyond 8 bits a key meanwhile, which only lets more keys through);
at the level's end it is rebuilt, a block of keys at a time, if it has fewer than 8 bits a key
(doubling, so each key is hashed O(1) times on average).
"""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from kmc.engines.vector.keyset import mix

U64 = np.uint64
BITS_PER_KEY = 8
_BLOCK = 1 << 18
_MIN_BITS = 16


class Marks(Protocol):
    """The filter's bits set and tested natively (kmc/semantics/compiled/keys.py:KeyKernels)."""

    def mark(self, table: np.ndarray, bits: int, sort_key: np.ndarray) -> None: ...

    def marked(self, table: np.ndarray, bits: int, sort_key: np.ndarray) -> np.ndarray: ...


class KeyFilter:
    """Bits set for every added sort key; `maybe` is True for every added key. With `marks`,
    the same bits are set and tested by native kernels."""

    def __init__(self, marks: Marks | None = None) -> None:
        self.marks = marks
        self.bits = _MIN_BITS  # the filter has 2**bits bits
        self.table = np.zeros(1 << (self.bits - 3), dtype=np.uint8)
        self.n = 0

    @classmethod
    def of(cls, sort_key: np.ndarray, marks: Marks | None = None) -> KeyFilter:
        """A filter of `sort_key`'s keys alone, of BITS_PER_KEY to twice that bits a key."""
        f = cls(marks)
        f._resize(_bits_for(len(sort_key)))
        f.add(sort_key)
        return f

    @property
    def nbytes(self) -> int:
        return self.table.nbytes

    def _slots(self, sort_key: np.ndarray) -> np.ndarray:
        return (mix(sort_key) >> U64(64 - self.bits)).astype(np.intp)

    def add(self, sort_key: np.ndarray) -> None:
        """Add keys (the filter fills beyond its size until `fit` rebuilds it)."""
        self.n += len(sort_key)
        if self.marks is not None:
            self.marks.mark(self.table, self.bits, sort_key)
            return
        for i in range(0, len(sort_key), _BLOCK):
            self._set(self._slots(sort_key[i:i + _BLOCK]))

    def fit(self, everything: Sequence[np.ndarray]) -> None:
        """Rebuild the filter from `everything` (every key added so far, in a few arrays: the
        visited set's and its runs on disk) when it has fewer than BITS_PER_KEY bits per key
        (doubling, so each key is hashed O(1) times on average)."""
        self.n = sum(len(part) for part in everything)
        if self.n * BITS_PER_KEY <= (1 << self.bits):
            return
        self._resize(_bits_for(self.n))
        for part in everything:
            self.add(part)

    def _resize(self, bits: int) -> None:
        """An empty table of 2**bits bits in place of this one."""
        del self.table  # the old table goes before the new one comes: the peak is one table
        self.table = np.zeros(1 << (bits - 3), dtype=np.uint8)
        self.bits = bits
        self.n = 0

    def _set(self, slots: np.ndarray) -> None:
        bit = (slots & 7).astype(np.uint8)
        order = np.argsort(bit, kind="stable")  # a radix sort of 3-bit values: the keys grouped by bit
        bounds = np.concatenate([[0], np.cumsum(np.bincount(bit, minlength=8))]).tolist()
        byte = (slots >> 3)[order]
        for b in range(8):  # one bit value at a time: keys sharing a byte then set the same bit
            self.table[byte[bounds[b]:bounds[b + 1]]] |= np.uint8(1 << b)

    def maybe(self, sort_key: np.ndarray) -> np.ndarray:
        """False where a key is certainly not among those added."""
        if self.marks is not None:
            bits = self.bits  # before the table, which `fit` (never while workers run) replaces first
            return self.marks.marked(self.table, bits, sort_key)
        slots = self._slots(sort_key)
        return (self.table[slots >> 3] >> (slots & 7).astype(np.uint8)) & np.uint8(1) != 0


def _bits_for(n: int) -> int:
    """The fewest bits (a power of two, at least 2**_MIN_BITS) that give n keys BITS_PER_KEY each."""
    bits = _MIN_BITS
    while n * BITS_PER_KEY > (1 << bits):
        bits += 1
    return bits
