"""A counter that climbs from -1 (none) to 3, written correctly: the base of the two
mistakes beside it (docs/writing-models.md, section 3)."""

from __future__ import annotations

from typing import Sequence

from kmc.model.core import (
    NONE, Action, Backend, Bool, Domain, Effect, Field, Invariant, Model, Option, Schema, State, StateView, action,
)

STEP = Domain(lambda m: (1,))


class Counter(Model):
    name = "counter"
    summary = "x climbs from -1 to 3"
    modes = {"plain": "the one mode"}
    options = (Option("mode", "plain", "the one mode", choices=("plain",)),)

    def _build(self) -> None:
        self.schema = Schema([Field("x", lo=NONE, hi=3, doc="the counter; -1 is none")])

    def initial_states(self) -> list[State]:
        return [self.schema.state(x=NONE)]

    def actions(self) -> Sequence[Action]:
        return [self.bump]

    @action(k=STEP)
    def bump(self, s: StateView, X: Backend, k: int) -> Bool:
        """x goes up by k while it is below 3."""
        return s.x < 3

    @bump.effect
    def _(self, s: StateView, X: Backend, k: int) -> Effect:
        return {"x": s.x + k}


def invariants(model: Counter) -> list[Invariant]:
    return [Invariant("at-most-3", lambda s, X: s.x <= 3, "x never passes 3")]
