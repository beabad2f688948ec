"""The quorum model's reconfiguration under --test-liveness (AddVoterLivenessCondition,
RemoveVoterLivenessCondition, ReconfigurationNotStuck) against TLC on kraft/kip_853 and
kraft/kip_996 with TestLiveness = TRUE, LivenessSpec and the edits of
tests/reference/tlc-quorum.md, "Liveness with reconfiguration" (those of the liveness runs, plus
ReconfigurationNotStuck one configuration id at a time, RNSn, and its -within-epochs form,
RNSWn). Independent source: TLC 2.20, 1 worker; the cfgs are
tests/reference/tlc/quorum/qr853-*.cfg and qr996-*.cfg."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from kmc import registry
from kmc.engines.result import CheckResult
from tests.test_quorum_liveness import lasso, verdicts
from tests.test_quorum_liveness import run as run_liveness

VEA, ELE, RNS1, RNS2 = ("values-eventually-acked-v1", "eventually-leader-elected",
                        "reconfiguration-not-stuck-config-1", "reconfiguration-not-stuck-config-2")
NSP = tuple(f"not-stuck-in-prospective-s{i}" for i in (1, 2, 3))
W = "-within-epochs"
# one server, a second one started and added
ADD = dict(hosts=1, init_cluster_size=1, min_cluster_size=1, max_cluster_size=2, max_spawned_servers=2,
           max_add_reconfigs=1)
# three servers, one removed, no election (MaxEpoch 1)
REMOVE = dict(hosts=3, init_cluster_size=3, min_cluster_size=2, max_cluster_size=3, max_spawned_servers=3,
              max_remove_reconfigs=1, max_epoch=1)


@cache
def run(mode: str, engine: str = "vector", **settings: Any) -> CheckResult:
    return run_liveness(engine, mode, **settings)


def test_one_property_per_configuration_id() -> None:
    # ReconfigurationNotStuck == \A config_id \in 1..(MaxAddReconfigs + MaxRemoveReconfigs) : []<>...
    model, _ = registry.build("quorum", mode="kip853", test_liveness=True, **{**REMOVE, "max_add_reconfigs": 1})
    names = [p.name for p in registry.properties_of(model)]
    assert names == [VEA, RNS1, RNS2, ELE, VEA + W, RNS1 + W, RNS2 + W, ELE + W]
    assert {p.form for p in registry.properties_of(model) if "reconfiguration" in p.name} == {"always_eventually"}


def test_a_single_voter_adds_the_new_server() -> None:
    # qr853-b: TLC 3,975 distinct, 10,096 generated, depth 31; ReconfigurationNotStuck,
    # EventuallyLeaderElected and their WithinEpochs forms hold; ValuesEventuallyAcked and its
    # WithinEpochs form violated, 1 step then stuttering (a lone voter's write is never
    # acknowledged: acknowledgements come with fetches)
    result = run("kip853", **ADD)
    assert (result.distinct_states, result.depth) == (3_975, 31)
    assert result.generated_states == 8_866  # regression pin (TLC 10,096: steps per true disjunct)
    assert verdicts(result) == {VEA: False, RNS1: True, ELE: True, VEA + W: False, RNS1 + W: True, ELE + W: True}
    assert lasso(result, VEA) == lasso(result, VEA + W) == (1, 0)


def test_a_removal_without_elections() -> None:
    # qr853-a: TLC 12,341 distinct, 36,923 generated, depth 36; the WithinEpochs forms hold;
    # RNS1 violated (TLC: 26 steps, then a cycle of 12), EventuallyLeaderElected (30, 9),
    # ValuesEventuallyAcked (27, 12): the leader removes itself and resigns, and no one may
    # stand for election in epoch 1
    result = run("kip853", **REMOVE)
    assert (result.distinct_states, result.generated_states, result.depth) == (12_341, 36_923, 36)
    assert verdicts(result) == {VEA: False, RNS1: False, ELE: False, VEA + W: True, RNS1 + W: True, ELE + W: True}
    # regression pins
    assert (lasso(result, RNS1), lasso(result, ELE), lasso(result, VEA)) == ((22, 9), (22, 9), (23, 9))


@pytest.mark.slow
def test_a_removal_then_an_addition_without_elections() -> None:
    # qr853-d: qr853-a with MaxAddReconfigs 1 (the removed server added back; configuration ids
    # 1 and 2): TLC 41,043 distinct, 108,779 generated, depth 37 (its RNSW2 run);
    # ReconfigurationNotStuck for id 2 violated, TLC: 24 steps, then a cycle of 9; RNSW2 holds
    result = run("kip853", **REMOVE, max_add_reconfigs=1)
    assert (result.distinct_states, result.generated_states, result.depth) == (41_043, 108_779, 37)
    assert verdicts(result) == {VEA: False, RNS1: False, RNS2: False, ELE: False,
                                VEA + W: True, RNS1 + W: True, RNS2 + W: True, ELE + W: True}
    assert lasso(result, RNS2) == (22, 9)  # regression pin


def test_kip996_a_removal_without_elections() -> None:
    # qr996-b: kip996, qr853-a's servers with no value: TLC 6,688 distinct, 17,253 generated,
    # depth 34 (its RNS1 run); RNS1 violated, TLC: 23 steps, then stuttering; EventuallyLeaderElected
    # violated (TLC: 26 steps, then stuttering); ValuesEventuallyAcked, NotStuckInProspective of s1-s3 and the
    # WithinEpochs forms of RNS1 and EventuallyLeaderElected hold
    result = run("kip996", **REMOVE, max_values_per_epoch=0)
    assert (result.distinct_states, result.depth) == (6_688, 34)
    assert result.generated_states == 16_581  # regression pin (TLC 17,253: steps per true disjunct)
    holds = {VEA: True, RNS1: False, ELE: False, **{n: True for n in NSP}}
    assert verdicts(result) == {**holds, **{n + W: True for n in holds}}
    assert (lasso(result, RNS1), lasso(result, ELE)) == ((22, 0), (22, 0))  # regression pins


def test_kip996_a_single_voter_adds_the_new_server() -> None:
    # qr996-a: kip996, qr853-b's servers: TLC 147 distinct, 275 generated, depth 20 (its run of
    # the properties that hold: EventuallyLeaderElected, RNS1, NotStuckInProspective of s1 and
    # s2, and their WithinEpochs forms); ValuesEventuallyAcked violated, TLC: 3 steps, then
    # stuttering, and its WithinEpochs form too (TLC: the same)
    result = run("kip996", **ADD)
    assert (result.distinct_states, result.depth) == (147, 20)
    assert result.generated_states == 233  # regression pin (TLC 275: steps per true disjunct)
    holds = {VEA: False, RNS1: True, ELE: True, NSP[0]: True, NSP[1]: True}
    assert verdicts(result) == {**holds, **{n + W: v for n, v in holds.items()}}
    assert lasso(result, VEA) == lasso(result, VEA + W) == (1, 0)  # regression pins


def test_scalar_and_vector_engines_agree() -> None:
    vector, scalar = run("kip996", **ADD), run("kip996", "scalar", **ADD)
    assert (vector.distinct_states, vector.generated_states) == (scalar.distinct_states, scalar.generated_states)
    assert verdicts(vector) == verdicts(scalar)
    assert lasso(vector, VEA) == lasso(scalar, VEA)
