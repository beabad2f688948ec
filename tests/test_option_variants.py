"""Options that change a protocol rule, each against both breadth-first engines and with its
verdicts: replication's `--truncate-to-end-offset`, and fetch's `--acks 0`, `--acks 1` and
`--unclean-leader-election` (PROTOCOL.md sections 1 and 2, restated in
tests/reference/protocol.md; seed 000 section 8.2(3), restated in tests/reference/seeds.md).

Where the numbers come from. TLC cannot check these variants: the published specification has
no switch for any of them (its truncation is the parity rule, and it has no producer acks or
unclean election; tests/reference/tlc-replication.md). So:
- every test here runs the scalar reference engine and the vector engine on the same
  configuration and holds them to the same distinct and generated states, depth, verdicts,
  report counts and counterexamples, state by state (a second computation);
- replication with `--truncate-to-end-offset` equals TLC's complete graphs without it
  (tests/reference/tlc-replication.md, tables A and B) in every mode but kip101; kip101's
  9,047 states (the count docs/replication.md quotes) are also checked by a plain search in
  this file: TLC's 9,045 states without the option, plus 2;
- the other literal counts and trace lengths are regression pins: kmc's own output as of
  commit c4ec5e9 (with both engines agreeing, and each trace confirmed shortest by a plain
  breadth-first search in this file).
"""

from __future__ import annotations

from typing import Any

import pytest

from kmc.api import Limits, SearchOptions
from kmc.engines.vector import engine as vector
from kmc.model.core import Model
from kmc.registry import select
from kmc.semantics.scalar import ScalarModel
from kmc.traces.replay import replay
from tests.conftest import build, states_within
from tests.test_vector_parity import assert_same_run

# -- replication --truncate-to-end-offset ------------------------------------------------------

# (distinct states, depth, {invariant: shortest trace in steps}) with the option on. Every mode
# but kip101: TLC's figures without the option (tests/reference/tlc-replication.md, tables A
# and B), which the option leaves unchanged. kip101: 9,047 states (docs/replication.md), a
# regression pin also checked by test_truncate_to_end_offset_adds_two_states_in_kip101; its
# lengths are TLC's without the option, unchanged.
TRUNCATE_TO_END_OFFSET = {
    "hw": (10131, 20, {"weak-isr": 8, "strong-isr": 9}),
    "kip101": (9047, 18, {"weak-isr": 11, "strong-isr": 11}),
    "kip279": (9027, 18, {}),
    "kip320-first-try": (8429, 18, {}),
    "kip320": (5973, 18, {}),
}


def violated(result: Any) -> dict[str, int]:
    """{invariant: trace length} of the safety invariants a run found violated."""
    return {n: v.trace.length for n, v in result.invariants.items()
            if v.holds is False and v.trace is not None and not v.report}


@pytest.mark.parametrize("mode", list(TRUNCATE_TO_END_OFFSET))
def test_truncate_to_end_offset_engines_agree(mode: str) -> None:
    model, invariants = build("replication", mode=mode, truncate_to_end_offset=True)
    result = assert_same_run(model, invariants, Limits(), SearchOptions(keep_going=True))  # scalar == vector
    states, depth, lengths = TRUNCATE_TO_END_OFFSET[mode]
    assert (result.distinct_states, result.depth, result.complete) == (states, depth, True)
    assert violated(result) == lengths
    assert all(result.invariants[n].holds for n in ("leader-in-isr", "type-ok"))


def reachable(model: Model) -> set[tuple[int, ...]]:
    """Every reachable state, by a plain search of this test's own (no engine)."""
    sm = ScalarModel(model)
    seen = set(model.initial_states())
    todo = list(seen)
    while todo:
        for _, n in sm.successors(todo.pop()):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return seen


def test_truncate_to_end_offset_adds_two_states_in_kip101() -> None:
    """The option only enables become-follower steps the specification disables (a truncation
    offset beyond the follower's end offset becomes a truncation to its end), so every state
    reachable without it stays reachable. In kip101 with 2 replicas that adds 2 states: a
    follower of the next epoch whose log is a strict prefix of its leader's, the leader's
    end offset for their common epoch lying beyond the follower's end."""
    without = reachable(build("replication", mode="kip101")[0])
    with_option = reachable(build("replication", mode="kip101", truncate_to_end_offset=True)[0])
    assert len(without) == 9045  # TLC's count (tests/reference/tlc-replication.md, table A)
    assert without <= with_option and len(with_option - without) == 2


# -- fetch --acks 0, --acks 1, --unclean-leader-election -----------------------------------------

# (mode, option, distinct states, depth, {safety invariant: shortest trace in steps}) of the
# complete graph: regression pins, kmc's own output as of commit c4ec5e9 (scalar and vector
# agree below; the lengths are confirmed shortest by test_fetch_variant_verdicts).
# PROTOCOL.md section 2: with acks=1, or unclean election, committed data is lost in every mode.
# With acks=0 nothing is ever acknowledged, so committed-never-lost holds vacuously; hw mode's
# divergence (seed 000 section 6(2)) does not depend on acks and stays.
ACKS_0 = {"acks": "0"}
ACKS_1 = {"acks": "1"}
UNCLEAN = {"unclean_leader_election": True}
HW_DIVERGENCE = {"no-log-divergence": 9, "consumed-never-changes": 9}
UNCLEAN_LOSS = {"committed-never-lost": 5, "no-log-divergence": 5, "consumed-never-changes": 5}
FETCH_VARIANTS: list[tuple[str, dict[str, Any], int, int, dict[str, int]]] = [
    ("hw", ACKS_0, 16497, 24, HW_DIVERGENCE),
    ("hw", ACKS_1, 16621, 24, {"committed-never-lost": 3, **HW_DIVERGENCE}),
    ("hw", UNCLEAN, 55730, 26, UNCLEAN_LOSS),
    ("epoch", ACKS_0, 14461, 22, {}),
    ("epoch", ACKS_1, 14461, 22, {"committed-never-lost": 3}),
    ("epoch", UNCLEAN, 49704, 25, UNCLEAN_LOSS),
    ("epoch-fenced", ACKS_0, 13231, 22, {}),
    ("epoch-fenced", ACKS_1, 13231, 22, {"committed-never-lost": 3}),
    ("epoch-fenced", UNCLEAN, 45763, 25, UNCLEAN_LOSS),
]


