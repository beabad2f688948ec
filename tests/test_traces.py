"""Counterexamples: rebuilt from parent pointers, replayed step by step, rendered."""

from __future__ import annotations

import json

import pytest

from kmc.engines.explicit import bfs
from kmc.engines.explicit import dfs
from kmc.errors import ReplayError
from kmc.registry import select
from kmc.traces import itf, text
from kmc.traces.replay import replay
from kmc.traces.trace import Step, Trace
from tests.conftest import build


@pytest.fixture(scope="module")
def hw_trace():
    model, invariants = build("replication", mode="hw")
    [strong] = select(invariants, ["strong-isr"])
    return bfs.check(model, [strong]).invariants["strong-isr"].trace, strong


def test_replay_accepts_the_engine_trace(hw_trace) -> None:
    trace, strong = hw_trace
    replay(trace, strong)


def test_replay_rejects_a_step_that_is_not_enabled(hw_trace) -> None:
    trace, strong = hw_trace
    steps = list(trace.steps)
    steps[1], steps[2] = steps[2], steps[1]
    with pytest.raises(ReplayError, match="step 1: .* is not enabled|does not lead"):
        replay(Trace(trace.model, steps, trace.invariant), strong)


def test_replay_rejects_a_tampered_state(hw_trace) -> None:
    trace, strong = hw_trace
    steps = list(trace.steps)
    last = steps[-1]
    changed = (last.state[0] + 1,) + last.state[1:]
    steps[-1] = Step(last.instance, changed)
    with pytest.raises(ReplayError, match="does not lead to the recorded state"):
        replay(Trace(trace.model, steps, trace.invariant), strong)


def test_replay_rejects_a_trace_that_ends_in_a_good_state(hw_trace) -> None:
    trace, strong = hw_trace
    with pytest.raises(ReplayError, match="satisfies strong-isr"):
        replay(Trace(trace.model, trace.steps[:-1], trace.invariant), strong)


def test_text_shows_only_changed_fields(hw_trace) -> None:
    trace, strong = hw_trace
    out = text.render(trace, strong.doc)
    assert out.startswith("Invariant strong-isr is violated: all data below")
    blocks = out.split("\n\n")
    assert len(blocks) == 1 + trace.length + 1  # header, initial state, one block per step
    first_step = blocks[2].splitlines()
    assert first_step[0] == "Step 1: controller_elect_leader(leader=r1)"
    changed = [line.split()[0] for line in first_step[1:]]
    assert changed == ["quorum.leader", "quorum.epoch", "request[epoch"]


def test_itf_holds_every_state_by_field_name(hw_trace) -> None:
    trace, _ = hw_trace
    data = json.loads(itf.dumps(trace))
    assert data["#meta"]["model"] == "replication" and data["#meta"]["invariant"] == "strong-isr"
    assert data["#meta"]["settings"]["mode"] == "hw"
    assert len(data["states"]) == trace.length + 1
    assert data["vars"][0] == "log_id"
    first, second = data["states"][0], data["states"][1]
    assert first["#meta"]["action"] == "init" and second["#meta"]["action"] == "controller_elect_leader"
    assert first["quorum_isr"] == [1, 1] and first["log_id"] == [[-1, -1], [-1, -1]]
    assert second["quorum_leader"] == 0


def test_dfs_traces_replay() -> None:
    model, invariants = build("replication", mode="kip101")
    [strong] = select(invariants, ["strong-isr"])
    trace = dfs.check(model, [strong]).invariants["strong-isr"].trace
    assert trace is not None
    replay(trace, strong)
