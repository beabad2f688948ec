"""The z3 backend brings every operand to one sort, as the scalar backend's Python arithmetic
does implicitly: a sum of Bools, a Bool compared with a number, bit-vectors of different
widths. The independent source is the Scalar backend (plain Python ints and bools): each
expression, evaluated over z3 terms and then at concrete values, equals the scalar value."""

from __future__ import annotations

from itertools import product
from typing import Any, Callable

import pytest

import kmc
import z3

from kmc.semantics.scalar import Scalar
from kmc.engines.result import Progress
from kmc.semantics.symbolic import Symbolic, as_int, to_z3_bool
from kmc.semantics.symbolic_value import Sym
from kmc.cli.progress import ProgressPrinter

X = Symbolic(5)
A, B = z3.BitVec("a", 5), z3.BitVec("b", 8)  # two widths: the model's, and a wider one

EXPRESSIONS: dict[str, Callable[[Any, Any, Any], Any]] = {
    # transactions' exactly-once: a count of Bools against an ite of Python ints
    "sum of bools == ite": lambda a, b, X: sum([X.and_(a < 2, b > 0), X.or_(a == b), X.not_(b < 1)])
    == X.ite(a < b, 1, 0),
    "count <= 1": lambda a, b, X: sum(X.and_(a <= k, k < b) for k in range(-2, 3)) <= 1,
    "mixed widths": lambda a, b, X: a + b - 1,
    "wide on the left": lambda a, b, X: b - a < a * 2,
    "bool == int": lambda a, b, X: (a < b) == 1,
    "bool == bool": lambda a, b, X: X.and_(a > 0) == (b > 0),
    "bool in arithmetic": lambda a, b, X: (a < b) + (b < a) + 1,
    "ite of bool and number": lambda a, b, X: X.ite(a > 0, X.and_(b > 0), b),
    "ite of two widths": lambda a, b, X: X.ite(a == 0, a, b) + 0,
    "max and min": lambda a, b, X: X.max_(a, b, 1) - X.min_(0, b, a),
    "at with a bool index": lambda a, b, X: X.at([a, b, 3], b > a),
    "set_at, wide index": lambda a, b, X: X.set_at([0, a, 2], b, a > 0)[1],
}
VALUES = range(-3, 4)


def _value(x: Any, at: list[tuple[Any, Any]]) -> int:
    term = z3.simplify(z3.substitute(as_int(x, 8), *at)) if isinstance(x, Sym) else as_int(x, 8)
    return term.as_signed_long() if isinstance(term, z3.BitVecNumRef) else int(term)


@pytest.mark.parametrize("name", EXPRESSIONS)
def test_mixed_sorts_compute_what_the_scalar_backend_computes(name: str) -> None:
    f = EXPRESSIONS[name]
    lifted = f(Sym(A, 5), Sym(B, 5), X)  # raises z3's "sort mismatch" without the coercions
    for a, b in product(VALUES, VALUES):
        at = [(A, z3.BitVecVal(a, 5)), (B, z3.BitVecVal(b, 8))]
        assert _value(lifted, at) == int(f(a, b, Scalar())), (name, a, b)


def test_a_symbolic_value_has_no_python_truth_value() -> None:
    with pytest.raises(z3.Z3Exception):
        bool(Sym(A, 5) < 1)
    assert to_z3_bool(Sym(A, 5) == Sym(A, 5)) is not None


def test_z3_progress_counts_steps_not_states(capsys) -> None:
    """The z3 engine enumerates no states: its progress line says how deep it has checked."""
    printer = ProgressPrinter("transactions kip98", capabilities=kmc.ENGINES["z3"].capabilities)
    printer(Progress(4, 0, 0, 0, 2.5, figures={"steps checked": 3}))
    err = capsys.readouterr().err
    assert "3 steps checked" in err and "states" not in err.replace("steps", "")
    assert "3 steps checked" in printer.interrupted() and "distinct states" not in printer.interrupted()
