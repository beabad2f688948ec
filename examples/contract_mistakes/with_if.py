"""The counter with a Python `if` on the state in its guard: the contract check refuses it."""

from __future__ import annotations

from counter import Counter, invariants  # noqa: F401  (invariants: this model's, found here)


class CounterWithIf(Counter):
    name = "counter-with-if"

    bump = Counter.bump.replace(guard=lambda self, s, X, k: True if s.x < 3 else False)
