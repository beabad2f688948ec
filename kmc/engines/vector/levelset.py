"""A level's keys while its chunks add to them, when a key is one word: the sorted runs the
level's end merges into the visited set, and a hash table of the same keys beside them.

Each chunk's new keys are looked up among those of the chunks before it (kmc/engines/vector/engine.py:
Search._accept), on the main thread, which every worker waits for. `Runs.find` searches each run in
turn: a binary search a key and run, a cache miss at nearly every step of a large level (1.6 s of
the 7 s that two-phase commit with 9 resource managers explores). A key here costs one probe of the
table, natively (kmc/semantics/compiled/hashset.py). The table keeps at least two slots a key:
16 to 32 bytes a key of the level being built.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from kmc.engines.vector.keyset import KeyFormat, Runs, Visited, Words

EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # a free slot (the key EMPTY itself is held by the flag)
_SMALLEST = 1 << 12  # slots


class Probes(Protocol):
    """The table's kernels (kmc/semantics/compiled/hashset.py:HashKernels)."""

    def add(self, table: np.ndarray, flag: np.ndarray, keys: np.ndarray) -> None: ...

    def holds(self, table: np.ndarray, flag: np.ndarray, keys: np.ndarray) -> np.ndarray: ...


class HashedRuns(Runs):
    """A level's one-word keys: each chunk's new keys (sorted) as they came, and a hash table of
    all of them, which `find` probes. The level's end sorts them once (numpy's stable sort
    merges the sorted parts), where `Runs` merged its runs as they grew."""

    def __init__(self, fmt: KeyFormat, probes: Probes):
        assert fmt.words == 1
        super().__init__(fmt)
        self.probes = probes
        self.parts: list[np.ndarray] = []
        self.table = np.full(_SMALLEST, EMPTY, dtype=np.uint64)
        self.flag = np.zeros(1, dtype=np.int64)
        self.held = 0

    def __len__(self) -> int:
        return self.held

    def find(self, sort_key: np.ndarray, extras: Words) -> np.ndarray:
        return self.probes.holds(self.table, self.flag, sort_key)

    def add(self, sort_key: np.ndarray, extras: list[np.ndarray]) -> None:
        """Add distinct keys, given in sort-key order, that the level does not hold."""
        if not len(sort_key):
            return
        self.parts.append(sort_key)
        self.held += len(sort_key)
        if 2 * self.held > len(self.table):  # at most half the slots taken
            size = len(self.table)
            while 2 * self.held > size:
                size *= 2
            kept = self.table[self.table != EMPTY]
            self.table = np.full(size, EMPTY, dtype=np.uint64)
            self.probes.add(self.table, self.flag, kept)
        self.probes.add(self.table, self.flag, sort_key)

    def merged(self) -> Visited:
        keys = np.concatenate(self.parts) if self.parts else np.zeros(0, dtype=np.uint64)
        keys.sort(kind="stable")
        self.parts, self.table = [], np.zeros(0, dtype=np.uint64)
        return Visited.holding(self.fmt, keys, [])
