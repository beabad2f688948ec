"""Exact packing of states into unsigned 64-bit words, and back.

A state's flat positions are the digits of a mixed-radix number: position j holds
`value - lo` in radix `hi - lo + 1`. Positions are taken in schema order, the first one most
significant, and cut greedily into words whose largest value fits in 64 bits: one word when
the whole state fits, two (or more) otherwise. Comparing packed words lexicographically
compares states as tuples, and two states get the same words exactly when they are equal:
no hashing, no fingerprints, no collisions.

A `Layout` says where each position's digit goes (which word, which multiplier) and how its
value is mapped first: the identity layout is plain packing; the symmetry reduction packs
states under permuted layouts (kmc/engines/symmetry.py). Packing a batch is one
multiply-add per position over all states (`pack_columns`); the vector engine also derives
a successor's words from its parent's by adding `(new - old) * multiplier` for the few
positions an action changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from kmc.errors import BadInput
from kmc.model.core import Schema

WORD_BITS = 64
U64 = np.uint64


@dataclass(frozen=True)
class Layout:
    """Where the digit of each flat position goes: `word[j]`, `mult[j]`; positions in
    `mapped` first have their value v replaced by `table[v - table_lo]`."""

    lo: np.ndarray  # (D,) int64: the range start of each position
    word: np.ndarray  # (D,) int64
    mult: np.ndarray  # (D,) uint64
    words: int
    mapped: np.ndarray  # positions whose values are mapped (int64, possibly empty)
    table: np.ndarray  # value map over [table_lo, table_lo + len(table)), int64
    table_lo: int = 0

    def pack_columns(self, columns: np.ndarray | Sequence[np.ndarray]) -> np.ndarray:
        """Words (words x N, uint64) of N states given as D columns of N values."""
        n = len(columns[0])
        out = np.zeros((self.words, n), dtype=U64)
        mapped = set(self.mapped.tolist())
        tmp = np.empty(n, dtype=U64)
        for j in range(len(self.lo)):
            col = columns[j]
            if j in mapped:
                col = self.table[np.asarray(col, dtype=np.int64) - self.table_lo]
            np.subtract(col, int(self.lo[j]), out=tmp, casting="unsafe", dtype=np.int64)
            np.multiply(tmp, self.mult[j], out=tmp)
            np.add(out[self.word[j]], tmp, out=out[self.word[j]])
        return out

    def pack_state(self, state: Sequence[int]) -> tuple[int, ...]:
        """The words of one state, as Python ints."""
        out = [0] * self.words
        mapped = set(self.mapped.tolist())
        for j, value in enumerate(state):
            v = int(value)
            if j in mapped:
                v = int(self.table[v - self.table_lo])
            out[self.word[j]] += (v - int(self.lo[j])) * int(self.mult[j])
        return tuple(out)


class Packing:
    """The mixed-radix packing of a schema's states (or of any ranges lo[j]..hi[j])."""

    def __init__(self, lo: Sequence[int], hi: Sequence[int], *, what: str = "state"):
        if len(lo) != len(hi) or not lo:
            raise ValueError("packing needs one (lo, hi) range per position, and at least one")
        for j, (a, b) in enumerate(zip(lo, hi)):
            if a > b:
                raise ValueError(f"position {j}: empty range [{a}, {b}]")
            if a < -(2**63) or b >= 2**63:
                raise BadInput(f"position {j} of the {what} ranges over [{a}, {b}]: "
                               "packing needs values that fit in 64-bit signed integers")
        self.lo = np.array(lo, dtype=np.int64)
        self.hi = np.array(hi, dtype=np.int64)
        radix = [h - l + 1 for l, h in zip(lo, hi)]
        self.radix = radix
        self.bits = sum(math.log2(r) for r in radix)
        # greedy cut: a word takes positions while the product of their radices fits 64 bits
        spans: list[tuple[int, int]] = []
        start, size = 0, 1
        for j, r in enumerate(radix):
            if size * r > 2**WORD_BITS:
                spans.append((start, j))
                start, size = j, 1
            size *= r
        spans.append((start, len(radix)))
        self.spans = spans
        self.words = len(spans)
        self.word_bits = [(math.prod(radix[s:e]) - 1).bit_length() for s, e in spans]
        word = np.empty(len(radix), dtype=np.int64)
        mult = np.empty(len(radix), dtype=U64)
        for w, (s, e) in enumerate(spans):
            m = 1
            for j in range(e - 1, s - 1, -1):  # the last position of a word is least significant
                word[j], mult[j] = w, m
                m *= radix[j]
        self.identity = Layout(self.lo, word, mult, self.words, np.zeros(0, np.int64), np.zeros(0, np.int64))

    @classmethod
    def for_schema(cls, schema: Schema) -> Packing:
        return cls(schema.lo, schema.hi)

    @property
    def word(self) -> np.ndarray:
        return self.identity.word

    @property
    def mult(self) -> np.ndarray:
        return self.identity.mult

    def describe(self) -> str:
        widths = " + ".join(str(b) for b in self.word_bits)
        return f"{len(self.radix)} positions, {self.bits:.1f} bits of ranges, {self.words} word(s) of {widths} bits"

    # -- packing -----------------------------------------------------------------------

    def pack(self, block: np.ndarray) -> np.ndarray:
        """Words (words x N, uint64) of a block of N states (N x D)."""
        return self.identity.pack_columns(np.asarray(block).T)

    def pack_columns(self, columns: np.ndarray | Sequence[np.ndarray]) -> np.ndarray:
        return self.identity.pack_columns(columns)

    def pack_state(self, state: Sequence[int]) -> tuple[int, ...]:
        return self.identity.pack_state(state)

    # -- unpacking ---------------------------------------------------------------------

    def unpack(self, words: np.ndarray, dtype: type = np.int64) -> np.ndarray:
        """The block (N x D) of states packed in `words` (words x N)."""
        return np.ascontiguousarray(self.unpack_columns(words, dtype).T)

    def unpack_columns(self, words: np.ndarray, dtype: Any = np.int64) -> np.ndarray:
        """The columns (D x N) of the states packed in `words` (words x N)."""
        words = np.asarray(words, dtype=U64)
        out: np.ndarray = np.empty((len(self.radix), words.shape[1]), dtype=dtype)
        for w, (s, e) in enumerate(self.spans):
            rest = words[w].copy()
            for j in range(e - 1, s - 1, -1):
                r = int(self.radix[j])
                if r & (r - 1) == 0:  # a power of two: a mask and a shift, several times faster than a division
                    np.add(rest & U64(r - 1), self.lo[j], out=out[j], casting="unsafe")
                    rest >>= U64(r.bit_length() - 1)
                else:
                    rest, digit = np.divmod(rest, U64(r))
                    np.add(digit, self.lo[j], out=out[j], casting="unsafe")
        return out

    def unpack_state(self, words: Sequence[int]) -> tuple[int, ...]:
        out = [0] * len(self.radix)
        for w, (s, e) in enumerate(self.spans):
            rest = int(words[w])
            for j in range(e - 1, s - 1, -1):
                rest, digit = divmod(rest, self.radix[j])
                out[j] = digit + int(self.lo[j])
        return tuple(out)
