"""Seed 004's three scenarios: 3 replicas, ISR (r1, r2), r1 leads, acks=-1,
min.insync.replicas=2, clean election. Which crashes refuse writes, which leave no leader
(the scenarios, restated: tests/reference/seeds.md, "Seed 004")."""

from __future__ import annotations

import pytest

from kmc.semantics.scalar import ScalarModel
from kmc.invariants.fetch import invariants as fetch_invariants
from kmc.model.fetch import Fetch
from kmc.traces.scenario import ScenarioError, run_scenario

# r3 falls behind and leaves the ISR: AR = (r1, r2, r3), ISR = (r1, r2)
SETUP = ["produce(r1)", "fetch(r2)", "fetch_response(r2)", "shrink_isr(r1, r3)"]


@pytest.fixture
def model() -> Fetch:
    return Fetch(mode="epoch", replicas=3, acks="-1", min_insync_replicas=2, max_leader_epoch=2, max_crashes=3)


def availability(model: Fetch, steps: list[str]) -> tuple[str, str, bool, bool]:
    """(controller leader, controller ISR, a leader is electable, writes are accepted) at the end."""
    trace = run_scenario(model, steps)
    invs = {i.name: i for i in fetch_invariants(model)}
    sm = ScalarModel(model)
    shown = model.describe(trace.last)

    def ok(name: str) -> bool:
        return not sm.violated(trace.last, [invs[name]])

    return shown["controller.leader"], shown["controller.isr"], ok("leader-electable"), ok("writes-accepted")


def test_setup(model: Fetch) -> None:
    assert availability(model, SETUP) == ("r1", "{r1,r2}", True, True)


def test_scenario_1_leader_crashes_writes_refused(model: Fetch) -> None:
    steps = SETUP + ["crash(r1)", "elect(r2)", "become_leader(r2)"]
    assert availability(model, steps) == ("r2", "{r2}", True, False)
    with pytest.raises(ScenarioError, match="produce"):
        run_scenario(model, steps + ["produce(r2)"])  # NotEnoughReplicas
    # r1 returns, catches up and rejoins the ISR: writes are accepted again
    back = steps + ["restart(r1)", "become_follower(r1)", "fetch(r1)", "fetch_response(r1)", "expand_isr(r2, r1)"]
    assert availability(model, back) == ("r2", "{r1,r2}", True, True)


def test_scenario_2_both_isr_members_crash_in_turn_no_leader(model: Fetch) -> None:
    steps = SETUP + ["crash(r1)", "elect(r2)", "become_leader(r2)", "crash(r2)"]
    assert availability(model, steps) == ("none", "{r2}", False, False)
    # r1 comes back but is not in the ISR: still no leader without unclean election
    assert availability(model, steps + ["restart(r1)"]) == ("none", "{r2}", False, False)
    # the last ISR member comes back: it can lead again, but writes stay refused
    assert availability(model, steps + ["restart(r2)", "elect(r2)", "become_leader(r2)"])[2:] == (True, False)


def test_scenario_3_both_crash_together_isr_stays(model: Fetch) -> None:
    steps = SETUP + ["crash(r1)", "crash(r2)"]
    assert availability(model, steps) == ("none", "{r1,r2}", False, False)
    # either one back: it can be elected, reads are served, writes refused until both are back
    assert availability(model, steps + ["restart(r1)"]) == ("none", "{r1,r2}", True, False)
    assert availability(model, steps + ["restart(r1)", "elect(r1)", "become_leader(r1)"]) == ("r1", "{r1}", True, False)
