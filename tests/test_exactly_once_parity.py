"""The idempotence and transactions models under every engine: the vector engine against the
scalar reference (distinct and generated states, depth, verdicts, the same counterexamples
state by state; traces replay), and the depth-first engine on states and verdicts. The exact
counts asserted here are the ones both breadth-first engines report: regression pins (kmc's own
output; no tool outside kmc checks these models), while the agreement of the two engines is
computed in each test."""

from __future__ import annotations

import pytest

from kmc.engines.explicit import bfs
from kmc.engines.explicit import dfs
from kmc.api import Limits, SearchOptions
from tests.conftest import build
from tests.test_vector_parity import assert_same_run

IDEMPOTENCE = [
    ("no-idempotence", {}), ("idempotence", {}),
    ("no-idempotence", {"max_in_flight": 1}), ("idempotence", {"max_in_flight": 1}),
    ("no-idempotence", {"batches": 3, "max_in_flight": 3, "retries": 2}),
    ("idempotence", {"batches": 3, "max_in_flight": 3, "retries": 2}),
]


@pytest.mark.parametrize("keep_going", [False, True], ids=["first", "continue"])
@pytest.mark.parametrize("mode,bounds", IDEMPOTENCE)
def test_idempotence_scalar_and_vector_agree(mode: str, bounds: dict, keep_going: bool) -> None:
    model, invariants = build("idempotence", mode=mode, **bounds)
    assert_same_run(model, invariants, Limits(), SearchOptions(keep_going=keep_going))


def test_idempotence_default_counts() -> None:
    # regression pin: kmc's own output (first pinned in commit 29b355c, unchanged at c4ec5e9);
    # scalar and vector agree on these (test above); the default configuration's graph
    counts = {}
    for mode in ("no-idempotence", "idempotence"):
        model, invariants = build("idempotence", mode=mode)
        result = assert_same_run(model, invariants, Limits(), SearchOptions(keep_going=True))
        counts[mode] = (result.distinct_states, result.depth)
    assert counts == {"no-idempotence": (76, 7), "idempotence": (46, 7)}


def test_transactions_kip98_first_violation() -> None:
    model, invariants = build("transactions", mode="kip98")
    result = assert_same_run(model, invariants, Limits())
    assert result.stopped_by == "violation"
    assert [n for n, v in result.invariants.items() if v.holds is False] == ["no-hanging-transaction"]
    # regression pin: kmc's own output (commit 29b355c); tests/test_transactions.py confirms it
    # shortest with a plain BFS
    assert result.invariants["no-hanging-transaction"].trace.length == 9


@pytest.mark.parametrize("mode", ["kip98", "kip890"])
def test_transactions_bounded_runs_agree(mode: str) -> None:
    model, invariants = build("transactions", mode=mode)
    assert_same_run(model, invariants, Limits(max_states=15000), SearchOptions(keep_going=True))


@pytest.mark.parametrize("mode", ["kip98", "kip890"])
def test_transactions_one_producer_complete(mode: str) -> None:
    model, invariants = build("transactions", mode=mode, producers=1, max_failovers=0)
    result = assert_same_run(model, invariants, Limits(), SearchOptions(keep_going=True))
    assert result.complete


@pytest.mark.slow
@pytest.mark.parametrize("mode,states,depth", [("kip98", 97984, 30), ("kip890", 66558, 27)])
def test_transactions_default_complete(mode: str, states: int, depth: int) -> None:
    """The default configuration whole (scalar takes about 10 s per mode); the counts are
    what both engines report: regression pins, kmc's own output (first pinned in commit 29b355c)."""
    model, invariants = build("transactions", mode=mode)
    result = assert_same_run(model, invariants, Limits(), SearchOptions(keep_going=True))
    assert (result.distinct_states, result.depth, result.complete) == (states, depth, True)


@pytest.mark.parametrize("name,mode,bounds", [
    ("idempotence", "no-idempotence", {}),
    ("idempotence", "idempotence", {"batches": 3, "max_in_flight": 3, "retries": 2}),
    ("transactions", "kip98", {"producers": 1, "max_failovers": 0}),
    ("transactions", "kip890", {"producers": 1, "max_failovers": 0}),
])
def test_depth_first_engine_agrees_on_states_and_verdicts(name: str, mode: str, bounds: dict) -> None:
    model, invariants = build(name, mode=mode, **bounds)
    want = bfs.check(model, invariants, Limits(), SearchOptions(keep_going=True))
    got = dfs.check(model, invariants, Limits(), SearchOptions(keep_going=True))
    assert got.distinct_states == want.distinct_states
    assert {n: v.holds for n, v in got.invariants.items()} == {n: v.holds for n, v in want.invariants.items()}
