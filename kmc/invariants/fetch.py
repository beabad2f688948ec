"""What must hold of the `fetch` model (PROTOCOL.md section 2), and two availability reports."""

from __future__ import annotations

from typing import Any

from kmc.invariants.common import type_ok
from kmc.model.core import NONE, Invariant
from kmc.model.fetch import Fetch


def current_leader(m: Fetch, s: Any, X: Any, r: int) -> Any:
    """r leads the partition in ZooKeeper's current epoch and knows it."""
    return X.and_(s.alive[r] == 1, s.leader[r] == r, s.quorum_leader == r, s.epoch[r] == s.quorum_epoch)


def committed_never_lost(m: Fetch) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.and_(*[
            X.implies(
                X.and_(current_leader(m, s, X, r), s.acked_offset[k] == o),
                X.and_(o < s.leo[r], s.log_record[r][o] == k),
            )
            for r in m.R for k in m.records for o in m.offsets
        ])

    return Invariant(
        "committed-never-lost",
        holds,
        "an acknowledged record stays at its offset in the log of every later leader",
    )


def no_log_divergence(m: Fetch) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.and_(*[
            X.implies(
                X.and_(o < s.hw[a], o < s.hw[b], o < s.leo[a], o < s.leo[b]),
                s.log_record[a][o] == s.log_record[b][o],
            )
            for a in m.R for b in m.R if a < b for o in m.offsets
        ])

    return Invariant(
        "no-log-divergence",
        holds,
        "two replicas never hold different records at an offset below both of their HWs",
    )


def hw_le_leo(m: Fetch) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.and_(*[s.hw[r] <= s.leo[r] for r in m.R])

    return Invariant("hw-le-leo", holds, "no replica's HW is above its LEO")


def consumed_never_changes(m: Fetch) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.and_(*[
            X.implies(
                X.and_(current_leader(m, s, X, r), o < s.consumer_offset),
                X.and_(o < s.leo[r], s.log_record[r][o] == s.consumed[o]),
            )
            for r in m.R for o in m.offsets
        ])

    return Invariant(
        "consumed-never-changes",
        holds,
        "a record a consumer read below the HW stays at its offset in the current leader's log",
    )


def electable_leader(m: Fetch) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        candidates = [X.and_(s.alive[c] == 1, True if m.unclean else s.quorum_isr[c] == 1) for c in m.R]
        return X.or_(s.quorum_leader != NONE, *candidates)

    return Invariant(
        "leader-electable",
        holds,
        "availability: the partition has a leader, or a live replica the controller may elect",
        report=True,
    )


def writes_accepted(m: Fetch) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        enough = (lambda r: m.isr_size(s, X, r) >= m.min_isr) if m.acks == "all" else (lambda r: True)
        return X.or_(*[X.and_(current_leader(m, s, X, r), enough(r)) for r in m.R])

    return Invariant(
        "writes-accepted",
        holds,
        "availability: a leader that knows it leads accepts writes (with acks=all, its ISR has "
        "min.insync.replicas members); fails while leaderless or NotEnoughReplicas",
        report=True,
    )


def invariants(m: Fetch) -> list[Invariant]:
    return [
        committed_never_lost(m),
        no_log_divergence(m),
        hw_le_leo(m),
        consumed_never_changes(m),
        type_ok(m.schema),
        electable_leader(m),
        writes_accepted(m),
    ]


# ---------------------------------------------------------------------------------------
# Lemmas: invariants that strengthen k-induction proofs (`kmc prove --lemma NAME`).
# `kmc check` does not check them by default.
# ---------------------------------------------------------------------------------------


def lemmas(m: Fetch) -> list[Invariant]:
    return []
