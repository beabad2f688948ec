"""The counter with an action that `actions()` does not list: engines would never explore it."""

from __future__ import annotations

from counter import Counter, invariants  # noqa: F401  (invariants: this model's, found here)
from kmc.model.core import Backend, Bool, Effect, StateView, action


class CounterWithReset(Counter):
    name = "counter-with-reset"

    @action()
    def reset(self, s: StateView, X: Backend) -> Bool:
        """x goes back to none once it reached 3."""
        return s.x == 3

    @reset.effect
    def _(self, s: StateView, X: Backend) -> Effect:
        return {"x": -1}
