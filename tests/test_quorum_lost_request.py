"""--no-dropped-begin-quorum-epoch-processed (kip853, --test-liveness): Drop leaves a dropped
BeginQuorumEpoch out of net_messages_processed, as kraft_kip_996's Drop does; the resend
(ResendBeginQuorumEpochRequest) then repeats a request a cut dropped in flight as well as one
lost at send, and --no-resend-begin-quorum-epoch has a counterexample. Against TLC on
kraft_kip_853 with that one edit to its network module's Drop, on top of the copies of
tests/reference/tlc-quorum.md, "Liveness (kip853)" (run ql853-h, with the resend and with it
switched off). Independent source: TLC 2.20, 1 worker, `-lncheck final`; the cfgs are
tests/reference/tlc/quorum/ql853-h-*.cfg (run ql853-h's: the edit is in the specification)."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from kmc import registry
from kmc.api import check
from kmc.engines.result import CheckResult
from kmc.errors import BadInput
from kmc.model.quorum_state import LEADER, VOTED

VEA, ELE = "values-eventually-acked-v1", "eventually-leader-elected"
VEA_W, ELE_W = VEA + "-within-epochs", ELE + "-within-epochs"


@cache
def run(resend: bool, recorded: bool = False) -> CheckResult:
    """ql853-h: two servers, a restart, two connectivity changes, one cut pair."""
    model, invariants = registry.build("quorum", mode="kip853", test_liveness=True, max_restarts=1,
                                       max_connectivity_changes=2, max_disconnected_pairs=1,
                                       resend_begin_quorum_epoch=resend,
                                       dropped_begin_quorum_epoch_processed=recorded)
    result = check(model, invariants, engine="vector", properties=registry.properties_of(model))
    assert result.complete
    return result


def verdicts(result: CheckResult) -> dict[str, bool | None]:
    return {n: v.holds for n, v in result.properties.items()}


# TLC: distinct, depth, generated, the four properties' verdicts (one run per property). kmc
# generates 20 fewer both ways: the SendRequestVote steps where both sides of CanFetchTimeout
# hold, which TLC takes twice (the rule of tlc-quorum.md, counted over kmc's states by the same
# script). The resend's steps are the difference, 10, in both tools.
TLC = {
    True: (11_243, 34, 19_969, {VEA: False, ELE: False, VEA_W: True, ELE_W: True}),
    False: (11_243, 34, 19_959, {VEA: False, ELE: False, VEA_W: False, ELE_W: False}),
}


@pytest.mark.parametrize("resend", [True, False], ids=["resend", "no-resend"])
def test_ql853_h_with_the_dropped_request_unrecorded_matches_tlc(resend: bool) -> None:
    distinct, depth, generated, tlc = TLC[resend]
    result = run(resend)
    assert (result.distinct_states, result.depth) == (distinct, depth)
    assert result.generated_states == generated - 20
    assert verdicts(result) == tlc


def test_the_resend_changes_a_verdict_only_when_drop_leaves_the_request_unrecorded() -> None:
    # the published Drop (tests/test_quorum_resend.py against TLC): the same verdicts both ways
    assert verdicts(run(True, recorded=True)) == verdicts(run(False, recorded=True))
    changed = {n for n, v in verdicts(run(True)).items() if v != verdicts(run(False))[n]}
    assert changed == {VEA_W, ELE_W}


def test_the_counterexample_is_a_voter_left_waiting_for_its_leaders_request() -> None:
    # s1 restarts and stands in epoch 2, s2 votes for it; the pair is cut and s1 becomes leader
    # (its BeginQuorumEpoch lost at send), the link comes back, and s2 stays Voted for ever.
    # TLC's lasso (8, 0) has the same faults after a write, with BecomeLeader before the cut
    # (the request dropped in flight, left unrecorded): the resend cures both. kmc's (7, 0): pin
    trace = run(False).properties[ELE_W].trace
    assert trace is not None and trace.stutters and trace.length == 7
    names = [step.instance.action.name for step in trace.steps[1:] if step.instance is not None]
    assert names == ["restart_with_state", "send_request_vote", "handle_vote_request", "handle_vote_response",
                     "change_network_connectivity", "become_leader", "change_network_connectivity"]
    view: Any = trace.model.schema.view(trace.last)
    assert (view.state[0], view.epoch[0], view.state[1], view.voted_for[1], view.epoch[1]) == (LEADER, 2, VOTED, 0, 2)
    assert view.bqe[0][1][0] == 0 and view.bqe_gone[0][1] == 0 and all(c == 1 for c in view.connected)
    # TLC's values-eventually-acked-within-epochs lasso is (12, 0), kmc's (8, 0) (pin): the same
    # stuck voter, with v1 written by the leader it never hears from
    values = run(False).properties[VEA_W].trace
    assert values is not None and values.stutters and values.length == 8


@pytest.mark.parametrize("settings, message", [
    (dict(mode="kip996", test_liveness=True),
     "--no-dropped-begin-quorum-epoch-processed is modelled for --mode kip853 only"),
    (dict(mode="kip853"), "--no-dropped-begin-quorum-epoch-processed needs --test-liveness in --mode kip853"),
])
def test_bad_combinations_are_refused(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(BadInput, match=message):
        registry.build("quorum", dropped_begin_quorum_epoch_processed=False, **settings)
