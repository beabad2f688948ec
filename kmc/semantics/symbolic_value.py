"""The values model code computes with under the z3 engine: z3 terms that bring their operands
to one sort.

Model code uses Python operators on fields (`o < s.log_end`, `s.hw + 1`, `sum(flags)`), and
the scalar and vector backends accept them all: a sum of booleans is a count, a boolean
compared with 1 is its 0/1 value. Bare z3 terms do not: z3 sums `Bool`s as unbounded `Int`s
and refuses to compare those (or a `Bool`, or a bit-vector of another width) with a
bit-vector ("sort mismatch"). `Sym` wraps a term so that every operator first coerces both
operands, the same way for every model:

- a z3 `Bool` (or a Python bool) used in arithmetic or compared with a number is its 0/1
  value, a bit-vector of the backend's width;
- bit-vectors of different widths are sign-extended to the wider one;
- Python ints are constants of the other operand's width;
- two booleans compared with `==` / `!=` stay booleans.

The engine unwraps `Sym`s at the boundary (guards, effects, invariants: kmc/engines/symbolic/encoding.py)
with `raw`, so the solver only ever sees plain z3 terms.
"""

from __future__ import annotations

from typing import Any, Callable

import z3


class Sym:
    """A z3 term (bit-vector or Bool) with operators that coerce their operands to one sort;
    `width` is the bit-vector width a Bool becomes when it is used as a number."""

    __slots__ = ("term", "width")

    def __init__(self, term: z3.ExprRef, width: int):
        self.term = term
        self.width = width

    def __repr__(self) -> str:
        return f"Sym({self.term})"

    def __bool__(self) -> bool:
        """Only a constant has a truth value: a branch on the state must go through `X.ite`
        (the contract check of kmc/contract/traced.py names such branches before encoding)."""
        if z3.is_true(self.term):
            return True
        if z3.is_false(self.term):
            return False
        raise z3.Z3Exception(f"a symbolic value has no Python truth value: {self.term}")

    def _lift(self, other: Any, op: Callable[[Any, Any], Any], reflected: bool = False) -> "Sym":
        a, b = numbers(self.term, raw(other), self.width)
        return Sym(op(b, a) if reflected else op(a, b), self.width)

    def __add__(self, o: Any) -> "Sym":
        return self._lift(o, lambda a, b: a + b)

    def __radd__(self, o: Any) -> "Sym":
        return self._lift(o, lambda a, b: a + b, True)

    def __sub__(self, o: Any) -> "Sym":
        return self._lift(o, lambda a, b: a - b)

    def __rsub__(self, o: Any) -> "Sym":
        return self._lift(o, lambda a, b: a - b, True)

    def __mul__(self, o: Any) -> "Sym":
        return self._lift(o, lambda a, b: a * b)

    def __rmul__(self, o: Any) -> "Sym":
        return self._lift(o, lambda a, b: a * b, True)

    def __neg__(self) -> "Sym":
        return Sym(-to_bv(self.term, self.width), self.width)

    def __pos__(self) -> "Sym":
        return Sym(to_bv(self.term, self.width), self.width)

    def __lt__(self, o: Any) -> "Sym":
        return self._lift(o, lambda a, b: a < b)

    def __le__(self, o: Any) -> "Sym":
        return self._lift(o, lambda a, b: a <= b)

    def __gt__(self, o: Any) -> "Sym":
        return self._lift(o, lambda a, b: a > b)

    def __ge__(self, o: Any) -> "Sym":
        return self._lift(o, lambda a, b: a >= b)

    def __eq__(self, o: Any) -> "Sym":  # type: ignore[override]
        return Sym(equal(self.term, raw(o), self.width), self.width)

    def __ne__(self, o: Any) -> "Sym":  # type: ignore[override]
        return Sym(z3.Not(equal(self.term, raw(o), self.width)), self.width)

    __hash__ = None  # type: ignore[assignment]


def raw(x: Any) -> Any:
    """The plain z3 term (or Python value) under `x`, lists unwrapped element by element."""
    if isinstance(x, Sym):
        return x.term
    if isinstance(x, list):
        return [raw(v) for v in x]
    return x


def wrap(x: Any, width: int) -> Any:
    """`x` with every z3 term in it wrapped as a `Sym`; constants stay Python values."""
    if isinstance(x, list):
        return [wrap(v, width) for v in x]
    if isinstance(x, z3.ExprRef):
        return Sym(x, width)
    return x


def to_bv(x: Any, width: int) -> Any:
    """A bit-vector term, or a Python int: a Bool is its 0/1 value at `width` bits."""
    if isinstance(x, z3.BoolRef):
        return z3.If(x, z3.BitVecVal(1, width), z3.BitVecVal(0, width))
    if isinstance(x, z3.BitVecRef):
        return x
    if isinstance(x, z3.ExprRef):
        raise z3.Z3Exception(f"the z3 engine computes on bit-vectors and Bools, not on {x.sort()}: {x}")
    return int(x)


def resize(x: Any, width: int) -> Any:
    """A bit-vector term of exactly `width` bits (sign-extended, or cut: values fit by width_for)."""
    if not isinstance(x, z3.BitVecRef):
        return x
    if x.size() < width:
        return z3.SignExt(width - x.size(), x)
    if x.size() > width:
        return z3.Extract(width - 1, 0, x)
    return x


def numbers(a: Any, b: Any, width: int) -> tuple[Any, Any]:
    """Both operands as numbers of one sort: bit-vectors of the wider width (Bools as 0/1);
    when neither is a term, Python ints."""
    a, b = to_bv(a, width), to_bv(b, width)
    terms = [x for x in (a, b) if isinstance(x, z3.BitVecRef)]
    if not terms:
        return a, b
    common = max(x.size() for x in terms)
    return _as_bv_of(a, common), _as_bv_of(b, common)


def _as_bv_of(x: Any, width: int) -> Any:
    return resize(x, width) if isinstance(x, z3.BitVecRef) else z3.BitVecVal(x, width)


def equal(a: Any, b: Any, width: int) -> Any:
    """a == b: as booleans when both are booleans, else as numbers of one sort."""
    if isinstance(a, (bool, z3.BoolRef)) and isinstance(b, (bool, z3.BoolRef)):
        if not isinstance(a, z3.BoolRef) and not isinstance(b, z3.BoolRef):
            return a == b
        return _bool_term(a) == _bool_term(b)
    x, y = numbers(a, b, width)
    return x == y


def _bool_term(x: Any) -> z3.BoolRef:
    return x if isinstance(x, z3.BoolRef) else z3.BoolVal(bool(x))
