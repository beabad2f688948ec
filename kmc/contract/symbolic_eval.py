"""z3 terms evaluated on concrete states, many at once: the differential check's view of
what the symbolic engine's terms mean on a state (kmc/contract/outcomes.py).

The terms are concatenated into bit-vectors of at most CHUNK_BITS bits (a Bool as one
unsigned bit, a number as a signed bit-vector); a state's values are its numbers substituted
for the state's constants and simplified to numerals, one substitution per chunk.
"""

from __future__ import annotations

from typing import Any, Sequence

import z3

from kmc.model.core import State


class PackedTerms:
    """Terms over `consts` packed into chunks (see the module docstring), evaluated together
    on a state by substituting its numbers for the constants; Python constants are kept
    aside. The substitution goes through z3's C API
    with the constants' array built once: z3.substitute checks every pair's sorts in Python,
    which costs more than the substitution itself."""

    def __init__(self, consts: Sequence[z3.BitVecRef]) -> None:
        self.consts = list(consts)
        self.width = consts[0].size() if consts else 1
        self.terms: list[z3.BitVecRef] = []
        self.signed: list[bool] = []
        self.slots: list[tuple[bool, int]] = []  # (is a term, its index or the constant)
        self.numerals: dict[int, z3.BitVecNumRef] = {}
        self._chunks: list[tuple[z3.BitVecRef, int, int]] | None = None

    def add(self, x: Any) -> int:
        """A slot for a Bool, a bit-vector or a Python constant."""
        if isinstance(x, z3.BoolRef):
            self.terms.append(z3.If(x, z3.BitVecVal(1, 1), z3.BitVecVal(0, 1)))
            self.signed.append(False)
        elif isinstance(x, z3.BitVecRef):
            self.terms.append(x)
            self.signed.append(True)
        else:
            self.slots.append((False, int(x)))
            return len(self.slots) - 1
        self._chunks = None  # packed again on the next evaluation
        self.slots.append((True, len(self.terms) - 1))
        return len(self.slots) - 1

    def values(self, state: State) -> list[int]:
        """Every slot's value on `state`."""
        if self._chunks is None:
            self._chunks = self._pack()
            self._from = (z3.Ast * len(self.consts))(*(c.as_ast() for c in self.consts))
        n = len(self.consts)
        to = (z3.Ast * n)()
        for i, v in enumerate(state):
            if v not in self.numerals:
                self.numerals[v] = z3.BitVecVal(v, self.width)
            to[i] = self.numerals[v].as_ast()
        decoded: list[int] = []
        for whole, first, last in self._chunks:
            ctx = whole.ctx
            number = z3.simplify(z3.BitVecRef(z3.Z3_substitute(ctx.ref(), whole.as_ast(), n, self._from, to), ctx))
            if not z3.is_bv_value(number):
                raise ValueError(f"z3 left a term unevaluated: {number}")
            bits = number.as_long()
            values = [0] * (last - first)
            for k in range(last - 1, first - 1, -1):  # the last term holds the lowest bits
                size = self._sizes[k]
                v = bits & ((1 << size) - 1)
                bits >>= size
                values[k - first] = v - (1 << size) if self.signed[k] and v >> (size - 1) else v
            decoded += values
        return [decoded[v] if is_term else v for is_term, v in self.slots]

    def _pack(self) -> list[tuple[z3.BitVecRef, int, int]]:
        """The terms concatenated in chunks of at most CHUNK_BITS bits (z3 prints a long
        numeral in time quadratic in its length): (chunk, first term, end)."""
        self._sizes = [t.size() for t in self.terms]
        chunks: list[tuple[z3.BitVecRef, int, int]] = []
        first = 0
        while first < len(self.terms):
            last, bits = first, 0
            while last < len(self.terms) and (last == first or bits + self._sizes[last] <= CHUNK_BITS):
                bits += self._sizes[last]
                last += 1
            part = self.terms[first:last]
            chunks.append((part[0] if len(part) == 1 else z3.Concat(*part), first, last))
            first = last
        return chunks


CHUNK_BITS = 512
