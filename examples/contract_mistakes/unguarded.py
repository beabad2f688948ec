"""The counter without its upper guard: bump takes x past 3, the top of its range."""

from __future__ import annotations

from counter import Counter, invariants  # noqa: F401  (invariants: this model's, found here)
from kmc.model.core import Backend, Bool, StateView


def _always(self: Counter, s: StateView, X: Backend, k: int) -> Bool:
    return True


class UnguardedCounter(Counter):
    name = "unguarded-counter"

    bump = Counter.bump.replace(guard=_always)
