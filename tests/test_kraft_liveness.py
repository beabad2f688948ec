"""The `kraft` model's liveness properties (kmc/invariants/kraft.py): the verdicts TLC gives on
the KRaft specification (tests/reference/tlc-kraft-liveness.md), the lasso of the violation
whose lengths TLC's counterexample shares, and the two explicit engines agreeing."""

from __future__ import annotations

import pytest

from kmc import registry
from kmc.engines.result import CheckResult
from kmc.api import check
from kmc.invariants import kraft as K
from kmc.model.temporal import Fairness

MODES = ("v3.5", "v3.5-avoid-lrs", "kip966")
NAMES = ("eventually-runs-b1", "eventually-runs-b2", "eventually-unfenced-b1", "eventually-unfenced-b2",
         "eventually-metadata-converges", "eventually-write-is-accepted-or-rejected-A",
         "eventually-acknowledged-value-fully-replicated-A")
ALL_HOLD = dict.fromkeys(NAMES, True)


def without(action: str) -> tuple[Fairness, ...]:
    """The specification's fairness without the WF of one action family (the wrapper module's
    NoXSpec in tlc-kraft-liveness.md)."""
    return tuple(f for f in K.SPEC_FAIRNESS if f.action != action)


def run(mode: str, engine: str = "vector", fair: tuple[Fairness, ...] = K.SPEC_FAIRNESS,
        **limits: int) -> CheckResult:
    model, _ = registry.build("kraft", mode=mode, **limits)
    return check(model, [], engine=engine, properties=K.properties(model, fair))


def verdicts(result: CheckResult) -> dict[str, bool | None]:
    return {n: v.holds for n, v in result.properties.items()}


def test_the_properties_are_the_specs_conjuncts() -> None:
    model, _ = registry.build("kraft")
    assert [p.name for p in registry.properties_of(model)] == list(NAMES)


@pytest.mark.parametrize("mode", MODES)
def test_without_perturbations_every_property_holds_as_in_tlc(mode: str) -> None:
    # tlc-kraft-liveness.md, runs L0-*: "No error has been found" with LivenessSpec and all seven
    assert verdicts(run(mode)) == ALL_HOLD


def test_one_fence_every_property_holds_as_in_tlc() -> None:
    # tlc-kraft-liveness.md, run F1-v35: "No error has been found"
    assert verdicts(run("v3.5", fence_broker_limit=1)) == ALL_HOLD


def test_a_fenced_broker_stays_fenced_without_fair_unfencing() -> None:
    # tlc-kraft-liveness.md, runs F1-nounf-v35-Unf1/Unf2: "Temporal properties were violated"
    result = run("v3.5", fair=without("unfence_broker"), fence_broker_limit=1)
    assert verdicts(result) == {**ALL_HOLD, "eventually-unfenced-b1": False, "eventually-unfenced-b2": False}


@pytest.mark.parametrize("mode", MODES)
def test_a_write_waits_for_ever_without_fair_fetch_responses(mode: str) -> None:
    # tlc-kraft-liveness.md, runs L0-nofetchresp-*: violated in every mode; with -fp 108 (v35)
    # and 109 (kip966) TLC's counterexample is "State 1".."State 4" then "State 5: Stuttering":
    # 3 steps, then the run stutters in the state it reached
    result = run(mode, fair=without("receive_fetch_response"))
    assert verdicts(result) == {**ALL_HOLD, "eventually-write-is-accepted-or-rejected-A": False}
    trace = result.properties["eventually-write-is-accepted-or-rejected-A"].trace
    assert trace is not None and trace.stutters and trace.loop == trace.length == 3
    labels = sorted(s.instance.label for s in trace.steps[1:])  # type: ignore[union-attr]
    assert labels == ["receive_fetch_request(leader=b1, follower=b2)", "send_fetch_request(follower=b2, leader=b1)",
                      "write_record_to_leader(broker=b1, value=A)"]


@pytest.mark.parametrize("fair", [K.SPEC_FAIRNESS, without("unfence_broker")], ids=["spec", "no-unfence"])
def test_scalar_and_vector_engines_agree(fair: tuple[Fairness, ...]) -> None:
    vector = run("v3.5", fair=fair, fence_broker_limit=1)
    scalar = run("v3.5", "scalar", fair=fair, fence_broker_limit=1)
    assert verdicts(vector) == verdicts(scalar)
    for name, v in vector.properties.items():
        s = scalar.properties[name]
        if v.trace is not None and s.trace is not None:
            assert (v.trace.loop, v.trace.length) == (s.trace.loop, s.trace.length)
