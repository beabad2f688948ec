"""The counter with `is` on the state in its guard: tracing cannot see it (it asks the term
nothing), the differential check can (scalar says True on x = -1, vector and z3 say False)."""

from __future__ import annotations

from counter import Counter, invariants  # noqa: F401  (invariants: this model's, found here)
from kmc.model.core import NONE, Backend, Bool, StateView


def _guard(self: Counter, s: StateView, X: Backend, k: int) -> Bool:
    return (s.x is NONE) or X.and_(s.x >= 0, s.x < 3)


class CounterWithIs(Counter):
    name = "counter-with-is"

    bump = Counter.bump.replace(guard=_guard)
