"""The kraft model against TLC on the KRaft specification (Vanlightly/kafka-tlaplus @ 823615e,
kafka_data_replication/kraft/v3.5 and kip-966).

Independent source: TLC 2.20 with 1 worker (BFS), deadlock not checked, Values = {A},
ReassignmentLimit = 0. Figures under the specification's VIEW are in
tests/reference/tlc-kraft.md (helper kraft-tlc); the runs on the specification with the
auxiliary variables kept in the VIEW and __AvoidCycle reading the messages in flight (what kmc
keeps: docs/kraft.md, "Parity") are in tests/reference/tlc-kraft-kmc-view.md.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from kmc.engines.explicit import bfs
from kmc.api import Limits, SearchOptions
from kmc.engines.vector import engine as vector
from kmc.model.core import Invariant
from kmc.model.kraft import Kraft
from tests.conftest import build

MODES = ["v3.5", "v3.5-avoid-lrs", "kip966"]
TWO = dict(brokers=2, replication_factor=2, init_isr_size=2)
THREE = dict(brokers=3, replication_factor=3, init_isr_size=3)
LRS = dict(TWO, min_insync_replicas=2, fence_broker_limit=1, unclean_shutdown_limit=1)


def room_in_the_metadata_log(m: Kraft) -> Invariant:
    """The metadata log's bound never binds: no reachable state fills it (a full log would
    disable every partition change)."""
    return Invariant("room", lambda s, X: s.md_len < m.md_capacity, "metadata log below its capacity")


def run(mode: str, engine: Any = vector, **settings: Any) -> Any:
    model, invariants = build("kraft", mode=mode, **settings)
    assert isinstance(model, Kraft)
    result = engine.check(model, [*invariants, room_in_the_metadata_log(model)], Limits(), SearchOptions(keep_going=True))
    assert result.complete
    return result


def verdicts(result: Any) -> dict[str, int]:
    return {n: v.trace.length for n, v in result.invariants.items() if v.holds is False}


# -- the anchors, under the specification's VIEW (tests/reference/tlc-kraft.md) ---------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("brokers,states,depth", [(2, 14, 8), (3, 128, 17)])
def test_anchors_match_tlc(mode: str, brokers: int, states: int, depth: int) -> None:
    """runs a2-*, a3-i3-*: every limit 0, ISR = RF = brokers, MinISR 1 or 2: 14 states depth 8
    and 128 states depth 17, every invariant holding, in all three modes."""
    for min_isr in (1, 2) if brokers == 2 else (2,):
        result = run(mode, brokers=brokers, replication_factor=brokers, init_isr_size=brokers,
                     min_insync_replicas=min_isr)
        assert (result.distinct_states, result.depth) == (states, depth)
        assert verdicts(result) == {}


# -- one perturbation each: the same counts as TLC under the VIEW (tests/reference/tlc-kraft.md) -

ONE_LIMIT = [  # (run, mode, settings, TLC's distinct states, depth)
    ("b2-F1-v35", "v3.5", dict(TWO, fence_broker_limit=1), 1260, 21),
    ("b2-F1-v35-alrs", "v3.5-avoid-lrs", dict(TWO, fence_broker_limit=1), 1260, 21),
    ("b2-F1-kip966", "kip966", dict(TWO, fence_broker_limit=1), 1260, 21),
    ("b2-U1-v35", "v3.5", dict(TWO, unclean_shutdown_limit=1), 945, 25),
    ("b2-U1-v35-alrs", "v3.5-avoid-lrs", dict(TWO, unclean_shutdown_limit=1), 945, 25),
    ("b2-U1-kip966", "kip966", dict(TWO, unclean_shutdown_limit=1), 945, 25),
    ("b2-C1-v35", "v3.5", dict(TWO, clean_shutdown_limit=1), 938, 22),
    ("b2-C1-v35-alrs", "v3.5-avoid-lrs", dict(TWO, clean_shutdown_limit=1), 938, 22),
    ("b2-C1-kip966", "kip966", dict(TWO, clean_shutdown_limit=1), 1079, 22),
    ("b2-S1-v35", "v3.5", dict(TWO, leader_shrink_isr_limit=1), 254, 16),
    ("b2-S1-v35-alrs", "v3.5-avoid-lrs", dict(TWO, leader_shrink_isr_limit=1), 254, 16),
    ("b2-S1-kip966", "kip966", dict(TWO, leader_shrink_isr_limit=1), 254, 16),
]


@pytest.mark.slow
@pytest.mark.parametrize("name,mode,settings,states,depth", ONE_LIMIT, ids=[c[0] for c in ONE_LIMIT])
def test_one_perturbation_matches_tlc(name: str, mode: str, settings: dict[str, int], states: int,
                                      depth: int) -> None:
    result = run(mode, **settings)
    assert (result.distinct_states, result.depth) == (states, depth)
    assert verdicts(result) == {}


def test_one_shrink_matches_tlc() -> None:
    """b2-S1-v35, the fast one of the table above, in the default suite."""
    result = run("v3.5", **dict(TWO, leader_shrink_isr_limit=1))
    assert (result.distinct_states, result.depth) == (254, 16)


# -- the last replica standing ----------------------------------------------------------------


def test_last_replica_standing_is_found_at_tlc_lengths() -> None:
    """b2-LRS-v35--*: 2 brokers, MinISR 2, one fence, one unclean shutdown: TLC finds
    LeaderCompleteness and LeaderCandidateCompleteness violated in 7 steps, ConsistentRead in
    8 and NoCommittedRecordLostGlobally in 16 (each run alone, BFS: shortest)."""
    model, invariants = build("kraft", mode="v3.5", **LRS)
    for name, steps in [("leader-completeness", 7), ("leader-candidate-completeness", 7), ("consistent-read", 8)]:
        assert shortest(model, invariants, name).length == steps, name


def shortest(model: Any, invariants: list[Invariant], name: str) -> Any:
    result = vector.check(model, [i for i in invariants if i.name == name], Limits())
    trace = result.invariants[name].trace
    assert trace is not None
    return trace


@pytest.mark.slow
def test_a_committed_record_is_lost_everywhere_at_tlc_length() -> None:
    """b2-LRS-v35--NoCommittedRecordLostGlobally: 16 steps. The last step: the former leader,
    the only other holder of the committed record, truncates it to follow the new leader
    elected with an empty log."""
    model, invariants = build("kraft", mode="v3.5", **LRS)
    trace = shortest(model, invariants, "no-committed-record-lost-globally")
    assert trace.length == 16
    assert trace.steps[-1].instance.label.startswith("receive_fetch_response")


@pytest.mark.slow
@pytest.mark.parametrize("name,settings,invariant,steps", [
    ("b2-ALL-v35", dict(TWO, fence_broker_limit=1, clean_shutdown_limit=1, unclean_shutdown_limit=1,
                        leader_shrink_isr_limit=1), "leader-completeness", 7),
    ("b2-ALL-v35", dict(TWO, fence_broker_limit=1, clean_shutdown_limit=1, unclean_shutdown_limit=1,
                        leader_shrink_isr_limit=1), "leader-candidate-completeness", 7),
    ("b3i2-LRS-v35", dict(THREE, init_isr_size=2, min_insync_replicas=2, fence_broker_limit=1,
                          unclean_shutdown_limit=1), "leader-completeness", 7),
    ("b3i2-LRS-v35", dict(THREE, init_isr_size=2, min_insync_replicas=2, fence_broker_limit=1,
                          unclean_shutdown_limit=1), "consistent-read", 8),
])
def test_more_lrs_bounds_at_tlc_lengths(name: str, settings: dict[str, int], invariant: str, steps: int) -> None:
    """tests/reference/tlc-kraft.md, runs b2-ALL-v35--* and b3i2-LRS-v35--*."""
    model, invariants = build("kraft", mode="v3.5", **settings)
    assert shortest(model, invariants, invariant).length == steps


@pytest.mark.slow
@pytest.mark.parametrize("mode,states,depth", [("v3.5-avoid-lrs", 38583, 37), ("kip966", 290764, 41)])
def test_the_fixes_hold_on_the_lrs_bounds(mode: str, states: int, depth: int) -> None:
    """b2-LRS-v35-alrs and b2-LRS-kip966: every invariant holds (TLC's verdict under the VIEW,
    tests/reference/tlc-kraft.md); the state graph is TLC's on what kmc keeps
    (tests/reference/tlc-kraft-kmc-view.md; under the plain VIEW 33794 / 36 and 282201 / 41)."""
    result = run(mode, **LRS)
    assert verdicts(result) == {}
    assert (result.distinct_states, result.depth) == (states, depth)


# -- where kmc keeps more than the VIEW: parity with TLC on what kmc keeps ---------------------


@pytest.mark.slow
@pytest.mark.parametrize("mode,settings,states,depth", [
    ("v3.5", dict(THREE, init_isr_size=2), 1172, 25),
    ("v3.5", LRS, 49663, 37),
    ("v3.5", dict(THREE, init_isr_size=2, leader_shrink_isr_limit=1), 50578, 32),
])
def test_state_graph_matches_tlc_on_what_kmc_keeps(mode: str, settings: dict[str, int], states: int,
                                                   depth: int) -> None:
    """tests/reference/tlc-kraft-kmc-view.md: TLC with aux_vars in the VIEW and __AvoidCycle
    over the messages in flight gives kmc's counts (under the plain VIEW: 1163, 44232, 49453)."""
    result = run(mode, **settings)
    assert (result.distinct_states, result.depth) == (states, depth)


