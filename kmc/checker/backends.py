"""Interpretations of the lifted operations that model code calls through `X`.

- `Scalar`: fields are Python ints; the reference engines, trace replay and tests use it.
- `Vector`: fields are numpy int arrays, one entry per state of a batch; the vector engine.
- `Tracing`: fields are opaque terms whose truth value cannot be asked for; running a model
  under it proves that no action or invariant branches on state with a Python `if`.

An index outside an array gives an unspecified element of it (`at`) or changes nothing
(`set_at`); models guard such reads, as every backend evaluates both sides of `ite`.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np


class Scalar:
    """Fields as Python ints and bools."""

    name = "scalar"

    @staticmethod
    def ite(c: Any, a: Any, b: Any) -> Any:
        return a if c else b

    @staticmethod
    def and_(*xs: Any) -> bool:
        return all(xs)

    @staticmethod
    def or_(*xs: Any) -> bool:
        return any(xs)

    @staticmethod
    def not_(x: Any) -> bool:
        return not x

    @staticmethod
    def implies(a: Any, b: Any) -> bool:
        return (not a) or bool(b)

    @staticmethod
    def min_(*xs: Any) -> Any:
        return min(xs)

    @staticmethod
    def max_(*xs: Any) -> Any:
        return max(xs)

    @staticmethod
    def at(array: Sequence[Any], index: Any) -> Any:
        return array[min(max(index, 0), len(array) - 1)]

    @staticmethod
    def set_at(array: Sequence[Any], index: Any, value: Any) -> list[Any]:
        out = list(array)
        if 0 <= index < len(out):
            out[index] = value
        return out

    @staticmethod
    def all(xs: Iterable[Any]) -> bool:
        return all(xs)

    @staticmethod
    def any(xs: Iterable[Any]) -> bool:
        return any(xs)


SCALAR = Scalar()


def ite_tree(X: Any, c: Any, a: Any, b: Any) -> Any:
    """`X.ite` applied leaf by leaf to equally shaped nested lists (rows of an array)."""
    if isinstance(a, list):
        return [ite_tree(X, c, x, y) for x, y in zip(a, b)]
    return X.ite(c, a, b)


class DataDependentBranch(TypeError):
    """Model code asked for the truth value of a state-dependent term."""


class Term:
    """A state-dependent value under the tracing backend: arithmetic and comparison give
    new terms; `bool()`, `int()` and use as a list index are refused."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        raise DataDependentBranch(f"truth value of state-dependent term {self.text} asked for")

    def __index__(self) -> int:
        raise DataDependentBranch(f"state-dependent term {self.text} used as an index (use X.at)")

    def __int__(self) -> int:
        raise DataDependentBranch(f"state-dependent term {self.text} converted to int")

    __hash__ = object.__hash__

    def _op(self, op: str, other: Any, swap: bool = False) -> Term:
        a, b = (other, self) if swap else (self, other)
        return Term(f"({a} {op} {b})")

    def __add__(self, o: Any) -> Term: return self._op("+", o)
    def __radd__(self, o: Any) -> Term: return self._op("+", o, True)
    def __sub__(self, o: Any) -> Term: return self._op("-", o)
    def __rsub__(self, o: Any) -> Term: return self._op("-", o, True)
    def __mul__(self, o: Any) -> Term: return self._op("*", o)
    def __rmul__(self, o: Any) -> Term: return self._op("*", o, True)
    def __lt__(self, o: Any) -> Term: return self._op("<", o)
    def __le__(self, o: Any) -> Term: return self._op("<=", o)
    def __gt__(self, o: Any) -> Term: return self._op(">", o)
    def __ge__(self, o: Any) -> Term: return self._op(">=", o)
    def __eq__(self, o: Any) -> Term: return self._op("==", o)  # type: ignore[override]
    def __ne__(self, o: Any) -> Term: return self._op("!=", o)  # type: ignore[override]
    def __neg__(self) -> Term: return Term(f"-{self}")


class Tracing:
    """Fields as Terms; every lifted operation builds a Term."""

    name = "tracing"

    @staticmethod
    def _call(op: str, *xs: Any) -> Term:
        return Term(f"{op}({', '.join(map(repr, xs))})")

    def ite(self, c: Any, a: Any, b: Any) -> Any:
        return self._call("ite", c, a, b)

    def and_(self, *xs: Any) -> Any:
        return self._call("and", *xs)

    def or_(self, *xs: Any) -> Any:
        return self._call("or", *xs)

    def not_(self, x: Any) -> Any:
        return self._call("not", x)

    def implies(self, a: Any, b: Any) -> Any:
        return self._call("implies", a, b)

    def min_(self, *xs: Any) -> Any:
        return self._call("min", *xs)

    def max_(self, *xs: Any) -> Any:
        return self._call("max", *xs)

    def at(self, array: Sequence[Any], index: Any) -> Any:
        if isinstance(index, int):
            return array[index]
        return self._call("at", list(array), index)

    def set_at(self, array: Sequence[Any], index: Any, value: Any) -> list[Any]:
        return [ite_tree(self, index == i, value, a) for i, a in enumerate(array)]

    def all(self, xs: Iterable[Any]) -> Any:
        return self._call("all", *list(xs))

    def any(self, xs: Iterable[Any]) -> Any:
        return self._call("any", *list(xs))


