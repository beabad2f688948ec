"""A counter with a rule that can never apply (its guard asks for a value outside the field's
range): what --coverage flags, and a gate's `fires` catches (tests/test_coverage.py)."""

from __future__ import annotations

from typing import Sequence

from kmc.model.core import NONE, Action, Backend, Bool, Effect, Field, Invariant, Model, Option, Schema, State, StateView, action


class Vacuous(Model):
    name = "vacuous"
    summary = "x climbs from -1 to 3; reset never applies"
    modes = {"plain": "the one mode"}
    options = (Option("mode", "plain", "the one mode", choices=("plain",)),)

    def _build(self) -> None:
        self.schema = Schema([Field("x", lo=NONE, hi=5, doc="the counter; -1 is none")])

    def initial_states(self) -> list[State]:
        return [self.schema.state(x=NONE)]

    def actions(self) -> Sequence[Action]:
        return [self.bump, self.reset]

    @action()
    def bump(self, s: StateView, X: Backend) -> Bool:
        """x goes up by one while it is below 3."""
        return s.x < 3

    @bump.effect
    def _(self, s: StateView, X: Backend) -> Effect:
        return {"x": s.x + 1}

    @action()
    def reset(self, s: StateView, X: Backend) -> Bool:
        """x goes back to none once it passes 3: it never does, so this rule never applies."""
        return s.x > 3

    @reset.effect
    def _(self, s: StateView, X: Backend) -> Effect:
        return {"x": NONE}


def invariants(model: Vacuous) -> list[Invariant]:
    return [Invariant("at-most-3", lambda s, X: s.x <= 3, "x never passes 3")]