# -- the engines agree ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("limit", ["leader_shrink_isr_limit", pytest.param("unclean_shutdown_limit", marks=pytest.mark.slow)])
def test_vector_equals_scalar(mode: str, limit: str) -> None:
    settings = {**TWO, limit: 1}
    a, b = run(mode, **settings), run(mode, bfs, **settings)
    assert (a.distinct_states, a.generated_states, a.depth) == (b.distinct_states, b.generated_states, b.depth)
    assert verdicts(a) == verdicts(b)


@pytest.mark.slow
def test_vector_equals_scalar_on_a_violation() -> None:
    model, invariants = build("kraft", mode="v3.5", **LRS)
    chosen = [i for i in invariants if i.name == "leader-completeness"]
    a = vector.check(model, chosen, Limits(max_depth=8), SearchOptions(keep_going=True))
    b = bfs.check(model, chosen, Limits(max_depth=8), SearchOptions(keep_going=True))
    assert (a.distinct_states, verdicts(a)) == (b.distinct_states, verdicts(b)) and verdicts(a)


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_bmc_finds_nothing_where_bfs_finds_nothing(mode: str) -> None:
    """The 2-broker anchor (14 states, depth 8): z3 finds no violation in runs of up to 7 steps,
    the whole BFS depth (about 20 s a mode)."""
    from kmc.engines.symbolic import bmc

    model, invariants = build("kraft", mode=mode, **TWO)
    got = bmc.check(model, invariants, Limits(max_depth=8), SearchOptions(keep_going=True))
    assert all(v.trace is None for v in got.invariants.values())


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("KMC_VERY_LONG") != "1",
                    reason="17 minutes of z3 on a shared 2-core machine: set KMC_VERY_LONG=1")
