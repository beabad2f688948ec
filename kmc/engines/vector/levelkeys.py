"""A coded level's keys while its chunks add to them: the sorted runs move 16 bytes a key.

Each new key of a level (kmc/engines/vector/levels.py) gets its state's position in the level.
`LevelKeys` keeps a key's coded words once, at that position (`words`, in the level's order,
appended chunk by chunk and never moved), and the runs of its binary counter (`Runs`) hold only
the sort key and the position. Merging two runs then moves 16 bytes a key, where it moved the
sort key, the 46 coded words and the position of a 3-broker kraft key (about 70 bytes), about
log2(chunks) times a key. A search compares the words where a run's sort key matched, read
through the position. At the level's end the words stay in the level's order, as the level
holds them (kmc/engines/vector/levels.py), and the visited set gathers them in sort-key order
one word at a time as it merges them.
"""

from __future__ import annotations

import numpy as np

from kmc.engines.vector.keyset import KeyFormat, Runs, Visited, WordCodes, grown

_POSITION = np.dtype(np.int64)


class _PlacedRun(Visited):
    """A run of sort keys and positions, whose other words are its level's, at those positions."""

    def __init__(self, level: LevelKeys):
        super().__init__(level.fmt, [_POSITION])
        self.level = level

    def stored(self, at: np.ndarray, count: int) -> list[np.ndarray]:
        place = self.extras[0][at]
        return [w[place] for w in self.level.words[:count]]


class LevelKeys(Runs):
    """The keys of a level being built (coded by `codes`), each with its state's position."""

    def __init__(self, fmt: KeyFormat, codes: WordCodes):
        super().__init__(fmt, codes)
        self.words = [np.zeros(0, dtype=dt) for dt in codes.dtypes]  # by position in the level

    def add(self, sort_key: np.ndarray, extras: list[np.ndarray]) -> None:
        """Add distinct keys in sort-key order that no run holds: their coded words, then their
        positions in the level (the last of `extras`)."""
        if not len(sort_key):
            return
        *coded, place = extras
        need = int(place.max()) + 1
        if self.words and need > len(self.words[0]):
            room = max(need, len(self.words[0]) + len(self.words[0]) // 4, 1024)
            self.words = [grown(w, room) for w in self.words]
        for w, x in zip(self.words, coded):
            w[place] = x
        super().add(sort_key, [place])

    def widen(self, w: int, dtype: np.dtype) -> None:
        self.words[w] = self.words[w].astype(dtype)

    def in_order(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]:
        """The level's keys, the runs let go: every sort key, sorted, and its key's position in
        the level; then the sort keys and the coded words in the level's order."""
        run = self.merged()
        sort_key, place = run.sort_key, run.extras[0]
        level_sort_key = np.empty_like(sort_key)
        level_sort_key[place] = sort_key
        words = [_trimmed(w, len(place)) for w in self.words]
        self.words = []
        return sort_key, place, level_sort_key, words

    def _empty(self) -> Visited:
        return _PlacedRun(self)


def _trimmed(a: np.ndarray, size: int) -> np.ndarray:
    """`a`'s first `size` elements, without the room it was grown with (in place when it owns
    its memory: a view would keep the whole buffer)."""
    if a.flags.owndata and a.base is None:
        a.resize(size, refcheck=False)
        return a
    return a[:size].copy()
