"""--no-resend-begin-quorum-epoch in mode kip996: ResendBeginQuorumEpochRequest out of Next.
kraft_kip_996's network forgets a request dropped in flight (its `Drop` leaves
net_messages_processed alone, a2ba5f3), so there the resend repeats any lost request; but with
--test-liveness a connectivity change must leave a voter connected to half the other members
(`LIVENESS_ElectionsCanProgress`), so two servers are never cut apart, no request is lost, and
the resend is never enabled. Runs ql996-d and ql996-h of tests/reference/tlc-quorum.md,
"Liveness (kip996)"; independent source: TLC 2.20, 1 worker, on kraft_kip_996 with that file's
edits (the cfgs are tests/reference/tlc/quorum/ql996-*.cfg)."""

from __future__ import annotations

from functools import cache

import pytest

from kmc import registry
from kmc.engines.result import CheckResult
from kmc.errors import BadInput
from tests.test_quorum_liveness import figures, lasso, run, verdicts

ELE, NSP1 = "eventually-leader-elected", "not-stuck-in-prospective-s1"
# ql996-h: ql996-b (two servers, a restart) with two connectivity changes and no value written,
# kip996's analogue of ql853-h/i, where kip853 enables the resend
H = dict(max_restarts=1, max_connectivity_changes=2, max_values_per_epoch=0)


@cache
def run_h(resend: bool) -> CheckResult:
    return run(mode="kip996", resend_begin_quorum_epoch=resend, **H)


def test_the_switch_takes_the_resend_out_of_next() -> None:
    for test_liveness in (False, True):  # kip996's resend is in Next whatever TestLiveness is
        model, _ = registry.build("quorum", mode="kip996", test_liveness=test_liveness,
                                  resend_begin_quorum_epoch=False)
        assert "resend_begin_quorum_epoch_request" not in [a.name for a in model.actions()]
        model, _ = registry.build("quorum", mode="kip996", test_liveness=test_liveness)
        assert "resend_begin_quorum_epoch_request" in [a.name for a in model.actions()]


def test_kip853_still_needs_test_liveness() -> None:
    with pytest.raises(BadInput, match="--no-resend-begin-quorum-epoch needs --test-liveness in --mode kip853"):
        registry.build("quorum", mode="kip853", resend_begin_quorum_epoch=False)


def test_ql996_d_without_the_resend_matches_tlc() -> None:
    # TLC (ql996-d, with the resend): 40 distinct, depth 11, every property holds
    result = run(mode="kip996", resend_begin_quorum_epoch=False, max_connectivity_changes=1)
    distinct, _, depth = figures(result)
    assert (distinct, depth) == (40, 11)
    assert all(verdicts(result).values())


# TLC (ql996-h, -lncheck final): 14,022 distinct, 50,449 generated, depth 35 with and without
# the resend; EventuallyLeaderElected and NotStuckInProspective of s1 violated both ways (TLC's
# lassos (14, 0) and (25, 0)); the six properties of ql996-h-hold.cfg hold both ways
TLC_H = (14_022, 35)


def test_two_servers_never_enable_the_resend() -> None:
    with_resend, without = run_h(True), run_h(False)
    for result in (with_resend, without):
        distinct, generated, depth = figures(result)
        assert (distinct, depth) == TLC_H
        assert generated == 39_787  # regression pin: TLC 50,449 (a step per true disjunct of a guard)
        assert (lasso(result, ELE), lasso(result, NSP1)) == ((8, 0), (21, 0))  # regression pin
    # the same graph both ways: the resend takes no step (generated equal)
    assert figures(with_resend) == figures(without)
    for result in (with_resend, without):
        violated = {name for name, holds in verdicts(result).items() if not holds}
        assert violated == {ELE, NSP1}  # TLC's: the bound's, every -within-epochs form holds
