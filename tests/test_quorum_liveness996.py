"""The quorum model's liveness in mode kip996 (--test-liveness) against TLC on the specification
kraft/kip_996 with TestLiveness = TRUE, LivenessSpec and the edits of tests/reference/tlc-quorum.md,
"Liveness (kip996)" (a VIEW that keeps what the actions read and drops the pre-vote count,
MaxEpoch kept as a bound, the -within-epochs properties and NotStuckInProspective per server,
GrantPreVote without has_fetch_success for --no-follower-rejects-pre-vote). Independent source:
TLC 2.20, 1 worker; the cfgs are tests/reference/tlc/quorum/ql996-*.cfg."""

from __future__ import annotations

from typing import Any

import pytest

from kmc import registry
from kmc.engines.result import CheckResult
from tests.test_quorum_liveness import THREE, figures, lasso, run, verdicts

VEA, ELE = "values-eventually-acked-v1", "eventually-leader-elected"
NSP1, NSP2, NSP3 = (f"not-stuck-in-prospective-s{i}" for i in (1, 2, 3))
SPEC = (VEA, ELE, NSP1, NSP2)
WITHIN = tuple(p + "-within-epochs" for p in SPEC)
# 3 servers, one connectivity change, no value written: a follower cut from its leader only
CUT = dict(THREE, max_connectivity_changes=1, max_values_per_epoch=0)


def run996(**settings: Any) -> CheckResult:
    return run(mode="kip996", **settings)


def test_the_properties_of_kip996() -> None:
    model, _ = registry.build("quorum", mode="kip996", test_liveness=True)
    assert [p.name for p in registry.properties_of(model)] == [*SPEC, *WITHIN]


# TLC: (distinct, depth); every property holds
HOLD = {
    "ql996-a": ({}, (20, 10)),
    "ql996-c": (THREE, (264, 16)),
    "ql996-d": (dict(max_connectivity_changes=1), (40, 11)),
}


@pytest.mark.parametrize("run_name", sorted(HOLD))
def test_where_every_property_holds_kmc_matches_tlc(run_name: str) -> None:
    settings, tlc = HOLD[run_name]
    result = run996(**settings)
    distinct, _, depth = figures(result)
    assert (distinct, depth) == tlc
    assert all(verdicts(result).values()) and len(result.properties) == len(SPEC + WITHIN) + 2 * (run_name == "ql996-c")
