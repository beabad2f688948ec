"""--no-resend-begin-quorum-epoch (kip853, --test-liveness) against TLC on kraft_kip_853 with
ResendBeginQuorumEpochRequest switched off (its first conjunct `FALSE`), in runs ql853-h and
ql853-i of tests/reference/tlc-quorum.md, "Liveness (kip853)": ql853-b (two servers, a restart)
with two connectivity changes and one cut pair, with one value (h) or none (i, the smallest run
found where the resend is ever enabled). Independent source: TLC 2.20, 1 worker, `-lncheck
final`; the cfgs are tests/reference/tlc/quorum/ql853-h-*.cfg and ql853-i-*.cfg."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from kmc import registry
from kmc.api import check
from kmc.engines.result import CheckResult
from kmc.model.quorum_state import LEADER, VOTED

VEA, ELE = "values-eventually-acked-v1", "eventually-leader-elected"
VEA_W, ELE_W = VEA + "-within-epochs", ELE + "-within-epochs"


@cache
def run(resend: bool = True, values_per_epoch: int = 1) -> CheckResult:
    model, invariants = registry.build("quorum", mode="kip853", test_liveness=True, max_restarts=1,
                                       max_connectivity_changes=2, max_disconnected_pairs=1,
                                       max_values_per_epoch=values_per_epoch, resend_begin_quorum_epoch=resend)
    result = check(model, invariants, engine="vector", properties=registry.properties_of(model))
    assert result.complete
    return result


# TLC: distinct, depth, generated with and without the resend (their difference: the resend's
# steps, which reach no state not reached otherwise), the verdicts (the same both ways). TLC
# takes a SendRequestVote step once per true side of CanFetchTimeout; both sides hold in 20 (h)
# and 5 (i) of kmc's steps (a failed answer from the leader, and the next fetch lost), counted
# over kmc's states by a script (tlc-quorum.md). TLC's lassos: tests/reference/tlc-quorum.md.
TLC = {
    "ql853-h": (1, (11_283, 34), (20_003, 19_993), 20, {VEA: False, ELE: False, VEA_W: False, ELE_W: False}),
    "ql853-i": (0, (2_065, 27), (3_611, 3_609), 5, {ELE: False, ELE_W: False}),  # TLC checked no VEA: no value
}


@pytest.mark.parametrize("run_name", sorted(TLC))
def test_the_resend_changes_no_verdict(run_name: str) -> None:
    values_per_epoch, (distinct, depth), (generated, generated_without), both_sides, tlc = TLC[run_name]
    with_resend, without = run(True, values_per_epoch), run(False, values_per_epoch)
    for result, tlc_generated in ((with_resend, generated), (without, generated_without)):
        assert (result.distinct_states, result.depth) == (distinct, depth)
        assert result.generated_states == tlc_generated - both_sides
        verdicts = {n: v.holds for n, v in result.properties.items()}
        assert {n: verdicts[n] for n in tlc} == tlc
        assert all(verdicts[n] for n in verdicts if n not in tlc)  # VEA, no value (regression pin)


def steps(result: CheckResult) -> tuple[list[str], Any]:
    """The actions of the eventually-leader-elected-within-epochs lasso and its last state."""
    trace = result.properties[ELE_W].trace
    assert trace is not None and trace.stutters and trace.length == 7  # kmc's (7, 0): regression pin
    names = [step.instance.action.name for step in trace.steps[1:] if step.instance is not None]
    return names, trace.model.schema.view(trace.last)


ELECTION = ["restart_with_state", "send_request_vote", "handle_vote_request", "handle_vote_response"]
CUT, LEAD = "change_network_connectivity", "become_leader"


def test_the_lasso_the_resend_cures_has_a_twin_it_does_not() -> None:
    # both ways the lasso ends with s2 Voted for s1, which leads epoch 2, the pair connected.
    # Without the resend: s1 became leader while cut from s2, its BeginQuorumEpoch lost at send
    # (TLC's lasso, (11, 0): the same steps after a fetch and a write). With it: s1 became
    # leader first and the cut dropped the request, which Drop records as processed, so
    # NeedsResend is false for ever (TLC's lasso, (8, 0): the same steps and a write)
    for resend, order, recorded in ((False, [CUT, LEAD, CUT], 0), (True, [LEAD, CUT, CUT], 1)):
        names, view = steps(run(resend))
        assert names == ELECTION + order
        assert (view.state[0], view.state[1], view.voted_for[1], view.epoch[0], view.epoch[1]) == (
            LEADER, VOTED, 0, 2, 2)
        assert view.bqe[0][1][0] == 0 and view.bqe_gone[0][1] == recorded and all(c == 1 for c in view.connected)
