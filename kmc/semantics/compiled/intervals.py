"""The values a template's operations can take on states within their positions' ranges: an
interval per operand, known when the kernel is built (kmc/semantics/compiled/emit.py).

The engines hold only states within their positions' ranges (a write out of range stops the
run), so a write whose value's interval lies within its position's range needs no check at run
time: a copy between positions of one range, a constant, a count of a few truths. Slots that a
template's table gives (a position, a constant) take the hull of their column's values.
"""

from __future__ import annotations

from typing import Sequence

from kmc.semantics.compiled.programs import Ref, Template

Interval = tuple[int, int]


class Intervals:
    """Per operand of `tpl`'s program, the interval of its values on states within `lo`..`hi`
    (per position), or None where it is not known (an operation with no rule here)."""

    def __init__(self, tpl: Template, lo: Sequence[int], hi: Sequence[int]):
        self.p, self.lo, self.hi = tpl.program, lo, hi
        self.columns = tpl.columns
        self.table = tpl.table
        self._done: dict[int, Interval | None] = {}

    def slot_values(self, k: int) -> list[int]:
        """The values slot k takes: its one value, or its table column's."""
        c = self.columns.get(k)
        return [self.p.slots[k]] if c is None else [row[c] for row in self.table]

    def position_range(self, positions: Sequence[int]) -> Interval:
        """The hull of the ranges of `positions`."""
        return min(int(self.lo[j]) for j in positions), max(int(self.hi[j]) for j in positions)

    def target(self, pos_slot: int) -> Interval:
        """The range every position a write's slot names shares (the intersection)."""
        at = self.slot_values(pos_slot)
        return max(int(self.lo[j]) for j in at), min(int(self.hi[j]) for j in at)

    def within(self, write: tuple[int, Ref]) -> bool:
        """Whether a write's value is within its position's range on every state in range."""
        pos_slot, ref = write
        have, allowed = self.of(ref), self.target(pos_slot)
        return have is not None and allowed[0] <= have[0] and have[1] <= allowed[1]

    def of(self, ref: Ref) -> Interval | None:
        tag, k = ref
        if tag == "t":
            return 0, 1
        if tag == "c":
            values = self.slot_values(k)
            return min(values), max(values)
        if tag == "r":
            return self.position_range(self.slot_values(k))
        if k not in self._done:
            for j in self.p.needed(ref, self._done):  # operands before their users: no deep recursion
                self._done[j] = self._op(j)
        return self._done[k]

    def _op(self, k: int) -> Interval | None:
        op = self.p.ops[k]
        if op.kind == "t":
            return 0, 1
        o, r = op.op, op.refs
        if o == "read_at":
            starts = self.slot_values(op.start)
            return self.position_range([s + d for s in starts for d in range(op.size)])
        if o == "count":
            return 0, len(r)
        args = [self.of(x) for x in (r[1:] if o in ("ite", "at") else r)]
        if any(a is None for a in args):
            return None
        xs = [a for a in args if a is not None]
        if o == "+":
            return xs[0][0] + xs[1][0], xs[0][1] + xs[1][1]
        if o == "-":
            return xs[0][0] - xs[1][1], xs[0][1] - xs[1][0]
        if o == "*":
            ends = [a * c for a in xs[0] for c in xs[1]]
            return min(ends), max(ends)
        if o == "neg":
            return -xs[0][1], -xs[0][0]
        if o in ("min", "max", "ite", "at"):  # one of the operands' values
            if o == "min":
                return min(a[0] for a in xs), min(a[1] for a in xs)
            if o == "max":
                return max(a[0] for a in xs), max(a[1] for a in xs)
            return min(a[0] for a in xs), max(a[1] for a in xs)
        return None
