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


def lemmas(m: Replication) -> list[Invariant]:
    return []
