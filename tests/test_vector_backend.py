"""The Vector backend computes, element by element, what the Scalar backend computes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kmc.semantics.scalar import SCALAR
from kmc.semantics.vector import Vector

X = Vector(np.int16)
N = 6
ints = st.lists(st.integers(-3, 5), min_size=N, max_size=N)
bools = st.lists(st.booleans(), min_size=N, max_size=N)


def col(values: list) -> np.ndarray:
    return np.array(values, dtype=bool if isinstance(values[0], bool) else np.int16)


def per_row(result, n: int = N) -> list:
    """A vector result (array, constant, or nested list of those) as one Python value per row."""
    if isinstance(result, list):
        return [list(t) for t in zip(*[per_row(r, n) for r in result])]
    arr = np.broadcast_to(np.asarray(result), (n,))
    return [v.item() for v in arr]


@settings(max_examples=100, deadline=None)
@given(bools, ints, ints, st.integers(-3, 5))
def test_ite_on_arrays_and_constants(c, a, b, k) -> None:
    for x, y in [(col(a), col(b)), (col(a), k), (k, col(b)), (k, k + 1), (k, k)]:
        got = per_row(X.ite(col(c), x, y))
        want = [SCALAR.ite(ci, x if np.ndim(x) == 0 else x[i], y if np.ndim(y) == 0 else y[i]) for i, ci in enumerate(c)]
        assert got == want
    assert X.ite(True, col(a), k) is not None and per_row(X.ite(False, col(a), k)) == [k] * N


@settings(max_examples=100, deadline=None)
@given(bools, bools, bools)
def test_logic_with_constants_broadcast(a, b, c) -> None:
    for args in [(col(a), col(b), col(c)), (col(a), True, col(b)), (True, col(a)), (True, True), (col(a),)]:
        rows = [[x if np.ndim(x) == 0 else x[i] for x in args] for i in range(N)]
        assert per_row(X.and_(*args)) == [SCALAR.and_(*r) for r in rows]
        assert per_row(X.or_(*args)) == [SCALAR.or_(*r) for r in rows]
        assert per_row(X.all(args)) == [SCALAR.all(r) for r in rows]
        assert per_row(X.any(args)) == [SCALAR.any(r) for r in rows]
    assert X.and_(col(a), False) is False and X.or_(col(a), True) is True
    assert per_row(X.not_(col(a))) == [not x for x in a]
    assert per_row(X.implies(col(a), col(b))) == [SCALAR.implies(x, y) for x, y in zip(a, b)]
    inputs = col(a)
    X.and_(inputs, col(b), col(c))
    assert per_row(inputs) == a  # the caller's arrays are never written


@settings(max_examples=100, deadline=None)
@given(ints, ints, st.integers(-3, 5))
def test_min_max(a, b, k) -> None:
    assert per_row(X.min_(col(a), col(b), k)) == [min(x, y, k) for x, y in zip(a, b)]
    assert per_row(X.max_(col(a), k)) == [max(x, k) for x in a]
    assert X.min_(3, 4) == 3


@settings(max_examples=100, deadline=None)
@given(st.lists(ints, min_size=1, max_size=4), st.lists(st.integers(-2, 5), min_size=N, max_size=N), ints)
def test_at_clips_and_set_at_ignores_out_of_range(array, index, value) -> None:
    columns = [col(r) for r in array]
    idx = col(index)
    got = per_row(X.at(columns, idx))
    assert got == [SCALAR.at([r[i] for r in array], index[i]) for i in range(N)]
    out = X.set_at(columns, idx, col(value))
    assert [per_row(c) for c in out] == [
        [SCALAR.set_at([r[i] for r in array], index[i], value[i])[j] for i in range(N)] for j in range(len(array))
    ]
    for k in (-1, 0, len(array)):  # a concrete index
        assert per_row(X.at(columns, k)) == [SCALAR.at([r[i] for r in array], k) for i in range(N)]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(ints, ints), min_size=1, max_size=3), st.lists(st.integers(-1, 3), min_size=N, max_size=N))
def test_at_and_set_at_on_rows(rows, index) -> None:
    """Nested arrays (rows of a 2-D field) are read and written whole."""
    nested = [[col(a), col(b)] for a, b in rows]
    idx = col(index)
    got = per_row(X.at(nested, idx))
    assert got == [SCALAR.at([[a[i], b[i]] for a, b in rows], index[i]) for i in range(N)]
    new_row = [col([7] * N), col([8] * N)]
    out = X.set_at(nested, idx, new_row)
    for i in range(N):
        want = SCALAR.set_at([[a[i], b[i]] for a, b in rows], index[i], [7, 8])
        assert [[per_row(x)[i] for x in r] for r in out] == want
