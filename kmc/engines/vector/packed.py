"""The visited set with its coded words bit-packed: a key in the bits its dictionaries need.

A wide key's other words are stored as indices into per-word dictionaries
(kmc/engines/vector/wordcodes.py:WordCodes), each index in a whole byte or two. Most take far
fewer bits: on the first 3 million states of 3-broker kraft's shipped configuration, the 46
dictionaries hold 1 to 18,044 values, 265 bits in all, where the bytes took 432. Here every
index takes the bits its dictionary needs, packed into a few unsigned *lanes* (arrays of 8 to
64 bits a key): the visited set takes 8 bytes of sort key and 34 of lanes a state there, where
it took 62.

A word's index is one or more *pieces*, each some bits of a lane, lowest bits first. A
dictionary that outgrows its word's bits gets one more piece for the bits it lacks, in the
free bits of a lane or a new lane: every stored key has zeros there (its index fitted the bits
it had), so nothing stored is rewritten, and the set never holds two copies of itself. While
the set is small it is laid out afresh instead (every word one piece, the widest first, each
in the first lane with room), which rewrites it, cheaply.

Exact, as the set it replaces: the same keys, order and searches (`find`, `merge`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import numpy as np

from kmc.engines.vector.keyset import KeyFormat, New, Visited
from kmc.engines.vector.wordcodes import WordCodes

U64 = np.uint64
LANE_BITS = 64
_RELAYOUT_KEYS = 1 << 22  # a set this small is laid out afresh when a word needs more bits
_BLOCK = 1 << 20  # keys unpacked or packed at a time when the set is laid out afresh

Piece = tuple[int, int, int]  # (lane, shift, bits)


class Layout:
    """Where each word's bits are: its pieces, lowest bits first; each lane's bits in use."""

    def __init__(self, pieces: list[list[Piece]], used: list[int]):
        self.pieces = pieces
        self.used = used

    @classmethod
    def fresh(cls, bits: Sequence[int]) -> Layout:
        """Every word one piece of `bits[w]` bits, the widest first, each in the first lane with room."""
        pieces: list[list[Piece]] = [[] for _ in bits]
        used: list[int] = []
        for w in sorted(range(len(bits)), key=lambda w: -bits[w]):
            if bits[w]:
                pieces[w].append(_place(used, bits[w]))
        return cls(pieces, used)

    def bits(self, w: int) -> int:
        return sum(p[2] for p in self.pieces[w])

    def grown(self, need: Sequence[int]) -> Layout:
        """This layout with one more piece for each word that needs more bits than it has."""
        pieces, used = [list(p) for p in self.pieces], list(self.used)
        for w, b in enumerate(need):
            have = self.bits(w)
            if b > have:
                pieces[w].append(_place(used, b - have))
        return Layout(pieces, used)

    def dtypes(self) -> list[np.dtype]:
        return [_dtype(u) for u in self.used]

    def table(self) -> np.ndarray:
        """The layout as a checkpoint keeps it: a (word, lane, shift, bits) row a piece, flat, int64."""
        return np.array([(w, *p) for w, pieces in enumerate(self.pieces) for p in pieces], dtype=np.int64).reshape(-1)

    @classmethod
    def from_table(cls, table: np.ndarray, words: int) -> Layout:
        """The layout of `words` words a `table` gives; ValueError, saying what is wrong, unless
        its pieces fit lanes of 64 bits without overlapping, every lane has one and no word has
        more than 64 bits."""
        if table.ndim != 1 or table.dtype != np.int64 or len(table) % 4:
            raise ValueError(f"{table.dtype}{list(table.shape)} is not rows of (word, lane, shift, bits), int64")
        pieces: list[list[Piece]] = [[] for _ in range(words)]
        spans: dict[int, list[tuple[int, int]]] = {}
        for w, lane, shift, bits in table.reshape(-1, 4).tolist():
            if not (0 <= w < words and 0 <= lane < len(table) and shift >= 0 and bits >= 1 and shift + bits <= LANE_BITS):
                raise ValueError(f"a piece out of range (word {w}, lane {lane}, shift {shift}, bits {bits}; "
                                 f"{words} words, lanes of {LANE_BITS} bits)")
            pieces[w].append((lane, shift, bits))
            spans.setdefault(lane, []).append((shift, shift + bits))
        if sorted(spans) != list(range(len(spans))):
            raise ValueError("a lane that holds no piece")
        for lane, held in spans.items():
            held.sort()
            if any(a[1] > b[0] for a, b in zip(held, held[1:])):
                raise ValueError(f"two pieces overlap in lane {lane}")
        if any(sum(p[2] for p in ps) > LANE_BITS for ps in pieces):
            raise ValueError(f"a word of more than {LANE_BITS} bits")
        return cls(pieces, [max(end for _, end in spans[lane]) for lane in range(len(spans))])

    def pack(self, w: int, codes: np.ndarray, lanes: list[np.ndarray] | dict[int, np.ndarray]) -> None:
        """Add word w's indices `codes` into `lanes` (zero where its pieces go; given as a dict,
        only the lanes it holds)."""
        x = codes.astype(U64, copy=False)
        low = 0
        for lane, shift, bits in self.pieces[w]:
            if isinstance(lanes, list) or lane in lanes:
                part = (x >> U64(low)) & U64((1 << bits) - 1) if len(self.pieces[w]) > 1 else x
                lanes[lane] |= (part << U64(shift)).astype(lanes[lane].dtype, copy=False)
            low += bits

    def lane(self, lane: int, words: Sequence[New], n: int) -> np.ndarray:
        """Lane `lane` of n keys whose words' indices are `words` (arrays, or functions that make
        them, called only for the words with a piece in this lane)."""
        out = {lane: np.zeros(n, dtype=_dtype(self.used[lane]))}
        for w, x in enumerate(words):
            if any(p[0] == lane for p in self.pieces[w]):
                self.pack(w, x() if callable(x) else x, out)
        return out[lane]

    def unpack(self, w: int, lanes: Sequence[np.ndarray], n: int, narrow: bool = True) -> np.ndarray:
        """Word w's indices from `lanes` (n keys; faster given as uint64: `wide`), in the narrowest
        dtype that holds them (or, not `narrow`, as uint64)."""
        return unpack(self.pieces[w], lanes, n, narrow)

    def row_dtype(self) -> np.dtype:
        """A key's lanes side by side, as a checkpoint's level keeps them: a search on disk reads
        a key's lanes in one page, where a file a lane took a page of each."""
        return np.dtype([(f"lane-{lane}", dt) for lane, dt in enumerate(self.dtypes())])

    def rows(self, lanes: Sequence[New], n: int, out: np.ndarray | None = None) -> np.ndarray:
        """n keys' lanes (arrays, or functions that make them, called one at a time) as rows of
        `row_dtype`, in `out` if given (a file's mapping: the rows then take no memory of their own)."""
        out = np.empty(n, dtype=self.row_dtype()) if out is None else out
        for lane, x in enumerate(lanes):
            out[f"lane-{lane}"] = x() if callable(x) else x
        return out

    def of_rows(self, rows: np.ndarray) -> list[np.ndarray]:
        """The lanes of rows of `row_dtype` (views, not copies)."""
        return [rows[f"lane-{lane}"] for lane in range(len(self.used))]

    @staticmethod
    def wide(lanes: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Lanes as uint64, to unpack many words from."""
        return [a.astype(U64, copy=False) for a in lanes]


def unpack(pieces: Sequence[Piece], lanes: Sequence[np.ndarray], n: int, narrow: bool = True) -> np.ndarray:
    """The indices of a word placed as `pieces` in `lanes` (n keys): `Layout.unpack`."""
    if not pieces:
        return np.zeros(n, dtype=np.uint8 if narrow else U64)
    out: np.ndarray | None = None
    low = 0
    for lane, shift, bits in pieces:
        part = lanes[lane].astype(U64, copy=False) >> U64(shift)
        part &= U64((1 << bits) - 1)
        if out is None:
            out = part
        else:
            part <<= U64(low)
            out |= part
        low += bits
    assert out is not None
    return out.astype(_dtype(low), copy=False) if narrow else out


def _place(used: list[int], bits: int) -> Piece:
    """A piece of `bits` bits in the first lane with room (a new lane if none has)."""
    for lane, u in enumerate(used):
        if u + bits <= LANE_BITS:
            used[lane] = u + bits
            return lane, u, bits
    used.append(bits)
    return len(used) - 1, 0, bits


def _dtype(bits: int) -> np.dtype:
    """The narrowest unsigned dtype of `bits` bits or more: a lane's, an unpacked index's."""
    return np.dtype(np.uint8 if bits <= 8 else np.uint16 if bits <= 16 else np.uint32 if bits <= 32 else U64)


def needed(codes: WordCodes) -> list[int]:
    """The bits of each word's indices: enough for every value its dictionary holds."""
    return [max(len(v) - 1, 0).bit_length() for v in codes.values]


class PackedVisited(Visited):
    """`Visited` over coded keys, their indices bit-packed into lanes (`Layout`), which it stores
    where the plain set stores each word's indices."""

    def __init__(self, fmt: KeyFormat, codes: WordCodes):
        super().__init__(fmt, [])
        self.codes = codes
        self.layout = Layout([[] for _ in range(fmt.words - 1)], [])

    @classmethod
    def over(cls, fmt: KeyFormat, codes: WordCodes, layout: Layout, sort_key: np.ndarray,
             lanes: list[np.ndarray]) -> PackedVisited:
        """The set of keys given sorted, their indices in `lanes` as `layout` packs them (arrays
        mapped read-only too: a checkpoint's level as a run on disk, kmc/engines/vector/disk.py)."""
        v = cls(fmt, codes)
        v._sort_key, v._extras, v.layout, v.n = sort_key, list(lanes), layout, len(sort_key)
        return v

    def __getstate__(self) -> dict:
        return {"fmt": self.fmt, "n": self.n, "_sort_key": self.sort_key.copy(), "codes": self.codes,
                "layout": self.layout, "_extras": [a.copy() for a in self.lanes]}

    @property
    def lanes(self) -> list[np.ndarray]:
        return [a[: self.n] for a in self._extras]

    @property
    def extras(self) -> Sequence[np.ndarray]:
        """Every word's indices, a word unpacked when it is read (a spill writes them one at a time)."""
        return _Unpacked(self)

    @property
    def nbytes(self) -> int:
        return self.sort_key.nbytes + sum(a.nbytes for a in self.lanes)

    def stored(self, at: np.ndarray, count: int) -> list[np.ndarray]:
        lanes = self.layout.wide([a[at] for a in self.lanes])
        return [self.layout.unpack(w, lanes, len(at), narrow=False) for w in range(count)]

    def widen(self, w: int, dtype: np.dtype) -> None:
        """Nothing to do: the keys stored fit their bits; the next merge makes room for more."""

    def _incoming(self, extras: Sequence[New], m: int) -> Sequence[New]:
        """New keys' indices packed into lanes, the layout first given room for every index the
        dictionaries hold."""
        self._fit(needed(self.codes))
        lanes = [np.zeros(m, dtype=dt) for dt in self.layout.dtypes()]
        for w, x in enumerate(extras):  # a word at a time: given as functions, each is made when packed
            self.layout.pack(w, x() if callable(x) else x, lanes)
        return lanes

    def _fit(self, need: list[int]) -> None:
        """Room in the layout for indices of `need[w]` bits."""
        if all(b <= self.layout.bits(w) for w, b in enumerate(need)):
            return
        self.layout, self._extras = refitted(self.layout, self._extras, need, len(self._sort_key), self.n,
                                             afresh=self.n <= _RELAYOUT_KEYS)


def refitted(layout: Layout, lanes: list[np.ndarray], need: Sequence[int], room: int, stored: int, *,
             afresh: bool) -> tuple[Layout, list[np.ndarray]]:
    """A layout with room for indices of `need[w]` bits, and `lanes` (`room` keys long, the first
    `stored` packed by `layout`) as it packs them: `afresh`, every word one piece and every stored
    key packed again, a block at a time; otherwise one more piece for each word that needs more
    bits, in free bits (zero in every stored key) or a new lane, nothing stored rewritten."""
    if not afresh:
        fitted = layout.grown(need)
        return fitted, [np.zeros(room, dtype=dt) if lane >= len(lanes) else lanes[lane].astype(dt, copy=False)
                        for lane, dt in enumerate(fitted.dtypes())]
    fitted = Layout.fresh(need)
    out = [np.zeros(room, dtype=dt) for dt in fitted.dtypes()]
    for start in range(0, stored, _BLOCK):
        size = min(_BLOCK, stored - start)
        block = layout.wide([a[start:start + size] for a in lanes])
        part = [np.zeros(size, dtype=dt) for dt in fitted.dtypes()]
        for w in range(len(fitted.pieces)):
            fitted.pack(w, layout.unpack(w, block, size), part)
        for a, p in zip(out, part):
            a[start:start + size] = p
    return fitted, out


class _Unpacked(Sequence[np.ndarray]):
    """A packed set's words, each unpacked when it is read."""

    def __init__(self, of: PackedVisited):
        self.of = of

    def __len__(self) -> int:
        return len(self.of.layout.pieces)

    @overload
    def __getitem__(self, w: int) -> np.ndarray: ...

    @overload
    def __getitem__(self, w: slice) -> list[np.ndarray]: ...

    def __getitem__(self, w: int | slice) -> np.ndarray | list[np.ndarray]:
        if isinstance(w, slice):
            return [self[i] for i in range(len(self))[w]]
        if not 0 <= w < len(self):
            raise IndexError(w)
        return self.of.layout.unpack(w, self.of.lanes, self.of.n)
