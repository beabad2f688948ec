"""A coded level's keys while its chunks add to them: the sorted runs move 16 bytes a key.

Each new key of a level (kmc/engines/vector/levels.py) gets its state's position in the level.
`LevelKeys` keeps a key's coded words once, at that position, bit-packed into lanes as the
visited set packs them (kmc/engines/vector/packed.py: each word's index in the bits its
dictionary needs; 32-33 bytes a key on the first 3 million states of 3-broker kraft's shipped
configuration, where its words took 54 as a byte or two each), appended chunk by chunk and never moved; the runs of its binary counter (`Runs`)
hold only the sort key and the position. Merging two runs then moves 16 bytes a key, where it
moved the sort key, the coded words and the position (about 70 bytes), about log2(chunks)
times a key. A search compares the words where a run's sort key matched, unpacked at that
position. At the level's end the lanes stay in the level's order: the level holds them as
they are (kmc/engines/vector/levels.py), and the visited set takes each word, unpacked and
gathered in sort-key order, one at a time as it merges them.

A dictionary that outgrows its word's bits mid-level gets the bits it lacks as one more piece
(`Layout.grown`: every stored key has zeros there); while the level is small it is laid out
afresh instead, so that a word does not end in many small pieces.
"""

from __future__ import annotations

import numpy as np

from kmc.engines.vector.keyset import KeyFormat, Runs, Visited, grown
from kmc.engines.vector.wordcodes import WordCodes
from kmc.engines.vector.packed import Layout, needed, refitted

_POSITION = np.dtype(np.int64)
_RELAYOUT_KEYS = 1 << 20  # a level this small is laid out afresh when a word needs more bits


class _PlacedRun(Visited):
    """A run of sort keys and positions, whose other words are its level's, at those positions."""

    def __init__(self, level: LevelKeys):
        super().__init__(level.fmt, [_POSITION])
        self.level = level

    def stored(self, at: np.ndarray, count: int) -> list[np.ndarray]:
        place = self.extras[0][at]
        layout = self.level.layout
        lanes = layout.wide([lane[place] for lane in self.level.lanes])
        return [layout.unpack(w, lanes, len(at), narrow=False) for w in range(count)]


class LevelKeys(Runs):
    """The keys of a level being built (coded by `codes`), each with its state's position: its
    words bit-packed by `layout` into `lanes`, by position."""

    def __init__(self, fmt: KeyFormat, codes: WordCodes):
        super().__init__(fmt, codes)
        self.dictionaries = codes  # (as `codes`, typed as the dictionaries themselves)
        self.layout = Layout([[] for _ in range(fmt.words - 1)], [])
        self.lanes: list[np.ndarray] = []  # by position in the level
        self.room = 0  # the lanes' length
        self.size = 0  # positions given so far

    def add(self, sort_key: np.ndarray, extras: list[np.ndarray]) -> None:
        """Add distinct keys in sort-key order that no run holds: their coded words, then their
        positions in the level (the last of `extras`)."""
        if not len(sort_key):
            return
        *coded, place = extras
        self._fit(needed(self.dictionaries), int(place.max()) + 1)
        part = [np.zeros(len(place), dtype=dt) for dt in self.layout.dtypes()]
        for w, x in enumerate(coded):
            self.layout.pack(w, x, part)
        for lane, p in zip(self.lanes, part):
            lane[place] = p
        super().add(sort_key, [place])

    def _fit(self, need: list[int], size: int) -> None:
        """Room for `size` positions and for indices of `need[w]` bits."""
        if size > self.room:
            self.room = max(size, self.room + self.room // 4, 1024)
            self.lanes = [grown(lane, self.room) for lane in self.lanes]
        self.size = max(self.size, size)
        if any(b > self.layout.bits(w) for w, b in enumerate(need)):
            self.layout, self.lanes = refitted(self.layout, self.lanes, need, self.room, self.size,
                                               afresh=self.size <= _RELAYOUT_KEYS)

    def widen(self, w: int, dtype: np.dtype) -> None:
        """Nothing to do: the layout gets the bits a dictionary needs as keys are added."""

    def in_order(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray], Layout]:
        """The level's keys, the runs let go: every sort key, sorted, and its key's position in
        the level; then the sort keys and the lanes in the level's order, and their layout."""
        run = self.merged()
        sort_key, place = run.sort_key, run.extras[0]
        level_sort_key = np.empty_like(sort_key)
        level_sort_key[place] = sort_key
        lanes = [_trimmed(lane, len(place)) for lane in self.lanes]
        self.lanes = []
        return sort_key, place, level_sort_key, lanes, self.layout

    def _empty(self) -> Visited:
        return _PlacedRun(self)


def in_sort_order(layout: Layout, lanes: list[np.ndarray], w: int, place: np.ndarray) -> np.ndarray:
    """Word w of a level's keys (bit-packed by `layout` into `lanes`, in the level's order)
    gathered in sort-key order: the key at sort position i is at position place[i]."""
    return layout.unpack(w, lanes, len(place))[place]


def _trimmed(a: np.ndarray, size: int) -> np.ndarray:
    """`a`'s first `size` elements, without the room it was grown with (in place when it owns
    its memory: a view would keep the whole buffer)."""
    if a.flags.owndata and a.base is None:
        a.resize(size, refcheck=False)
        return a
    return a[:size].copy()
