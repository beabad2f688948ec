"""A breadth-first level's states, in the scalar engine's order, held as compactly as the
visited set holds keys.

A state is its packed words (kmc/engines/vector/packing.py). Wide keys (three words or more)
are held as the visited set holds them (kmc/engines/vector/keyset.py): the sort key, and each
other word as its index in that word's dictionary (`WordCodes`), the indices bit-packed as
the visited set packs them (kmc/engines/vector/packed.py), so a level of 3-broker kraft takes
about 42 bytes a state instead of its 47 words' 376. The words of a slice of states are
unpacked and decoded when the slice is expanded. With --symmetry a level holds the states
themselves, not their canonical keys, so it keeps the words. The compiled engine codes wide
keys as one word each (kmc/engines/vector/treecodes.py): its levels hold those codes, 8 bytes
a state, and decode a slice as it is expanded.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from kmc.engines.vector.keyset import KeyFormat
from kmc.engines.vector.wordcodes import WordCodes
from kmc.engines.vector.packed import Layout, Piece, unpack

U64 = np.uint64
# (each word's pieces, the lanes as uint64, each word's dictionary, out): the other words of keys
# whose indices are bit-packed in the lanes, into the rows of out (`unpack_words`, or a native
# kernel: kmc/semantics/compiled/keys.py:KeyKernels.unpack_words)
UnpackWords = Callable[[list[list[Piece]], list[np.ndarray], list[np.ndarray], np.ndarray], None]


def unpack_words(pieces: list[list[Piece]], lanes: list[np.ndarray], values: list[np.ndarray], out: np.ndarray) -> None:
    """The other words of keys whose dictionary indices are bit-packed in `lanes` as `pieces`
    place them, each word's indices unpacked and then read in its dictionary, into the rows of
    `out` (words x n, uint64)."""
    for w, placed in enumerate(pieces):
        np.take(values[w], unpack(placed, lanes, out.shape[1], narrow=False), out=out[w])


class Level:
    """The states of a level: their words (words x states), or their sort keys and coded words,
    in order."""

    def __init__(self, size: int, words: np.ndarray | None = None, coded: tuple[np.ndarray, list[np.ndarray]] | None = None,
                 fmt: KeyFormat | None = None, codes: WordCodes | None = None, layout: Layout | None = None,
                 unpack: UnpackWords = unpack_words, decode: Callable[[np.ndarray], np.ndarray] | None = None,
                 decoded: np.ndarray | None = None):
        self.size = size
        self._words = words
        self._coded = coded  # (sort keys, each word's indices), or with `layout` (sort keys, lanes)
        self._fmt = fmt
        self._codes = codes
        self._layout = layout
        self._unpack = unpack  # bit-packed words to words (with `layout`)
        self._decode = decode  # codes (the one row of `words`) to words
        self._decoded = decoded  # those words (words x states), where a small level keeps them

    @classmethod
    def of_words(cls, words: np.ndarray, decode: Callable[[np.ndarray], np.ndarray] | None = None,
                 decoded: np.ndarray | None = None) -> Level:
        """The level of states given as words (words x states), or as one-word codes (1 x
        states) that `decode` gives the words of (`decoded`: those words, where they are kept)."""
        return cls(words.shape[1], words=words, decode=decode, decoded=decoded)

    @classmethod
    def of_codes(cls, sort_key: np.ndarray, extras: list[np.ndarray], fmt: KeyFormat, codes: WordCodes,
) -> Level:
        """The level of coded keys given in its order."""
        return cls(len(sort_key), coded=(sort_key, extras), fmt=fmt, codes=codes)

    def __len__(self) -> int:
        return self.size

    def _arrays(self) -> list[np.ndarray]:
        if self._words is not None:
            return [self._words]
        assert self._coded is not None
        return [self._coded[0], *self._coded[1]]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self._arrays())

    @property
    def memory_bytes(self) -> int:
        """What it holds in memory (not on disk)."""
        kept = 0 if self._decoded is None else self._decoded.nbytes
        return kept + sum(a.nbytes for a in self._arrays() if not isinstance(a, np.memmap))

    def columns(self) -> list[tuple[str, Callable[[], np.ndarray]]]:
        """Its arrays in the level's order, each by name (`words`, or `sort` and `word-W`) and
        given when called: a checkpoint's frontier files, written one at a time."""
        if self._words is not None:
            words = self._words
            return [("words", lambda: words)]
        assert self._coded is not None
        sort_key, extras = self._coded
        if self._layout is not None:
            layout, lanes = self._layout, extras
            return [("sort", lambda: sort_key),
                    *((f"word-{w}", lambda w=w: layout.unpack(w, lanes, self.size)) for w in range(len(layout.pieces)))]
        return [("sort", lambda: sort_key), *((f"word-{w}", lambda x=x: x) for w, x in enumerate(extras))]

    def store(self, save: Callable[[str, np.ndarray], np.ndarray]) -> None:
        """Hold each array, in the level's order, where `save` (given its name, as `columns`
        names it, and the array) puts it: on disk (kmc/engines/vector/disk.py), or where a
        checkpoint keeps it."""
        held = {name: save(name, gather()) for name, gather in self.columns()}
        if self._words is not None:
            self._words = held["words"]
        elif self._coded is not None:
            assert self._fmt is not None
            self._coded = (held["sort"], [held[f"word-{w}"] for w in range(self._fmt.words - 1)])
            self._layout = None  # each word's indices, as the arrays saved hold them

    def words(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """The packed words (words x states, uint64) of the states from `start` to `stop`."""
        if self._words is not None:
            if self._decoded is not None:
                return self._decoded[:, start:stop]
            if self._decode is not None:
                return self._decode(np.ascontiguousarray(self._words[0, start:stop]))
            return self._words[:, start:stop]
        assert self._coded is not None and self._fmt is not None and self._codes is not None
        sort_key, extras = self._coded
        at = slice(start, stop)
        coded = [x[at] for x in extras]
        words = np.empty((self._fmt.words, len(sort_key[at])), dtype=U64)
        if self._layout is not None:
            self._unpack(self._layout.pieces, self._layout.wide(coded), self._codes.values, words[1:])
        else:
            self._codes.decode_into(coded, words[1:])
        return self._fmt.with_first_word(sort_key[at], words)
