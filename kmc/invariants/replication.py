"""What must hold of the `replication` model (PROTOCOL.md section 1)."""

from __future__ import annotations

from typing import Any

from kmc.invariants.common import type_ok
from kmc.model.core import NONE, Invariant
from kmc.model.replication import Replication


def _isr_holds_committed(m: Replication, s: Any, X: Any, leader: int, member_flags: list[Any]) -> Any:
    """Every member flagged holds, below the leader's HW, the leader's records at the same offsets."""
    hw = s.hw[leader]
    return X.and_(
        *[
            X.implies(X.and_(member_flags[r] == 1, o < hw), m.same_record(s, X, leader, r, o))
            for r in m.R
            for o in m.offsets
        ]
    )


def weak_isr(m: Replication) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.and_(
            *[X.implies(s.leader[l] == l, _isr_holds_committed(m, s, X, l, s.isr[l])) for l in m.R]
        )

    return Invariant(
        "weak-isr",
        holds,
        "all data below a presumed leader's high watermark is on every member of its presumed ISR",
    )


def strong_isr(m: Replication) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.and_(
            *[X.implies(s.leader[l] == l, _isr_holds_committed(m, s, X, l, s.quorum_isr)) for l in m.R]
        )

    return Invariant(
        "strong-isr",
        holds,
        "all data below a presumed leader's high watermark is on every member of the quorum ISR "
        "(committed data survives any clean election)",
    )


def leader_in_isr(m: Replication) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.implies(s.quorum_leader != NONE, X.at(s.quorum_isr, s.quorum_leader) == 1)

    return Invariant("leader-in-isr", holds, "when the quorum names a leader, it is in the quorum ISR")


def log_type_ok(m: Replication) -> Invariant:
    base = type_ok(m.schema)

    def holds(s: Any, X: Any) -> Any:
        slots = [
            X.and_((s.log_id[r][o] == NONE) == (o >= s.end_offset[r]), (s.log_epoch[r][o] == NONE) == (o >= s.end_offset[r]))
            for r in m.R
            for o in m.offsets
        ]
        return X.and_(base.predicate(s, X), *slots)

    return Invariant("type-ok", holds, "every field within its range; empty log slots exactly at and above the end offset")


def invariants(m: Replication) -> list[Invariant]:
    return [weak_isr(m), strong_isr(m), leader_in_isr(m), log_type_ok(m)]


# ---------------------------------------------------------------------------------------
# Lemmas: invariants that strengthen k-induction proofs (`kmc prove --lemma NAME`).
# `kmc check` does not check them by default; each says in which modes it holds.
# ---------------------------------------------------------------------------------------


def leader_knows_epoch(m: Replication) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.and_(*[(s.leader[r] == NONE) == (s.epoch[r] == NONE) for r in m.R])

    return Invariant("leader-knows-epoch", holds,
                     "lemma (every mode): a replica knows a leader exactly when it knows a leader epoch")


def leader_in_own_isr(m: Replication) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.and_(*[X.and_(X.implies(s.leader[r] == l, s.isr[r][l] == 1),
                               X.implies(s.leader[r] == NONE, s.isr[r][l] == 0)) for r in m.R for l in m.R])

    return Invariant("leader-in-own-isr", holds,
                     "lemma (every mode): the leader a replica presumes is in the ISR it presumes (empty without a leader)")


def request_leader_in_isr(m: Replication) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.and_(*[X.implies(s.request_leader[e] == r, s.request_isr[e][r] == 1) for e in m.epochs for r in m.R])

    return Invariant("request-leader-in-isr", holds,
                     "lemma (every mode): a LeaderAndIsr request's leader is in the request's ISR")


def counters_ahead(m: Replication) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        known = [s.epoch[r] < s.next_leader_epoch for r in m.R]
        logged = [X.and_(s.log_epoch[r][o] < s.next_leader_epoch, s.log_id[r][o] < s.next_record_id)
                  for r in m.R for o in m.offsets]
        unsent = [X.implies(s.next_leader_epoch <= e, X.and_(s.request_leader[e] == NONE,
                                                             *[s.request_isr[e][x] == 0 for x in m.R]))
                  for e in m.epochs]
        first = X.implies(s.next_leader_epoch == 0, s.quorum_leader == NONE)
        return X.and_(*known, *logged, *unsent, first)

    return Invariant("counters-ahead", holds,
                     "lemma (every mode): epochs and record ids in use were handed out; requests not yet sent are empty")


def hw_le_end_offset(m: Replication) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.and_(*[s.hw[r] <= s.end_offset[r] for r in m.R])

    return Invariant("hw-le-end-offset", holds, "lemma (every mode): no replica's high watermark is above its end offset")


def lemmas(m: Replication) -> list[Invariant]:
    """Proof aids, each an invariant of every reachable state in the modes it names
    (tests check each with the explicit engine); see docs/symbolic.md for the proofs that use them."""
    return [leader_knows_epoch(m), leader_in_own_isr(m), request_leader_in_isr(m), counters_ahead(m), hw_le_end_offset(m)]
