"""The lifted operations over z3 terms: the fourth interpretation of model code.

A field is a z3 signed bit-vector (or a Python int when it is a constant), wrapped as a `Sym`
(kmc/semantics/symbolic_value.py) so that Python operators in model code bring their operands
to one sort; comparisons give z3 `Bool`s (or Python bools between constants). Every operation folds constants the way `Scalar` would,
so a guard that does not depend on the state stays a Python bool and costs the solver nothing.

`at` with a state-dependent index is an if-then-else chain that clips out-of-range indices
exactly as `Scalar.at` does (index <= 0 reads the first element, index >= n - 1 the last):
the symbolic transition relation must be the scalar one, term for term, or a z3 trace would
not replay. Booleans used as values (an effect writing `X.and_(...)` into a 0/1 field) become
0/1 integers.

z3 itself refuses `bool()` on most terms, but returns a structural answer for `a == b`;
the symbolic engines therefore run the contract check (kmc/contract/traced.py, the tracing
backend) on a model before encoding it, which refuses every data-dependent branch by name.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence, TypeVar

import z3

from kmc.model.core import Schema
from kmc.semantics.symbolic_value import numbers, raw, resize, to_bv, wrap

T = TypeVar("T")


def is_term(x: Any) -> bool:
    return isinstance(raw(x), z3.ExprRef)


def is_bool_term(x: Any) -> bool:
    return isinstance(raw(x), z3.BoolRef)


def as_bool(x: Any) -> Any:
    """A z3 Bool or a Python bool; a 0/1 integer term is read as its truth value."""
    x = raw(x)
    if isinstance(x, z3.BoolRef):
        return x
    if isinstance(x, z3.BitVecRef):
        return x != 0
    return bool(x)


def as_int(x: Any, width: int) -> Any:
    """A bit-vector term of `width` bits or a Python int; a Bool becomes 0/1."""
    return resize(to_bv(raw(x), width), width)


def width_for(lo: int, hi: int) -> int:
    """Bits of a signed bit-vector that holds every value in [2 lo - 2, 2 hi + 2]: the
    fields, and the +1, -1, differences and small sums models compute on them."""
    bound = max(abs(2 * lo - 2), abs(2 * hi + 2), 2)
    return bound.bit_length() + 1


def schema_width(schema: Schema) -> int:
    """The width engines give `Symbolic` for a schema: every field's range, and counts of up
    to the largest field's size (sums of flags)."""
    n = max(f.size for f in schema.fields)
    return width_for(min(schema.lo, default=0), max(*schema.hi, n))


def to_z3_bool(x: Any) -> z3.BoolRef:
    b = as_bool(x)
    return b if isinstance(b, z3.BoolRef) else z3.BoolVal(b)


