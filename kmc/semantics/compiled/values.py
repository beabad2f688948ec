"""A straight-line program's operations (kmc/semantics/compiled/programs.py) as LLVM
instructions over 64-bit integers (llvmlite's IR builder), on one state's row and one table
row: the values the kernels of emit.py and keys.py are built from. Truth values are `i1`; a
selection is a `select`; a comparison whose operands' ranges decide it is a constant.
"""

from __future__ import annotations

from typing import Sequence

from llvmlite import ir

from kmc.semantics.compiled.programs import Op, Program, Ref

I64 = ir.IntType(64)
I8 = ir.IntType(8)
I1 = ir.IntType(1)
P64 = I64.as_pointer()
P8 = I8.as_pointer()


def c64(v: int) -> ir.Constant:
    return ir.Constant(I64, int(v))


def element(itemsize: int) -> ir.IntType:
    """The integer type of a state's positions in rows of `itemsize` bytes (the level step's
    dtype: int16 for most models, so a kraft row is 3 KB, not 12)."""
    return ir.IntType(8 * itemsize)


def wide(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """A position's value as 64 bits (sign-extended)."""
    return v if v.type == I64 else b.sext(v, I64)


def narrow(b: ir.IRBuilder, v: ir.Value, elem: ir.IntType) -> ir.Value:
    """A 64-bit value stored at a position (checked in range first)."""
    return v if elem == I64 else b.trunc(v, elem)


class Values:
    """A program's operations as instructions, on one state (`row`) and one table row (`trow`)."""

    def __init__(self, b: ir.IRBuilder, p: Program, columns: dict[int, int], row: ir.Value, trow: ir.Value | None,
                 ranges: tuple[Sequence[int], Sequence[int]] | None = None):
        self.b, self.p, self.columns, self.row, self.trow = b, p, columns, row, trow
        self.ranges = ranges  # each position's (lo, hi), when every state read is within them
        self.done: dict[int, ir.Value] = {}  # operation -> its value, once emitted

    def bounds(self, ref: Ref) -> tuple[int, int] | None:
        """The range of an operand known when the kernel is built: a constant's, or a fixed
        position's (with `ranges`)."""
        tag, k = ref
        if tag == "n" or k in self.columns:
            return None
        if tag in ("c", "t"):
            return self.p.slots[k], self.p.slots[k]
        if self.ranges is None:
            return None
        pos = self.p.slots[k]
        return int(self.ranges[0][pos]), int(self.ranges[1][pos])

    def decided(self, o: str, left: Ref, right: Ref) -> bool | None:
        """A comparison's value when the operands' ranges decide it (type-ok's `lo <= x <= hi`
        on a state within its ranges), else None."""
        a, c = self.bounds(left), self.bounds(right)
        if a is None or c is None:
            return None
        below, at_most = a[1] < c[0], a[1] <= c[0]  # every left value below / at most every right one
        above, at_least = a[0] > c[1], a[0] >= c[1]
        equal, apart = a[0] == a[1] == c[0] == c[1], below or above
        table = {"<": (below, at_least), "<=": (at_most, above), ">": (above, at_most), ">=": (at_least, below),
                 "==": (equal, apart), "!=": (apart, equal)}
        true, false = table[o]
        return True if true else False if false else None

    def slot(self, k: int) -> ir.Value:
        c = self.columns.get(k)
        if c is None:
            return c64(self.p.slots[k])
        assert self.trow is not None
        return self.b.load(self.b.gep(self.trow, [c64(c)], inbounds=True))

    def read(self, position: ir.Value) -> ir.Value:
        return wide(self.b, self.b.load(self.b.gep(self.row, [position], inbounds=True)))

    def value(self, ref: Ref) -> ir.Value:
        tag, k = ref
        if tag == "n":
            return self.done[k]
        if tag == "r":
            return self.read(self.slot(k))
        if tag == "t":
            v = self.slot(k)
            return ir.Constant(I1, int(v.constant != 0)) if isinstance(v, ir.Constant) else self.b.icmp_signed("!=", v, c64(0))
        return self.slot(k)

    def int_(self, ref: Ref) -> ir.Value:
        return self.as_int(self.value(ref))

    def as_int(self, v: ir.Value) -> ir.Value:
        return self.b.zext(v, I64) if v.type == I1 else v

    def truth(self, ref: Ref) -> ir.Value:
        v = self.value(ref)
        return v if v.type == I1 else self.b.icmp_signed("!=", v, c64(0))

    def run(self, ops: Sequence[Op], start: int = 0) -> None:
        """Emit operations `start`, `start + 1`, ... (`ops`), each unless emitted already."""
        for k, op in enumerate(ops, start):
            if k not in self.done:
                self.done[k] = self.emit(op)

    def needs(self, ref: Ref) -> list[int]:
        """The operations not emitted yet that `ref`'s value needs, in order."""
        return self.p.needed(ref, self.done)

    def conjuncts(self, ref: Ref) -> list[Ref]:
        """A truth value as the conjuncts whose conjunction it is (nested ones flattened)."""
        if ref[0] == "n" and self.p.ops[ref[1]].op in ("and", "all", "forall"):
            return [c for r in self.p.ops[ref[1]].refs for c in self.conjuncts(r)]
        return [ref]

    def guard(self, fn: ir.Function, false: ir.Block, conjuncts: Sequence[Ref]) -> None:
        """Branch to `false` as soon as one of the guard's `conjuncts` is false, those that need
        the fewest operations first (a guard has no effects: any order gives its value), and
        go on where they hold: most guards fail, most on a few operations."""
        b, p = self.b, self.p
        left = list(conjuncts)
        while left:
            cheapest = min(left, key=lambda r: len(self.needs(r)))
            left.remove(cheapest)
            for k in self.needs(cheapest):
                self.done[k] = self.emit(p.ops[k])
            holds = fn.append_basic_block("holds")
            b.cbranch(self.truth(cheapest), holds, false)
            b.position_at_end(holds)

    def emit(self, op: Op) -> ir.Value:
        b, r, o = self.b, op.refs, op.op
        if o in _ARITH:
            return getattr(b, _ARITH[o])(self.int_(r[0]), self.int_(r[1]))
        if o in COMPARE:
            known = self.decided(o, r[0], r[1])
            if known is not None:
                return ir.Constant(I1, int(known))
            return b.icmp_signed(o, self.int_(r[0]), self.int_(r[1]))
        if o == "neg":
            return b.sub(c64(0), self.int_(r[0]))
        if o in ("and", "all", "forall", "or", "any", "exists"):
            conj = o in ("and", "all", "forall")
            out: ir.Value = ir.Constant(I1, int(conj))
            for x in r:
                out = (b.and_ if conj else b.or_)(out, self.truth(x))
            return out
        if o == "not":
            return b.not_(self.truth(r[0]))
        if o == "implies":
            return b.or_(b.not_(self.truth(r[0])), self.truth(r[1]))
        if o == "iff":
            return b.icmp_unsigned("==", self.truth(r[0]), self.truth(r[1]))
        if o in ("min", "max"):
            out = self.int_(r[0])
            for x in r[1:]:
                y = self.int_(x)
                out = b.select(b.icmp_signed("<" if o == "min" else ">", out, y), out, y)
            return out
        if o == "count":
            out = c64(0)
            for x in r:
                out = b.add(out, b.zext(self.truth(x), I64))
            return out
        if o == "ite":
            pick = self.truth if op.kind == "t" else self.int_
            return b.select(self.truth(r[0]), pick(r[1]), pick(r[2]))
        if o == "at":  # index <= k selects element k: out-of-range indices clip
            pick = self.truth if op.kind == "t" else self.int_
            index, elements = self.int_(r[0]), r[1:]
            out = pick(elements[-1])
            for k in range(len(elements) - 2, -1, -1):
                out = b.select(b.icmp_signed("<=", index, c64(k)), pick(elements[k]), out)
            return out
        if o == "read_at":  # the index clipped to [0, size - 1]
            x = self.int_(r[0])
            x = b.select(b.icmp_signed("<", x, c64(0)), c64(0), x)
            x = b.select(b.icmp_signed(">", x, c64(op.size - 1)), c64(op.size - 1), x)
            return self.read(b.add(self.slot(op.start), x))
        raise AssertionError(o)


_ARITH = {"+": "add", "-": "sub", "*": "mul"}
COMPARE = ("<", "<=", ">", ">=", "==", "!=")