def test_bmc_finds_the_last_replica_standing_at_its_length() -> None:
    """z3 bounded model checking finds leader-completeness violated in exactly 7 steps (TLC's
    length, b2-LRS-v35--LeaderCompletenessProperty), with a trace that replays (`kmc check kraft
    --min-insync-replicas 2 --fence-broker-limit 1 --unclean-shutdown-limit 1 --invariant
    leader-completeness --engine z3 --depth 7` printed it after 1035 s: depth 6 took 385 s)."""
    from kmc.engines.symbolic import bmc
    from kmc.traces.replay import replay

    model, invariants = build("kraft", mode="v3.5", **LRS)
    chosen = [i for i in invariants if i.name == "leader-completeness"]
    got = bmc.check(model, chosen, Limits(max_depth=8))
    trace = got.invariants["leader-completeness"].trace
    assert trace is not None and trace.length == 7
    replay(trace, chosen[0])


@pytest.mark.parametrize("settings,message", [
    (dict(replication_factor=3), "--replication-factor (3) must be at most --brokers (2)"),
    (dict(brokers=3, replication_factor=3, min_insync_replicas=3), "--min-insync-replicas (3) must be at most "
                                                                    "--init-isr-size (2)"),
    (dict(reassignment_limit=1), "--reassignment-limit must be from 0 to 0 (got 1)"),
])
def test_bad_settings_are_one_line(settings: dict[str, int], message: str) -> None:
    from kmc.errors import BadInput

    with pytest.raises(BadInput) as e:
        build("kraft", **settings)
    assert str(e.value) == message
