"""--no-resend-begin-quorum-epoch (kip853, --test-liveness) against TLC on kraft_kip_853 with
ResendBeginQuorumEpochRequest switched off (its first conjunct `FALSE`), in run ql853-h of
tests/reference/tlc-quorum.md, "Liveness (kip853)": ql853-b (two servers, a restart) with two
connectivity changes and one cut pair, the smallest run where the resend is ever enabled.
Independent source: TLC 2.20, 1 worker, `-lncheck final`; the cfgs are ql853-b's with
`MaxConnectivityChanges = 2` and `MaxDisconnectedPairs = 1`."""

from __future__ import annotations

from functools import cache

from kmc import registry
from kmc.api import check
from kmc.engines.result import CheckResult
from kmc.model.quorum_state import LEADER, VOTED

VEA, ELE = "values-eventually-acked-v1", "eventually-leader-elected"
VEA_W, ELE_W = VEA + "-within-epochs", ELE + "-within-epochs"
# TLC takes a SendRequestVote step once per true side of CanFetchTimeout; both sides hold in
# 20 of kmc's steps (a failed fetch answer from the leader, and the next fetch lost), counted
# over kmc's states by a script (tests/reference/tlc-quorum.md, "Liveness (kip853)")
BOTH_SIDES = 20


@cache
def run(resend: bool = True) -> CheckResult:
    model, invariants = registry.build("quorum", mode="kip853", test_liveness=True, max_restarts=1,
                                       max_connectivity_changes=2, max_disconnected_pairs=1,
                                       resend_begin_quorum_epoch=resend)
    result = check(model, invariants, engine="vector", properties=registry.properties_of(model))
    assert result.complete
    return result


def test_the_resend_changes_no_verdict() -> None:
    # TLC: 11,283 distinct states and depth 34 both ways; 20,003 generated with the resend,
    # 19,993 without: the resend's 10 steps all reach states reached otherwise. Every property
    # violated both ways (TLC's lassos: with (16, 0), (6, 0), (8, 0), (8, 0); without (8, 0),
    # (7, 0), (8, 0), (11, 0), in the order VEA, ELE, VEA-W, ELE-W)
    with_resend, without = run(), run(resend=False)
    assert (with_resend.distinct_states, with_resend.depth) == (without.distinct_states, without.depth) == (11_283, 34)
    assert with_resend.generated_states == 20_003 - BOTH_SIDES
    assert without.generated_states == 19_993 - BOTH_SIDES
    for result in (with_resend, without):
        assert {n: v.holds for n, v in result.properties.items()} == {VEA: False, ELE: False, VEA_W: False,
                                                                       ELE_W: False}


def test_a_begin_quorum_epoch_dropped_in_flight_is_never_resent() -> None:
    # with the resend, the lasso ends with s2 Voted for s1, which leads epoch 2: s1's
    # BeginQuorumEpoch was in flight when the pair was cut, the cut recorded it as processed
    # (NeedsResend is then false for ever), and the pair was connected again (TLC's lasso: the
    # same steps and a ClientRequest, (8, 0); kmc's (7, 0) is a regression pin)
    trace = run().properties[ELE_W].trace
    assert trace is not None and trace.stutters and trace.length == 7
    names = [step.instance.action.name for step in trace.steps[1:] if step.instance is not None]
    assert names == ["restart_with_state", "send_request_vote", "handle_vote_request", "handle_vote_response",
                     "become_leader", "change_network_connectivity", "change_network_connectivity"]
    view = trace.model.schema.view(trace.last)
    assert (view.state[0], view.state[1], view.voted_for[1], view.epoch[0], view.epoch[1]) == (LEADER, VOTED, 0, 2, 2)
    assert view.bqe_gone[0][1] == 1 and view.bqe[0][1][0] == 0 and all(c == 1 for c in view.connected)
