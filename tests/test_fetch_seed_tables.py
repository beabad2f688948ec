"""Seed 000's tables, value for value, through the scenario API (the tables, restated:
tests/reference/seeds.md, sections 5(2) and 6(1)).

Each table gives, after a step, the leader's LEO, the remote LEO it keeps for the follower,
the leader's HW, the follower's LEO and the follower's HW (two replicas, r1 leads).
"""

from __future__ import annotations

import pytest

from kmc.model.fetch import Fetch
from kmc.traces.scenario import ScenarioError, run_scenario

COLUMNS = ("r1.LEO", "r1.remote LEO[r2]", "r1.HW", "r2.LEO", "r2.HW")


def values(model: Fetch, steps: list[str]) -> list[tuple[int, ...]]:
    """(leader LEO, remote LEO, leader HW, follower LEO, follower HW) after each step."""
    trace = run_scenario(model, steps)
    return [tuple(int(model.describe(s.state)[c]) for c in COLUMNS) for s in trace.steps[1:]]


@pytest.mark.parametrize("mode", ["hw", "epoch", "epoch-fenced"])
def test_section_5_normal_case(mode: str) -> None:
    model = Fetch(mode=mode)
    after = values(model, ["produce(r1)", "fetch(r2)", "fetch_response(r2)", "fetch(r2)", "fetch_response(r2)"])
    # Table "PRODUCE handled": leader LEO 0->1, everything else 0
    assert after[0] == (1, 0, 0, 0, 0)
    # Table "PRODUCE and follower FETCH handled": follower LEO 1, leader HW still min(1, 0) = 0
    assert after[2] == (1, 0, 0, 1, 0)
    # Table "second follower FETCH handled": remote LEO 1, leader HW 1, follower HW min(1, 1) = 1
    assert after[4] == (1, 1, 1, 1, 1)
    # the HW reaches the follower one round late: after the leader handled the 2nd FETCH,
    # the leader's HW is 1 while the follower's is still 0
    assert after[3] == (1, 1, 1, 1, 0)


def test_section_6_1_three_rounds() -> None:
    model = Fetch(mode="hw")
    rounds = [
        ["produce(r1)", "fetch(r2)", "fetch_response(r2)"],
        ["produce(r1)", "fetch(r2)", "fetch_response(r2)"],
        ["fetch(r2)", "fetch_response(r2)"],
    ]
    after = values(model, [step for r in rounds for step in r])
    assert after[2] == (1, 0, 0, 1, 0)  # round 1
    assert after[5] == (2, 1, 1, 2, 1)  # round 2: leader HW min(2, 1) = 1, follower HW min(1, 2) = 1
    assert after[6] == (2, 2, 2, 2, 1)  # round 3, leader side: remote LEO 2, leader HW 2
    assert after[7] == (2, 2, 2, 2, 2)  # round 3, follower side: the row the seed's loss story never reaches


def test_a_step_that_is_not_enabled_is_named() -> None:
    with pytest.raises(ScenarioError, match=r"step 2 'fetch_response\(r2\)' is not enabled; enabled: produce"):
        run_scenario(Fetch(), ["produce(r1)", "fetch_response(r2)"])


def test_unknown_and_ambiguous_steps() -> None:
    with pytest.raises(ScenarioError, match="unknown action 'fetchh'"):
        run_scenario(Fetch(), ["fetchh(r2)"])
    with pytest.raises(ScenarioError, match="malformed step"):
        run_scenario(Fetch(), ["produce(r1"])
