"""The vector interpretation: fields are numpy int arrays, one entry per state of a batch.

An index outside an array gives its nearest element (`at`) or changes nothing (`set_at`);
models guard such reads, as every backend evaluates both sides of `ite`.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence, TypeVar

import numpy as np

from kmc.semantics.tree import ite_tree

T = TypeVar("T")


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
        if a is b:  # both branches the same value (a CASE arm that leaves an element alone)
            return a
        if type(a) is list:
            return [self.ite(c, x, y) for x, y in zip(a, b)]
        if _scalar(c):
            return a if c else b
        if c.dtype != np.bool_:
            c = c != 0
        if _is_bool(a) and _is_bool(b):
            return np.logical_or(np.logical_and(c, a), np.logical_and(np.logical_not(c), b))
        if _scalar(a) and _scalar(b):
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

    def iff(self, a: Any, b: Any) -> Any:
        a, b = _truth(a), _truth(b)
        if np.ndim(a) == 0 and np.ndim(b) == 0:
            return bool(a) == bool(b)
        return np.equal(a, b)

    def forall(self, xs: Iterable[T], fn: Callable[[T], Any]) -> Any:
        return self.and_(*[fn(x) for x in xs])

    def exists(self, xs: Iterable[T], fn: Callable[[T], Any]) -> Any:
        return self.or_(*[fn(x) for x in xs])

    def count(self, xs: Iterable[Any]) -> Any:
        """The number of true flags, as an int column (or an int when every flag is a constant)."""
        out: Any = 0
        for x in xs:
            x = _truth(x)
            if np.ndim(x) == 0:
                out = out + (1 if x else 0)
            else:
                out = out + x.astype(self.dtype)
        return out


def _truth(x: Any) -> Any:
    """x as a truth value: bool arrays and constants as they are, an int column as x != 0."""
    if isinstance(x, np.ndarray) and x.dtype != np.bool_:
        return x != 0
    return x


def _scalar(x: Any) -> bool:
    """np.ndim(x) == 0, without its dispatch: a Python or numpy scalar, or a 0-d array."""
    return not isinstance(x, np.ndarray) or x.ndim == 0


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


def level_dtype(lo: Sequence[int], hi: Sequence[int]) -> np.dtype:
    """The smallest of int16, int32, int64 that holds every value (int16 at least, so that
    model arithmetic on small fields does not wrap): the dtype engines give `Vector`."""
    for dt in (np.int16, np.int32):
        info = np.iinfo(dt)
        if min(lo) >= info.min and max(hi) <= info.max:
            return np.dtype(dt)
    return np.dtype(np.int64)