def variant_id(mode: str, option: dict[str, Any]) -> str:
    return mode + "-" + "-".join(f"{k.replace('_', '-')}={v}" for k, v in option.items())


FETCH_IDS = [variant_id(m, o) for m, o, *_ in FETCH_VARIANTS]


@pytest.mark.parametrize("mode,option,states,depth,lengths", FETCH_VARIANTS, ids=FETCH_IDS)
def test_fetch_variant_verdicts(mode: str, option: dict[str, Any], states: int, depth: int,
                                lengths: dict[str, int]) -> None:
    """The complete graph (vector engine): counts, verdicts and shortest traces that replay."""
    model, invariants = build("fetch", mode=mode, **option)
    result = vector.check(model, invariants, Limits(), SearchOptions(keep_going=True))
    assert (result.distinct_states, result.depth, result.complete) == (states, depth, True)
    assert violated(result) == lengths
    sm = ScalarModel(model)
    for name, steps in lengths.items():
        [inv] = select(invariants, [name])
        replay(result.invariants[name].trace, inv)
        # shortest: no state within one step fewer violates it (a plain BFS of the test's own)
        assert not any(sm.violated(s, [inv]) for s in states_within(model, steps - 1))


@pytest.mark.parametrize("mode,option", [(m, o) for m, o, *_ in FETCH_VARIANTS if "acks" in o],
                         ids=[i for i, (_, o, *_) in zip(FETCH_IDS, FETCH_VARIANTS) if "acks" in o])
def test_fetch_acks_variants_engines_agree(mode: str, option: dict[str, Any]) -> None:
    """Scalar and vector on the complete graph, every invariant (with the availability reports)."""
    model, invariants = build("fetch", mode=mode, **option)
    assert assert_same_run(model, invariants, Limits(), SearchOptions(keep_going=True)).complete


UNCLEAN_MODES = ["hw", "epoch", "epoch-fenced"]


@pytest.mark.parametrize("mode", UNCLEAN_MODES)
def test_fetch_unclean_election_engines_agree_to_the_first_violation(mode: str) -> None:
    model, invariants = build("fetch", mode=mode, **UNCLEAN)
    result = assert_same_run(model, invariants, Limits())
    assert result.stopped_by == "violation"


@pytest.mark.slow
@pytest.mark.parametrize("mode", UNCLEAN_MODES)
def test_fetch_unclean_election_engines_agree_on_the_whole_graph(mode: str) -> None:
    """About 30-40 s of scalar search per mode on a shared 2-core machine."""
    model, invariants = build("fetch", mode=mode, **UNCLEAN)
    assert assert_same_run(model, invariants, Limits(), SearchOptions(keep_going=True)).complete


def loss_trace(mode: str, option: dict[str, Any]) -> tuple[Model, Any]:
    model, invariants = build("fetch", mode=mode, **option)
    result = vector.check(model, select(invariants, ["committed-never-lost"]))
    return model, result.invariants["committed-never-lost"].trace


@pytest.mark.parametrize("mode", ["hw", "epoch", "epoch-fenced"])
def test_acks_1_loses_a_record_acknowledged_before_any_follower_had_it(mode: str) -> None:
    """Seed 000 section 8.2(3): with acks=1 the producer is answered on the leader's own write;
    a leader change before a follower fetched it loses the record, in every mode."""
    model, trace = loss_trace(mode, ACKS_1)
    assert [s.instance.label for s in trace.steps[1:]] == [
        "produce(leader=r1)", "elect(replica=r2)", "become_leader(replica=r2)"]
    assert model.describe(trace.last)["r2.log"] == "[]"


@pytest.mark.parametrize("mode", ["hw", "epoch", "epoch-fenced"])
def test_unclean_election_elects_a_replica_outside_the_isr(mode: str) -> None:
    """Seed 000 section 8.2(3): with unclean.leader.election.enable a replica outside the ISR
    may lead, and what it lacks is lost, in every mode."""
    model, trace = loss_trace(mode, UNCLEAN)
    labels = [s.instance.label for s in trace.steps[1:]]
    elect = labels.index("elect(replica=r2)")
    assert "shrink_isr(leader=r1, follower=r2)" in labels[:elect]
    assert model.describe(trace.steps[elect].state)["controller.isr"] == "{r1}"  # r2 is out of the ISR


def test_acks_0_never_acknowledges() -> None:
    """With acks=0 the producer never hears back: no state acknowledges a record, which is why
    committed-never-lost holds with acks=0 (and only with it)."""
    model, _ = build("fetch", mode="hw", **ACKS_0)
    assert {model.describe(s)["producer.acked"] for s in states_within(model, 24)} == {"[]"}
