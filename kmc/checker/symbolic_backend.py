"""The lifted operations over z3 terms: the fourth interpretation of model code.

A field is a z3 signed bit-vector (or a Python int when it is a constant); comparisons give z3 `Bool`s
(or Python bools between constants). Every operation folds constants the way `Scalar` would,
so a guard that does not depend on the state stays a Python bool and costs the solver nothing.

`at` with a state-dependent index is an if-then-else chain that clips out-of-range indices
exactly as `Scalar.at` does (index <= 0 reads the first element, index >= n - 1 the last):
the symbolic transition relation must be the scalar one, term for term, or a z3 trace would
not replay. Booleans used as values (an effect writing `X.and_(...)` into a 0/1 field) become
0/1 integers.

z3 itself refuses `bool()` on most terms, but returns a structural answer for `a == b`;
the symbolic engines therefore run the contract check (kmc/checker/contract.py, the tracing
backend) on a model before encoding it, which refuses every data-dependent branch by name.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import z3


def is_term(x: Any) -> bool:
    return isinstance(x, z3.ExprRef)


def is_bool_term(x: Any) -> bool:
    return isinstance(x, z3.BoolRef)


def as_bool(x: Any) -> Any:
    """A z3 Bool or a Python bool; a 0/1 integer term is read as its truth value."""
    if isinstance(x, z3.BoolRef):
        return x
    if isinstance(x, z3.BitVecRef):
        return x != 0
    return bool(x)


def as_int(x: Any, width: int) -> Any:
    """A bit-vector term or a Python int; a Bool becomes 0/1."""
    if isinstance(x, z3.BoolRef):
        return z3.If(x, z3.BitVecVal(1, width), z3.BitVecVal(0, width))
    if isinstance(x, z3.ExprRef):
        return x
    return int(x)


def width_for(lo: int, hi: int) -> int:
    """Bits of a signed bit-vector that holds every value in [2 lo - 2, 2 hi + 2]: the
    fields, and the +1, -1, differences and small sums models compute on them."""
    bound = max(abs(2 * lo - 2), abs(2 * hi + 2), 2)
    return bound.bit_length() + 1


def to_z3_bool(x: Any) -> z3.BoolRef:
    b = as_bool(x)
    return b if isinstance(b, z3.BoolRef) else z3.BoolVal(b)


class Symbolic:
    """Fields as signed bit-vector terms of `width` bits; operations build z3 expressions,
    folding constants."""

    name = "z3"

    def __init__(self, width: int):
        self.width = width

    def ite(self, c: Any, a: Any, b: Any) -> Any:
        if isinstance(a, list):
            return [self.ite(c, x, y) for x, y in zip(a, b)]
        c = as_bool(c)
        if not isinstance(c, z3.BoolRef):
            return a if c else b
        if not is_term(a) and not is_term(b) and a == b and type(a) is type(b):
            return a
        if _is_boolish(a) and _is_boolish(b):
            return z3.If(c, to_z3_bool(a), to_z3_bool(b))
        a, b = as_int(a, self.width), as_int(b, self.width)
        if is_term(a) and is_term(b) and a.eq(b):
            return a
        if not is_term(a):  # z3 would read two Python ints as Int terms: keep the bit-vector sort
            a = z3.BitVecVal(a, self.width)
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
        return terms[0] if len(terms) == 1 else z3.And(*terms)

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
        return terms[0] if len(terms) == 1 else z3.Or(*terms)

    def not_(self, x: Any) -> Any:
        x = as_bool(x)
        return z3.Not(x) if isinstance(x, z3.BoolRef) else not x

    def implies(self, a: Any, b: Any) -> Any:
        return self.or_(self.not_(a), b)

    def min_(self, *xs: Any) -> Any:
        out = xs[0]
        for x in xs[1:]:
            out = min(out, x) if not is_term(out) and not is_term(x) else self.ite(x < out, x, out)
        return out

    def max_(self, *xs: Any) -> Any:
        out = xs[0]
        for x in xs[1:]:
            out = max(out, x) if not is_term(out) and not is_term(x) else self.ite(x > out, x, out)
        return out

    def at(self, array: Sequence[Any], index: Any) -> Any:
        n = len(array)
        if not is_term(index):
            return array[min(max(int(index), 0), n - 1)]
        if isinstance(array[0], list):
            return [self.at([row[j] for row in array], index) for j in range(len(array[0]))]
        out = array[n - 1]
        for k in range(n - 2, -1, -1):  # index <= k selects array[k]: out-of-range indices clip
            out = self.ite(index <= k, array[k], out)
        return out

    def set_at(self, array: Sequence[Any], index: Any, value: Any) -> list[Any]:
        if not is_term(index):
            out = list(array)
            if 0 <= index < len(out):
                out[int(index)] = value
            return out
        return [self.ite(index == i, value, a) for i, a in enumerate(array)]

    def all(self, xs: Iterable[Any]) -> Any:
        return self.and_(*xs)

    def any(self, xs: Iterable[Any]) -> Any:
        return self.or_(*xs)


def _is_boolish(x: Any) -> bool:
    return isinstance(x, (bool, z3.BoolRef))