TRACING = Tracing()


class Vector:
    """Fields as numpy int arrays, one entry per state of a batch (a BFS level).

    Comparisons give bool arrays; a guard or an invariant may also give a plain Python bool
    (a constant), which the engine broadcasts. `ite` selects arithmetically (`b + c * (a - b)`,
    exact in wrap-around integer arithmetic): numpy's `where` is many times slower on the
    unpredictable masks of a state space. Two constants are selected into an array of
    `dtype`, the engine's level dtype, so that results stay small integers.
    """

    name = "vector"

    def __init__(self, dtype: Any = np.int16):
        self.dtype = np.dtype(dtype)

    def ite(self, c: Any, a: Any, b: Any) -> Any:
        if isinstance(a, list):
            return [self.ite(c, x, y) for x, y in zip(a, b)]
        if np.ndim(c) == 0:
            return a if c else b
        if c.dtype != np.bool_:
            c = c != 0
        if _is_bool(a) and _is_bool(b):
            return np.logical_or(np.logical_and(c, a), np.logical_and(np.logical_not(c), b))
        if np.ndim(a) == 0 and np.ndim(b) == 0:
            if a == b:
                return a
            return c.astype(self.dtype) * self.dtype.type(a - b) + self.dtype.type(b)
        if _is_bool(a):
            a = np.asarray(a, dtype=self.dtype)
        if _is_bool(b):
            b = np.asarray(b, dtype=self.dtype)
        return b + c * (a - b)

    def and_(self, *xs: Any) -> Any:
        return _fold(np.logical_and, True, xs)

    def or_(self, *xs: Any) -> Any:
        return _fold(np.logical_or, False, xs)

    def not_(self, x: Any) -> Any:
        if np.ndim(x) == 0:
            return not x
        return np.logical_not(x)

    def implies(self, a: Any, b: Any) -> Any:
        return self.or_(self.not_(a), b)

    def min_(self, *xs: Any) -> Any:
        out = xs[0]
        for x in xs[1:]:
            out = min(out, x) if np.ndim(out) == 0 and np.ndim(x) == 0 else np.minimum(out, x)
        return out

    def max_(self, *xs: Any) -> Any:
        out = xs[0]
        for x in xs[1:]:
            out = max(out, x) if np.ndim(out) == 0 and np.ndim(x) == 0 else np.maximum(out, x)
        return out

    def at(self, array: Sequence[Any], index: Any) -> Any:
        n = len(array)
        if np.ndim(index) == 0:
            return array[min(max(int(index), 0), n - 1)]
        if isinstance(array[0], list):
            return [self.at([row[j] for row in array], index) for j in range(len(array[0]))]
        out = array[n - 1]
        for k in range(n - 2, -1, -1):  # index <= k selects array[k]: out-of-range indices clip
            out = self.ite(index <= k, array[k], out)
        return out

    def set_at(self, array: Sequence[Any], index: Any, value: Any) -> list[Any]:
        if np.ndim(index) == 0:
            out = list(array)
            if 0 <= index < len(out):
                out[int(index)] = value
            return out
        return [ite_tree(self, index == i, value, a) for i, a in enumerate(array)]

    def all(self, xs: Iterable[Any]) -> Any:
        return self.and_(*xs)

    def any(self, xs: Iterable[Any]) -> Any:
        return self.or_(*xs)


def _is_bool(x: Any) -> bool:
    return isinstance(x, (bool, np.bool_)) or (isinstance(x, np.ndarray) and x.dtype == np.bool_)


def _fold(op: Any, unit: bool, xs: Sequence[Any]) -> Any:
    """`op` (logical and / or) over arrays and constants; a constant equal to `not unit`
    decides alone. Intermediate results are written in place once they are our own."""
    out: Any = None
    owned = False
    for x in xs:
        if np.ndim(x) == 0:
            if bool(x) != unit:
                return not unit
            continue
        if out is None:
            out = x
        elif owned:
            op(out, x, out=out)
        else:
            out, owned = op(out, x), True
    return unit if out is None else out


VECTOR = Vector()
