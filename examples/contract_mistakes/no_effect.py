"""The counter with an action whose effect was forgotten: refused when the class is defined."""

from __future__ import annotations

from counter import STEP, Counter, invariants  # noqa: F401  (invariants: this model's, found here)
from kmc.model.core import Backend, Bool, StateView, action


class CounterWithoutEffect(Counter):
    name = "counter-without-effect"

    @action(k=STEP)
    def bump(self, s: StateView, X: Backend, k: int) -> Bool:
        """x goes up by k while it is below 3."""
        return s.x < 3
