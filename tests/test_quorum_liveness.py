"""The quorum model's liveness (--test-liveness, kip853) against TLC on the specification
kraft/kip_853 with TestLiveness = TRUE, LivenessSpec and the edits of
tests/reference/tlc-quorum.md, "Liveness" (the +ctrs VIEW with the processed BeginQuorumEpoch
pairs, MaxEpoch kept as a bound, the -within-epochs properties, CheckQuorumResign switched off
for --no-check-quorum). Independent source: TLC 2.20, 1 worker; the cfgs are
tests/reference/tlc/quorum/ql853-*.cfg."""

from __future__ import annotations

from typing import Any

import pytest

from kmc import registry
from kmc.api import check
from kmc.engines.result import CheckResult
from kmc.errors import BadInput

VEA, ELE = "values-eventually-acked-v1", "eventually-leader-elected"
VEA_W, ELE_W = VEA + "-within-epochs", ELE + "-within-epochs"
THREE = dict(hosts=3, init_cluster_size=3, min_cluster_size=3, max_cluster_size=3, max_spawned_servers=3)
PARTITION = dict(max_connectivity_changes=1, max_disconnected_pairs=1)


def run(engine: str = "vector", mode: str = "kip853", **settings: Any) -> CheckResult:
    model, invariants = registry.build("quorum", mode=mode, test_liveness=True, **settings)
    result = check(model, invariants, engine=engine, properties=registry.properties_of(model))
    assert result.complete
    return result


def figures(result: CheckResult) -> tuple[int, int, int]:
    return result.distinct_states, result.generated_states, result.depth


def verdicts(result: CheckResult) -> dict[str, bool | None]:
    return {n: v.holds for n, v in result.properties.items()}


def lasso(result: CheckResult, name: str) -> tuple[int, int]:
    """(prefix steps, cycle steps; 0 when the run stutters at the end of the prefix)."""
    trace = result.properties[name].trace
    assert trace is not None and trace.loop is not None
    return trace.loop, 0 if trace.stutters else trace.length - trace.loop


def test_the_properties_come_with_test_liveness_only() -> None:
    model, _ = registry.build("quorum", mode="kip853")
    assert registry.properties_of(model) == []
    model, _ = registry.build("quorum", mode="kip853", test_liveness=True, values=2, max_values_per_epoch=2)
    assert [p.name for p in registry.properties_of(model)] == [
        "values-eventually-acked-v1", "values-eventually-acked-v2", ELE, "values-eventually-acked-v1-within-epochs",
        "values-eventually-acked-v2-within-epochs", ELE_W]


# TLC: (distinct, generated, depth) and per property holds or (prefix, cycle) of its lasso
TLC = {
    "ql853-a": ({}, (20, 27, 10), {VEA: True, ELE: True, VEA_W: True, ELE_W: True}),
    "ql853-b": (dict(max_restarts=1), (1_101, 1_640, 27), {VEA: True, ELE: (19, 0), VEA_W: True, ELE_W: True}),
    "ql853-c": (dict(max_crashes=1, max_disconnected_pairs=1), (47, 87, 11),
                {VEA: (4, 0), ELE: (3, 0), VEA_W: True, ELE_W: True}),
    "ql853-d": (PARTITION, (74, 127, 13), {VEA: (6, 0), ELE: (6, 0), VEA_W: True, ELE_W: True}),
}
# kmc's lassos are shortest (breadth-first); TLC's are the first its search met
KMC_LASSO = {("ql853-b", ELE): (8, 0), ("ql853-d", ELE): (5, 0)}  # regression pins, shorter than TLC's


@pytest.mark.parametrize("run_name", sorted(TLC))
def test_two_servers_match_tlc(run_name: str) -> None:
    settings, tlc_figures, tlc = TLC[run_name]
    result = run(**settings)
    assert figures(result) == tlc_figures
    assert verdicts(result) == {n: v is True for n, v in tlc.items()}
    for name, v in tlc.items():
        if v is not True:
            assert lasso(result, name) == KMC_LASSO.get((run_name, name), v)


def test_scalar_and_vector_engines_agree() -> None:
    vector, scalar = run(**PARTITION), run("scalar", **PARTITION)
    assert figures(vector) == figures(scalar) and verdicts(vector) == verdicts(scalar)
    for name in vector.properties:
        if not vector.properties[name].holds:
            assert lasso(vector, name) == lasso(scalar, name)


def test_without_check_quorum_a_partitioned_leader_keeps_a_value_for_ever() -> None:
    # ql853-g (CheckQuorumResign switched off): TLC 2,156 distinct, 4,567 generated, depth 28;
    # ValuesEventuallyAckedWithinEpochs violated, its lasso 16 steps then a cycle of 3 (back to
    # state 17); kmc's 14 + 3 (regression pin): s1 cut from s2, s2 elected in epoch 2 with s3,
    # s1 leading epoch 1 with v1 pending while s3 fetches from s2 for ever
    result = run(check_quorum=False, **THREE, **PARTITION)
    assert figures(result) == (2_156, 4_567, 28)
    assert verdicts(result) == {VEA: False, ELE: False, VEA_W: False, ELE_W: True}
    assert lasso(result, VEA_W) == (14, 3)
    assert lasso(result, VEA) == lasso(result, ELE) == (9, 0)  # TLC: 9 steps, then stuttering, both


@pytest.mark.slow
def test_with_check_quorum_the_partitioned_leader_resigns() -> None:
    # ql853-f: the same with CheckQuorumResign; TLC 14,150 distinct, 28,919 generated, depth
    # 34, ValuesEventuallyAckedWithinEpochs and EventuallyLeaderElected hold; ValuesEventuallyAcked
    # violated (by the epoch bound), TLC's lasso 20 steps then a cycle of 3, kmc's 18 + 3 (pin)
    result = run(**THREE, **PARTITION)
    assert figures(result) == (14_150, 28_919, 34)
    assert verdicts(result) == {VEA: False, ELE: True, VEA_W: True, ELE_W: True}
    assert lasso(result, VEA) == (18, 3)


@pytest.mark.parametrize("settings, message", [
    (dict(mode="kip996", check_quorum=False), "--no-check-quorum is modelled for --mode kip853 only"),
    (dict(mode="kip853", follower_rejects_pre_vote=False),
     "--no-follower-rejects-pre-vote is modelled for --mode kip996 only"),
    (dict(mode="kip853", resend_begin_quorum_epoch=False),
     "--no-resend-begin-quorum-epoch needs --test-liveness in --mode kip853"),
])
def test_bad_combinations_are_refused(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(BadInput, match=message):
        registry.build("quorum", **settings)
