"""Liveness properties under fairness (kmc/model/temporal.py, kmc/engines/liveness/).

A three-state ring (x: 0 -> 1 -> 2 -> 0 by `inc` and `reset`) with a `hit` step enabled only
at x = 1 gives every form and both kinds of fairness a verdict worked out by hand in the
comments; both explicit engines must give it, and the lassos must replay (kmc.check replays
each one through the scalar interpretation and checks it is fair and violating)."""

from __future__ import annotations

import pytest

import kmc
from kmc.api import check
from kmc.errors import BadInput
from kmc.model.core import Action, Backend, Bool, Effect, Field, Model, Option, Schema, StateView, action
from kmc.model.temporal import (
    Property, always_eventually, eventually, eventually_always, leads_to, strong, weak,
)
from kmc.traces import lasso


class Ring(Model):
    name = "ring"
    summary = "a counter going round 0, 1, 2, and a flag set at 1"
    modes = {"only": "the one mode"}
    options = (Option("mode", "only", "mode", choices=("only",)),)

    def _build(self) -> None:
        self.schema = Schema([Field("x", lo=0, hi=2), Field("y", lo=0, hi=1)])

    def initial_states(self) -> list[tuple[int, ...]]:
        return [self.schema.state(x=0, y=0)]

    def actions(self) -> list[Action]:
        return [self.inc, self.reset, self.hit]

    @action()
    def inc(self, s: StateView, X: Backend) -> Bool:
        """x goes up."""
        return s.x < 2

    @inc.effect
    def _(self, s: StateView, X: Backend) -> Effect:
        return {"x": s.x + 1}

    @action()
    def reset(self, s: StateView, X: Backend) -> Bool:
        """x goes back to 0."""
        return s.x == 2

    @reset.effect
    def _(self, s: StateView, X: Backend) -> Effect:
        return {"x": 0}

    @action()
    def hit(self, s: StateView, X: Backend) -> Bool:
        """y is set, only while x is 1."""
        return X.and_(s.x == 1, s.y == 0)

    @hit.effect
    def _(self, s: StateView, X: Backend) -> Effect:
        return {"y": 1}


RING = (weak("inc"), weak("reset"))


def props(*fair_hit: object) -> list[Property]:
    fair = RING + tuple(fair_hit)  # type: ignore[operator]

    @eventually("y-set", fair=fair)
    def y_set(m: Ring, s: StateView, X: Backend) -> Bool:
        return s.y == 1

    return [y_set(Ring())]


def verdict(prop: Property, engine: str) -> tuple[bool | None, int | None, int | None]:
    """(holds, steps to the cycle, cycle steps: 0 for stuttering)."""
    result = check(Ring(), [], engine=engine, properties=[prop])
    v = result.properties[prop.name]
    if v.trace is None:
        return v.holds, None, None
    t = v.trace
    assert t.loop is not None
    return v.holds, t.loop, 0 if t.stutters else t.length - t.loop


def make(form: str, fair: tuple, fn) -> Property:  # type: ignore[no-untyped-def]
    decl = {"eventually": eventually, "leads_to": leads_to, "always_eventually": always_eventually,
            "eventually_always": eventually_always}[form]
    return decl("p", fair=fair)(fn)(Ring())


CASES = [
    # <>(y = 1) with no fairness: the run may stutter in the initial state
    ("eventually", (), lambda m, s, X: s.y == 1, (False, 0, 0)),
    # WF(inc), WF(reset): the run goes round for ever; hit is enabled only at x = 1, so even
    # WF(hit) does not force it: the cycle inc, inc, reset from the initial state
    ("eventually", RING, lambda m, s, X: s.y == 1, (False, 0, 3)),
    ("eventually", RING + (weak("hit"),), lambda m, s, X: s.y == 1, (False, 0, 3)),
    # SF(hit): enabled infinitely often (at each x = 1), so taken
    ("eventually", RING + (strong("hit"),), lambda m, s, X: s.y == 1, (True, None, None)),
    # x = 2 ~> x = 0: without WF(reset) the run may stop at x = 2 (two steps in)
    ("leads_to", (weak("inc"),), lambda m, s, X: (s.x == 2, s.x == 0), (False, 2, 0)),
    ("leads_to", RING, lambda m, s, X: (s.x == 2, s.x == 0), (True, None, None)),
    # []<>(x = 2): stuttering at the start violates it; going round satisfies it
    ("always_eventually", (), lambda m, s, X: s.x == 2, (False, 0, 0)),
    ("always_eventually", RING, lambda m, s, X: s.x == 2, (True, None, None)),
    # <>[](x = 0): going round from the start visits x = 1 for ever (a shorter prefix than stuttering at x = 1)
    ("eventually_always", (), lambda m, s, X: s.x == 0, (False, 0, 3)),
    ("eventually_always", RING, lambda m, s, X: s.x == 0, (False, 0, 3)),
    # <>[](x < 3) holds trivially
    ("eventually_always", RING, lambda m, s, X: s.x < 3, (True, None, None)),
]


@pytest.mark.parametrize("engine", ["vector", "scalar"])
@pytest.mark.parametrize("form,fair,fn,expected", CASES)
def test_hand_worked_verdicts(engine: str, form: str, fair: tuple, fn, expected) -> None:  # type: ignore[no-untyped-def]
    assert verdict(make(form, fair, fn), engine) == expected


def test_the_cycle_shows_its_fairness_facts() -> None:
    prop = make("eventually", RING + (weak("hit"),), lambda m, s, X: s.y == 1)
    trace = check(Ring(), [], properties=[prop]).properties["p"].trace
    assert trace is not None
    facts = {f.label: f for f in lasso.facts(trace, prop)}
    # the cycle is steps 1..3 (inc, inc, reset) from state 0; hit is enabled in state 1 only
    assert facts["WF(hit)"].enabled == [1] and facts["WF(hit)"].taken == [] and facts["WF(hit)"].met
    assert facts["WF(inc)"].taken == [1, 2] and facts["WF(reset)"].taken == [3]


def test_fairness_per_parameter_names_each_condition() -> None:
    from kmc.model.fetch import Fetch

    m = Fetch()
    labels = [label for label, _ in weak("fetch", "follower").conditions(m.instances())]
    assert labels == ["WF(fetch(follower=r1))", "WF(fetch(follower=r2))"]
    with pytest.raises(ValueError, match="no parameter 'broker'"):
        weak("fetch", "broker").conditions(m.instances())
    with pytest.raises(ValueError, match="no action named 'fetchh'"):
        weak("fetchh").conditions(m.instances())


def test_engines_that_cannot_check_properties_say_so() -> None:
    prop = make("eventually", (), lambda m, s, X: s.y == 1)
    with pytest.raises(BadInput, match="the z3 engine does not check liveness properties"):
        check(Ring(), [], engine="z3", properties=[prop])
    with pytest.raises(BadInput, match="--symmetry"):
        check(Ring(), [], properties=[prop], limits=kmc.Limits(), search=kmc.SearchOptions(symmetry=True))


def test_an_incomplete_run_decides_nothing() -> None:
    prop = make("eventually", (), lambda m, s, X: s.y == 1)
    result = check(Ring(), [], properties=[prop], limits=kmc.Limits(max_states=2))
    assert result.properties["p"].holds is None
