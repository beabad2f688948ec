"""Verdicts of the replication model per mode (PROTOCOL.md section 1, restated in
tests/reference/protocol.md), with shortest, replayable counterexamples whose lengths are
TLC's on the published specification (tests/reference/tlc-replication.md, tables B and C)."""

from __future__ import annotations

import pytest

from kmc.engines.explicit import bfs
from kmc.semantics.scalar import ScalarModel
from kmc.api import Limits, SearchOptions
from kmc.api import check as kmc_check
from kmc.registry import select
from kmc.traces.replay import replay
from tests.conftest import build, states_within

MODES = ["hw", "kip101", "kip279", "kip320-first-try", "kip320"]
# shortest counterexample lengths (steps), as TLC reports them on the published spec (1 worker,
# BFS): tests/reference/tlc-replication.md, table B (2 replicas) and table C (3 replicas)
TWO_REPLICAS_VIOLATED = {"strong-isr": {"hw": 9, "kip101": 11}, "weak-isr": {"hw": 8, "kip101": 11}}
THREE_REPLICAS_STRONG_ISR_STEPS = {"hw": 8, "kip101": 10, "kip279": 10, "kip320-first-try": 12}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("invariant", list(TWO_REPLICAS_VIOLATED))
def test_isr_invariants_two_replicas(invariant: str, mode: str) -> None:
    model, invariants = build("replication", mode=mode)
    [inv] = select(invariants, [invariant])
    result = bfs.check(model, [inv])
    verdict = result.invariants[invariant]
    if mode in TWO_REPLICAS_VIOLATED[invariant]:
        assert verdict.holds is False
        assert verdict.trace is not None
        assert verdict.trace.length == TWO_REPLICAS_VIOLATED[invariant][mode]
        replay(verdict.trace, inv)
        # shortest: no state within one step fewer violates the invariant
        sm = ScalarModel(model)
        assert not any(sm.violated(s, [inv]) for s in states_within(model, verdict.trace.length - 1))
    else:
        assert verdict.holds is True and result.complete


@pytest.mark.parametrize("mode", MODES)
def test_leader_in_isr_and_type_ok_hold_in_every_mode(mode: str) -> None:
    model, invariants = build("replication", mode=mode)
    result = bfs.check(model, select(invariants, ["leader-in-isr", "type-ok"]))
    assert result.complete and not result.violated


@pytest.mark.parametrize("mode", MODES)
def test_continue_gives_each_invariant_its_own_trace(mode: str) -> None:
    model, invariants = build("replication", mode=mode)
    result = bfs.check(model, invariants, Limits(), SearchOptions(keep_going=True))
    assert result.complete
    for inv in invariants:
        trace = result.invariants[inv.name].trace
        if trace is not None:
            replay(trace, inv)
            assert trace.invariant == inv.name


# the scalar engine takes 10 to 30 times the vector engine's 3 to 5 s on 58,186 to 222,806
# states: the default suite has each mode on the vector engine and hw on both
# (tests/test_vector_parity.py has the two engines agree on three replicas too)
THREE_REPLICAS = [
    pytest.param("hw", "scalar", id="hw"),
    pytest.param("hw", "vector", id="hw-vector"),
    pytest.param("kip101", "vector", id="kip101-vector"),
    pytest.param("kip279", "vector", id="kip279-vector"),
    pytest.param("kip101", "scalar", id="kip101", marks=pytest.mark.slow),
    pytest.param("kip279", "scalar", id="kip279", marks=pytest.mark.slow),
    pytest.param("kip320-first-try", "scalar", id="kip320-first-try", marks=pytest.mark.slow),  # ~860k states
]


@pytest.mark.parametrize("mode,engine", THREE_REPLICAS)
def test_strong_isr_violated_with_three_replicas(mode: str, engine: str) -> None:
    model, invariants = build("replication", mode=mode, replicas=3, max_leader_epoch=3)
    [strong] = select(invariants, ["strong-isr"])
    result = kmc_check(model, [strong], engine=engine)
    verdict = result.invariants["strong-isr"]
    assert verdict.holds is False and result.stopped_by == "violation"
    assert verdict.trace is not None
    assert verdict.trace.length == THREE_REPLICAS_STRONG_ISR_STEPS[mode]
    replay(verdict.trace, strong)
