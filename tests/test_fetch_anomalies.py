"""Seed 000's two anomalies: scripted as the seed tells them, and found by the checker as
shortest counterexamples in hw mode; absent in epoch mode with the same bounds (the stories,
restated: tests/reference/seeds.md, sections 6(1), 6(2) and 7; the requirement:
tests/reference/protocol.md, section 2)."""

from __future__ import annotations

import pytest

from kmc.engines.explicit import bfs
from kmc.semantics.scalar import ScalarModel
from kmc.api import Limits, SearchOptions
from kmc.invariants.fetch import invariants as fetch_invariants
from kmc.model.fetch import Fetch
from kmc.registry import select
from kmc.traces.replay import replay
from kmc.traces.scenario import run_scenario
from tests.conftest import states_within

THREE_FETCH_ROUNDS = [
    "produce(r1)", "fetch(r2)", "fetch_response(r2)",
    "produce(r1)", "fetch(r2)", "fetch_response(r2)",
    "fetch(r2)",  # the leader's HW reaches 2; the follower's response (HW 2) is still in flight
]
DATA_LOSS = THREE_FETCH_ROUNDS + [
    "acknowledge(m0)", "acknowledge(m1)",
    "crash(r2)", "restart(r2)", "crash(r1)", "elect(r2)", "become_leader(r2)",
]
DIVERGENCE = THREE_FETCH_ROUNDS + [
    "crash(r2)", "crash(r1)", "restart(r2)", "elect(r2)", "become_leader(r2)", "produce(r2)",
    "restart(r1)", "become_follower(r1)",
]


def failing(model: Fetch, steps: list[str]) -> list[str]:
    trace = run_scenario(model, steps)
    invs = fetch_invariants(model)
    return [invs[k].name for k in ScalarModel(model).violated(trace.last, invs) if not invs[k].report]


def test_seed_data_loss_story() -> None:
    hw = Fetch(mode="hw")
    trace = run_scenario(hw, DATA_LOSS)
    restarted = hw.describe(trace.steps[DATA_LOSS.index("restart(r2)") + 1].state)
    assert restarted["r2.log"] == "[m0@e0]" and restarted["r2.HW"] == "1"  # truncated to its stale HW 1
    assert failing(hw, DATA_LOSS) == ["committed-never-lost"]
    # with leader epochs the follower does not truncate on restart, so m1 survives
    assert failing(Fetch(mode="epoch"), DATA_LOSS) == []


def test_seed_data_loss_story_ends_with_both_logs_truncated() -> None:
    hw = Fetch(mode="hw")
    steps = DATA_LOSS + ["restart(r1)", "become_follower(r1)", "fetch(r1)", "fetch_response(r1)"]
    last = hw.describe(run_scenario(hw, steps).last)
    assert (last["r1.log"], last["r1.HW"], last["r2.log"]) == ("[m0@e0]", "1", "[m0@e0]")


def test_seed_divergence_story() -> None:
    hw = Fetch(mode="hw", max_records=3)
    last = hw.describe(run_scenario(hw, DIVERGENCE).last)
    assert (last["r1.log"], last["r1.HW"]) == ("[m0@e0 m1@e0]", "2")
    assert (last["r2.log"], last["r2.HW"]) == ("[m0@e0 m2@e1]", "2")
    assert "no-log-divergence" in failing(hw, DIVERGENCE)
    # in epoch mode r2 keeps m1 across its restart (no HW truncation), so m2 lands after it
    epoch = Fetch(mode="epoch", max_records=3)
    last = epoch.describe(run_scenario(epoch, DIVERGENCE).last)
    assert (last["r1.log"], last["r2.log"]) == ("[m0@e0 m1@e0]", "[m0@e0 m1@e0 m2@e1]")
    assert failing(epoch, DIVERGENCE) == []


@pytest.mark.parametrize("invariant", ["committed-never-lost", "no-log-divergence"])
def test_checker_finds_the_anomaly_in_hw_mode_as_a_shortest_trace(invariant: str) -> None:
    model = Fetch(mode="hw")
    [inv] = select(fetch_invariants(model), [invariant])
    verdict = bfs.check(model, [inv]).invariants[invariant]
    assert verdict.holds is False and verdict.trace is not None
    replay(verdict.trace, inv)
    labels = [s.instance.label for s in verdict.trace.steps[1:]]
    # the seed's story: the follower restarts and truncates to a stale HW, then is elected
    assert "restart(replica=r2)" in labels and "elect(replica=r2)" in labels
    restart = labels.index("restart(replica=r2)") + 1
    before, after = (model.describe(verdict.trace.steps[k].state) for k in (restart - 1, restart))
    assert int(after["r2.LEO"]) < int(before["r2.LEO"])
    sm = ScalarModel(model)
    assert not any(sm.violated(s, [inv]) for s in states_within(model, verdict.trace.length - 1))


def test_epoch_mode_has_neither_anomaly() -> None:
    model = Fetch(mode="epoch")
    invs = select(fetch_invariants(model), ["committed-never-lost", "no-log-divergence", "hw-le-leo", "consumed-never-changes"])
    result = bfs.check(model, invs, Limits(), SearchOptions(keep_going=True))
    assert result.complete and result.violated == []
