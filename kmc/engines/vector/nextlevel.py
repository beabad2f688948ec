"""The next level as a search builds it (kmc/engines/vector/engine.py: `Search._accept` adds each
chunk's new states, `Search._close` ends it)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from kmc.engines.vector import fresh
from kmc.engines.vector.keyset import KeyFormat, Runs
from kmc.engines.vector.levelkeys import LevelKeys
from kmc.engines.vector.levelset import LevelSet


class Search(fresh.Search, Protocol):
    """What a new level reads of the search (kmc/engines/vector/engine.py:Search): what a worker
    reads, with its key format and its count of states generated."""

    @property
    def fmt(self) -> KeyFormat: ...
    @property
    def generated(self) -> int: ...


# a level of tree codes expected to take at most this as words keeps them too, and is not decoded
# when it is expanded (kraft kip966, 2 brokers: every level; decoding took 9 % of the workers' time)
DECODED_BYTES = 16 << 20


class NextLevel:
    """The next level as its chunks add to it: its keys so far (sorted runs, to drop what an
    earlier chunk found), and its states' packed words and parent links, in order. Coded keys
    carry their state's position in the level as one more word (`placed`), from which the level's
    order is read at its end: the keys are not held a second time in that order."""

    def __init__(self, search: Search, expected: int = 0):
        """`expected`: the states the level is likely to get (its table is made for them)."""
        self.placed = search.coded_levels
        codes = search.codes if self.placed else None  # (coded levels have codes)
        self.keys: Runs
        if codes is not None:
            self.keys = LevelKeys(search.fmt, codes)
        elif search.step.probes is not None and search.fmt.words == 1:  # one-word keys or codes, natively
            self.keys = LevelSet(search.fmt, search.step.probes, expected)
        else:
            self.keys = Runs(search.fmt, search.codes)
        self.size = 0
        self.generated_before = search.generated  # when the level before began to be expanded
        self.steps: list[np.ndarray] = []  # per chunk of the level before: each state's steps
        self.words: list[np.ndarray] = []  # per chunk: words x states kept (levels held as words)
        # per chunk, the words of the states kept where the level holds tree codes and is small
        # (DECODED_BYTES); None: the level is decoded as it is expanded
        small = search.tree is not None and expected * search.step.packing.words * 8 <= DECODED_BYTES
        self.decoded: list[np.ndarray] | None = [] if small else None
        self.parents: list[np.ndarray] = []
        self.iids: list[np.ndarray] = []

    def __len__(self) -> int:
        return self.size

    @property
    def hashed(self) -> bool:
        """Whether the keys are in a native hash table, looked up without the key filter."""
        return isinstance(self.keys, LevelSet)
