"""The tracing interpretation: fields are opaque terms whose truth value cannot be asked for.

Running a model under it shows that no action or invariant branches on state with a Python
`if`, `and`, `or`, `not`, `min` or `max`, indexes a list by a state value, or looks a state
value up in a dict or a set (kmc/contract/traced.py). Concrete indices are clipped (`at`)
or ignored when out of range (`set_at`) as in the other interpretations.

What it cannot see is code that never asks a term anything: `s.x is -1`, `isinstance(s.x,
int)`, `type(s.x)`. The differential check (kmc/contract/differential.py) catches those.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from kmc.semantics.tree import ite_tree


class DataDependentBranch(TypeError):
    """Model code asked for the truth value of a state-dependent term."""


class Term:
    """A state-dependent value under the tracing backend: arithmetic and comparison give
    new terms; `bool()`, `int()`, use as a list index and hashing (a dict key, a set member)
    are refused.

    A term is a leaf (a state position, `args` None, `op` its name) or an operation over
    terms and constants: a Python operator (`op` "+", "<", ..., two args), "neg", or a lifted
    operation by its name ("ite", "and", "at", ...). Its text is built when first shown;
    kmc/semantics/compiled/ reads the structure."""

    __slots__ = ("op", "args", "_text")

    def __init__(self, op: str, args: tuple[Any, ...] | None = None):
        self.op = op
        self.args = args
        self._text: str | None = op if args is None else None

    @property
    def text(self) -> str:
        if self._text is None:
            a = self.args or ()
            if self.op in OPERATORS:
                self._text = f"({a[0]!r} {self.op} {a[1]!r})"
            elif self.op == "neg":
                self._text = f"-{a[0]!r}"
            else:
                self._text = f"{self.op}({', '.join(map(repr, a))})"
        return self._text

    def __repr__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        raise DataDependentBranch(f"truth value of state-dependent term {self.text} asked for")

    def __index__(self) -> int:
        raise DataDependentBranch(f"state-dependent term {self.text} used as an index (use X.at)")

    def __int__(self) -> int:
        raise DataDependentBranch(f"state-dependent term {self.text} converted to int")

    def __hash__(self) -> int:
        raise DataDependentBranch(f"state-dependent term {self.text} used as a dict key or set member")

    def _op(self, op: str, other: Any, swap: bool = False) -> Term:
        return Term(op, (other, self) if swap else (self, other))

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
    def __neg__(self) -> Term: return Term("neg", (self,))


OPERATORS = ("+", "-", "*", "<", "<=", ">", ">=", "==", "!=")


class Tracing:
    """Fields as Terms; every lifted operation builds a Term."""

    name = "tracing"

    @staticmethod
    def _call(op: str, *xs: Any) -> Term:
        return Term(op, xs)

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
            return array[min(max(index, 0), len(array) - 1)]
        return self._call("at", list(array), index)

    def set_at(self, array: Sequence[Any], index: Any, value: Any) -> list[Any]:
        if isinstance(index, int):
            out = list(array)
            if 0 <= index < len(out):
                out[index] = value
            return out
        return [ite_tree(self, index == i, value, a) for i, a in enumerate(array)]

    def all(self, xs: Iterable[Any]) -> Any:
        return self._call("all", *list(xs))

    def any(self, xs: Iterable[Any]) -> Any:
        return self._call("any", *list(xs))

    def iff(self, a: Any, b: Any) -> Any:
        return self._call("iff", a, b)

    def forall(self, xs: Iterable[Any], fn: Any) -> Any:
        return self._call("forall", *[fn(x) for x in xs])

    def exists(self, xs: Iterable[Any], fn: Any) -> Any:
        return self._call("exists", *[fn(x) for x in xs])

    def count(self, xs: Iterable[Any]) -> Any:
        return self._call("count", *list(xs))


TRACING = Tracing()
