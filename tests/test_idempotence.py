"""The idempotent producer: duplicates and reordering without idempotence, neither with it,
for the same bounds; shortest traces, checked against a plain BFS; traces replay."""

from __future__ import annotations

import json

import pytest

from kmc.engines.explicit import bfs
from kmc.semantics.scalar import ScalarModel
from kmc.api import Limits, SearchOptions
from kmc.registry import select
from kmc.traces.replay import replay
from kmc.traces.scenario import run_scenario
from tests.conftest import build, states_within

HOLDING = ["no-loss-of-acked", "type-ok"]


def labels(trace) -> list[str]:
    return [s.instance.label for s in trace.steps[1:]]


@pytest.mark.parametrize(
    "mode,max_in_flight,violated",
    [
        # regression pins: kmc's own output (the scalar engine; first pinned in commit 29b355c,
        # unchanged at c4ec5e9); tests/test_exactly_once_parity.py has the vector engine agree on
        # every row, and test_anomalies_are_shortest_and_replay below confirms the first row's
        # lengths with a plain BFS
        ("no-idempotence", 2, {"no-duplicates": 4, "in-order": 4}),
        ("no-idempotence", 1, {"no-duplicates": 4}),
        ("idempotence", 2, {}),
        ("idempotence", 1, {}),
    ],
)
def test_verdicts_per_mode(mode: str, max_in_flight: int, violated: dict[str, int]) -> None:
    model, invariants = build("idempotence", mode=mode, max_in_flight=max_in_flight)
    result = bfs.check(model, invariants, Limits(), SearchOptions(keep_going=True))
    assert result.complete
    got = {n: v.trace.length for n, v in result.invariants.items() if v.holds is False and v.trace is not None}
    assert got == violated
    assert all(result.invariants[n].holds for n in HOLDING)


@pytest.mark.parametrize("invariant", ["no-duplicates", "in-order"])
def test_anomalies_are_shortest_and_replay(invariant: str) -> None:
    model, invariants = build("idempotence", mode="no-idempotence")
    [inv] = select(invariants, [invariant])
    verdict = bfs.check(model, [inv]).invariants[invariant]
    assert verdict.holds is False and verdict.trace is not None
    replay(verdict.trace, inv)
    sm = ScalarModel(model)
    assert not any(sm.violated(s, [inv]) for s in states_within(model, verdict.trace.length - 1))


def test_duplicate_is_a_retry_after_a_lost_response() -> None:
    """Seed 000 §8.1(1) (tests/reference/seeds.md): the broker wrote the batch, the response was
    lost, the retry writes it again."""
    model, invariants = build("idempotence", mode="no-idempotence")
    verdict = bfs.check(model, select(invariants, ["no-duplicates"])).invariants["no-duplicates"]
    assert labels(verdict.trace) == [
        "send(batch=b0)", "leader_append_response_lost(batch=b0)", "retry(batch=b0)", "leader_append(batch=b0)",
    ]


def test_reordering_needs_two_requests_in_flight() -> None:
    """Seed 000 §8.1(4) (tests/reference/seeds.md): with more than one request in flight the
    second batch can land first."""
    model, invariants = build("idempotence", mode="no-idempotence")
    verdict = bfs.check(model, select(invariants, ["in-order"])).invariants["in-order"]
    assert labels(verdict.trace) == [
        "send(batch=b0)", "send(batch=b1)", "leader_append(batch=b1)", "leader_append(batch=b0)",
    ]
    assert model.describe(verdict.trace.last)["leader.log"] == "[b1 b0]"


def test_the_same_steps_with_idempotence() -> None:
    """The leader answers the retried b0 as a duplicate (success, no append), and refuses b1
    ahead of b0 (OutOfOrderSequence): the producer sends b1 again after b0."""
    model, invariants = build("idempotence", mode="idempotence")
    dup = run_scenario(model, ["send(b0)", "leader_append_response_lost(b0)", "retry(b0)", "leader_append(b0)"])
    last = model.describe(dup.last)
    assert (last["leader.log"], last["producer.b0"]) == ("[b0]", "acknowledged")
    gap = run_scenario(model, ["send(b0)", "send(b1)", "leader_append(b1)", "leader_append(b0)", "retry(b1)",
                               "leader_append(b1)"])
    states = [model.describe(s.state) for s in gap.steps]
    assert states[3]["leader.log"] == "[]" and states[3]["producer.b1"] == "awaiting response"
    assert states[-1]["leader.log"] == "[b0 b1]" and states[-1]["producer.b1"] == "acknowledged"
    sm = ScalarModel(model)
    assert not any(sm.violated(s.state, invariants) for s in dup.steps + gap.steps)


def test_idempotence_holds_on_larger_bounds() -> None:
    model, invariants = build("idempotence", mode="idempotence", batches=3, max_in_flight=3, retries=2)
    result = bfs.check(model, invariants, Limits(), SearchOptions(keep_going=True))
    assert result.complete and result.violated == []


def test_compare_prints_the_matrix(run_kmc) -> None:
    rc, out, _ = run_kmc("compare", "idempotence", "--json", "--quiet")
    data = json.loads(out)
    assert rc == 12
    verdicts = {m["column"]: {n: v["trace_length"] for n, v in m["invariants"].items()} for m in data["modes"]}
    assert verdicts["no-idempotence"]["no-duplicates"] == 4 and verdicts["no-idempotence"]["in-order"] == 4
    assert all(length is None for length in verdicts["idempotence"].values())


def test_bad_bound_is_refused(run_kmc) -> None:
    rc, _, err = run_kmc("check", "idempotence", "--max-in-flight", "9")
    assert rc == 2 and "--max-in-flight" in err