class Symbolic:
    """Fields as signed bit-vector terms of `width` bits (wrapped as `Sym`, so that Python
    operators in model code coerce sorts); operations build z3 expressions, folding constants.
    Every method takes `Sym`s, plain terms or Python values, and returns `Sym`s or Python values."""

    name = "z3"

    def __init__(self, width: int):
        self.width = width

    def wrap(self, x: Any) -> Any:
        return wrap(x, self.width)

    def ite(self, c: Any, a: Any, b: Any) -> Any:
        return self.wrap(self._ite(as_bool(c), raw(a), raw(b)))

    def _ite(self, c: Any, a: Any, b: Any) -> Any:
        if isinstance(a, list):
            return [self._ite(c, x, y) for x, y in zip(a, b)]
        if not isinstance(c, z3.BoolRef):
            return a if c else b
        if not is_term(a) and not is_term(b) and a == b and type(a) is type(b):
            return a
        if _is_boolish(a) and _is_boolish(b):
            return z3.If(c, to_z3_bool(a), to_z3_bool(b))
        a, b = numbers(a, b, self.width)  # one sort: Bools as 0/1, the wider width
        if is_term(a) and is_term(b) and a.eq(b):
            return a
        if not is_term(a):  # z3 would read two Python ints as Int terms: keep the bit-vector sort
            a = z3.BitVecVal(a, b.size() if is_term(b) else self.width)
        return z3.If(c, a, b)

    def and_(self, *xs: Any) -> Any:
        terms = []
        for x in xs:
            x = as_bool(x)
            if isinstance(x, z3.BoolRef):
                terms.append(x)
            elif not x:
                return False
        if not terms:
            return True
        return self.wrap(terms[0] if len(terms) == 1 else z3.And(*terms))

    def or_(self, *xs: Any) -> Any:
        terms = []
        for x in xs:
            x = as_bool(x)
            if isinstance(x, z3.BoolRef):
                terms.append(x)
            elif x:
                return True
        if not terms:
            return False
        return self.wrap(terms[0] if len(terms) == 1 else z3.Or(*terms))

    def not_(self, x: Any) -> Any:
        x = as_bool(x)
        return self.wrap(z3.Not(x)) if isinstance(x, z3.BoolRef) else not x

    def implies(self, a: Any, b: Any) -> Any:
        return self.or_(self.not_(a), b)

    def min_(self, *xs: Any) -> Any:
        return self._extreme(xs, lambda x, out: x < out, min)

    def max_(self, *xs: Any) -> Any:
        return self._extreme(xs, lambda x, out: x > out, max)

    def _extreme(self, xs: Sequence[Any], better: Any, fold: Any) -> Any:
        out = raw(xs[0])
        for x in map(raw, xs[1:]):
            if not is_term(out) and not is_term(x):
                out = fold(out, x)
            else:
                x, out = numbers(x, out, self.width)
                out = self._ite(better(x, out), x, out)
        return self.wrap(out)

    def at(self, array: Sequence[Any], index: Any) -> Any:
        return self.wrap(self._at(raw(list(array)), raw(index)))

    def _at(self, array: Sequence[Any], index: Any) -> Any:
        n = len(array)
        if not is_term(index):
            return array[min(max(int(index), 0), n - 1)]
        if isinstance(array[0], list):
            return [self._at([row[j] for row in array], index) for j in range(len(array[0]))]
        index = to_bv(index, self.width)
        out = array[n - 1]
        for k in range(n - 2, -1, -1):  # index <= k selects array[k]: out-of-range indices clip
            out = self._ite(index <= k, array[k], out)
        return out

    def set_at(self, array: Sequence[Any], index: Any, value: Any) -> list[Any]:
        index = raw(index)
        if not is_term(index):
            out = list(array)
            if 0 <= index < len(out):
                out[int(index)] = value
            return out
        index, value = to_bv(index, self.width), raw(value)
        return [self.wrap(self._ite(index == i, value, raw(a))) for i, a in enumerate(array)]

    def all(self, xs: Iterable[Any]) -> Any:
        return self.and_(*xs)

    def any(self, xs: Iterable[Any]) -> Any:
        return self.or_(*xs)

    def iff(self, a: Any, b: Any) -> Any:
        a, b = as_bool(a), as_bool(b)
        if not isinstance(a, z3.BoolRef) and not isinstance(b, z3.BoolRef):
            return a == b
        return self.wrap(to_z3_bool(a) == to_z3_bool(b))

    def forall(self, xs: Iterable[T], fn: Callable[[T], Any]) -> Any:
        return self.and_(*[fn(x) for x in xs])

    def exists(self, xs: Iterable[T], fn: Callable[[T], Any]) -> Any:
        return self.or_(*[fn(x) for x in xs])

    def count(self, xs: Iterable[Any]) -> Any:
        """The number of true flags: a bit-vector of the backend's width (an int when every flag is
        a constant)."""
        known = 0
        terms = []
        for x in xs:
            b = as_bool(x)
            if isinstance(b, z3.BoolRef):
                terms.append(to_bv(b, self.width))
            elif b:
                known += 1
        if not terms:
            return known
        out = terms[0]
        for t in terms[1:]:
            out = out + t
        return self.wrap(out + known if known else out)


def _is_boolish(x: Any) -> bool:
    return isinstance(x, (bool, z3.BoolRef))

