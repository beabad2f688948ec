"""A level's keys while its chunks add to them, when a key is one word (the compiled engine):
each chunk's new keys as they came, and a hash table of all of them.

Each chunk's new keys are looked up among those of the chunks before it (kmc/engines/vector/engine.py:
Search._accept), on the main thread, which every worker waits for. `Runs` searches each of its
sorted runs in turn, a binary search a key and run with a cache miss at nearly every step of a
large level, and merges runs as they grow: on two-phase commit with 9 resource managers, 1.0 of
the main thread's 2.2 CPU seconds in accepting chunks. Here a key costs one probe of the table,
natively (kmc/semantics/compiled/hashset.py), and the level's end sorts its keys once (numpy's
stable sort merges the chunks' sorted parts). The table keeps at least two slots a key: 16 to
32 bytes a key of the level being built.
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

    def insert(self, table: np.ndarray, flag: np.ndarray, keys: np.ndarray) -> np.ndarray: ...


class LevelSet(Runs):
    """A level's one-word keys: each chunk's new keys (sorted) as they came, and a hash table of
    all of them, which `find` probes; `merged` sorts them once. What the search asks of `Runs`
    (`find`, `add`, `merged`, `len`), without its runs."""

    def __init__(self, fmt: KeyFormat, probes: Probes, expected: int = 0):
        """`expected`: the keys the level is likely to get. The table is made for them at once:
        growing it a doubling at a time (a new table, the keys added again) took a fifth of the
        main thread on two-phase commit with 9 resource managers, mostly in touching new memory."""
        assert fmt.words == 1
        super().__init__(fmt)
        self.probes = probes
        self.parts: list[np.ndarray] = []
        self.table = np.full(_slots(expected), EMPTY, dtype=np.uint64)
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
        self._room(len(sort_key))
        self.parts.append(sort_key)
        self.held += len(sort_key)
        self.probes.add(self.table, self.flag, sort_key)

    def insert(self, sort_key: np.ndarray) -> np.ndarray:
        """`find` and `add` at once, one probe a key: whether each of distinct keys, given in
        sort-key order, was held; those that were not are added."""
        self._room(len(sort_key))
        held = self.probes.insert(self.table, self.flag, sort_key)
        new = sort_key[~held]
        if len(new):
            self.parts.append(new)
            self.held += len(new)
        return held

    def _room(self, more: int) -> None:
        """A table with room for `more` keys: at most half its slots taken."""
        if 2 * (self.held + more) > len(self.table):
            self.table = np.full(_slots(self.held + more), EMPTY, dtype=np.uint64)
            for part in self.parts:  # the keys held, added again
                self.probes.add(self.table, self.flag, part)

    def merged(self) -> Visited:
        keys = np.concatenate(self.parts) if self.parts else np.zeros(0, dtype=np.uint64)
        keys.sort(kind="stable")
        self.parts, self.table = [], np.zeros(0, dtype=np.uint64)
        return Visited.holding(self.fmt, keys, [])


def _slots(keys: int) -> int:
    """The slots of a table for `keys` keys: a power of two, at least twice as many."""
    size = _SMALLEST
    while 2 * keys > size:
        size *= 2
    return size
