"""A level's parent links, kept as counts: how many of the level's states each state of the level
before reached first.

A level's states are numbered in the order the scalar engine finds them, which expands the level
before in order: so their parents never decrease, and a level's links are its parents' child
counts (one byte each while a state has at most 255 successors: the model's instances bound
them) rather than a 4-byte index per state. A parent is found from the counts' running sums,
of which every `_EVERY`-th is kept (8 bytes per 4,096 parents): the counts since the last one
are added at each look-up, which only a counterexample makes.
"""

from __future__ import annotations

import numpy as np

_EVERY = 4096


class Parents:
    """The parent links of a level: `children[p]` of its states have state p of the level before
    as their parent, in order."""

    def __init__(self, children: np.ndarray):
        self.children = children
        self._marks: np.ndarray | None = None  # states before every _EVERY-th parent

    @classmethod
    def of(cls, parents: np.ndarray, before: int, instances: int) -> Parents:
        """The links of a level whose states' parents are `parents` (nondecreasing, each below
        `before`, the level before's size), each parent with at most `instances` children."""
        return cls(np.bincount(parents, minlength=before).astype(np.min_scalar_type(instances)))

    def __len__(self) -> int:
        return len(self.children)

    @property
    def nbytes(self) -> int:
        return int(self.children.nbytes)

    def __getitem__(self, index: int) -> int:
        """The parent (its index in the level before) of the level's state `index`."""
        if self._marks is None:
            blocks = np.add.reduceat(self.children, np.arange(0, len(self.children), _EVERY), dtype=np.int64) \
                if len(self.children) else np.zeros(0, dtype=np.int64)
            self._marks = np.concatenate([[0], np.cumsum(blocks)])
        block = int(np.searchsorted(self._marks, index, side="right")) - 1
        ends = self._marks[block] + np.cumsum(self.children[block * _EVERY:(block + 1) * _EVERY], dtype=np.int64)
        return block * _EVERY + int(np.searchsorted(ends, index, side="right"))

    def indices(self) -> np.ndarray:
        """Each state's parent, in order."""
        return np.repeat(np.arange(len(self.children), dtype=np.int32), self.children)
