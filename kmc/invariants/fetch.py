"""What must hold of the `fetch` model (PROTOCOL.md section 2), and two availability reports."""

from __future__ import annotations

from kmc.invariants.common import type_ok
from kmc.invariants.pairing import for_model
from kmc.model.core import NONE, Backend, Bool, Invariant, StateView, invariant
from kmc.model.fetch import Fetch
from kmc.model.temporal import Property, always_eventually, weak


def current_leader(m: Fetch, s: StateView, X: Backend, r: int) -> Bool:
    """r leads the partition in ZooKeeper's current epoch and knows it."""
    return X.and_(s.alive[r] == 1, s.leader[r] == r, s.quorum_leader == r, s.epoch[r] == s.quorum_epoch)


@invariant("committed-never-lost")
def committed_never_lost(m: Fetch, s: StateView, X: Backend) -> Bool:
    """an acknowledged record stays at its offset in the log of every later leader"""
    return X.forall(m.R, lambda r: X.forall(m.records, lambda k: X.forall(m.offsets, lambda o: X.implies(
        X.and_(current_leader(m, s, X, r), s.acked_offset[k] == o),
        X.and_(o < s.leo[r], s.log_record[r][o] == k),
    ))))


@invariant("no-log-divergence")
def no_log_divergence(m: Fetch, s: StateView, X: Backend) -> Bool:
    """two replicas never hold different records at an offset below both of their HWs"""
    def agree(a: int, b: int, o: int) -> Bool:
        below_both = X.and_(o < s.hw[a], o < s.hw[b], o < s.leo[a], o < s.leo[b])
        return X.implies(below_both, s.log_record[a][o] == s.log_record[b][o])

    return X.forall(m.R, lambda a: X.forall(m.R[a + 1:], lambda b: X.forall(m.offsets, lambda o: agree(a, b, o))))


@invariant("hw-le-leo")
def hw_le_leo(m: Fetch, s: StateView, X: Backend) -> Bool:
    """no replica's HW is above its LEO"""
    return X.forall(m.R, lambda r: s.hw[r] <= s.leo[r])


@invariant("consumed-never-changes")
def consumed_never_changes(m: Fetch, s: StateView, X: Backend) -> Bool:
    """a record a consumer read below the HW stays at its offset in the current leader's log"""
    return X.forall(m.R, lambda r: X.forall(m.offsets, lambda o: X.implies(
        X.and_(current_leader(m, s, X, r), o < s.consumer_offset),
        X.and_(o < s.leo[r], s.log_record[r][o] == s.consumed[o]),
    )))


@invariant("leader-electable", report=True)
def electable_leader(m: Fetch, s: StateView, X: Backend) -> Bool:
    """availability: the partition has a leader, or a live replica the controller may elect"""
    return X.or_(s.quorum_leader != NONE,
                 X.exists(m.R, lambda c: X.and_(s.alive[c] == 1, True if m.unclean else s.quorum_isr[c] == 1)))


@invariant("writes-accepted", report=True)
def writes_accepted(m: Fetch, s: StateView, X: Backend) -> Bool:
    """availability: a leader that knows it leads accepts writes (with acks=all, its ISR has
    min.insync.replicas members); fails while leaderless or NotEnoughReplicas"""
    def enough(r: int) -> Bool:
        return m.isr_size(s, X, r) >= m.min_isr if m.acks == "all" else True

    return X.exists(m.R, lambda r: X.and_(current_leader(m, s, X, r), enough(r)))


@for_model(Fetch)
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


# -- liveness (docs/liveness.md) ------------------------------------------------------------

# Fair: the controller elects, and replicas act on its LeaderAndIsr requests, when they can;
# followers fetch and handle responses when they can. Not fair: producing, crashes, restarts,
# ISR changes and consuming (a run may stop doing them).
LEADERSHIP = (weak("elect"), weak("become_leader", "replica"), weak("become_follower", "replica"))
REPLICATION = (weak("fetch", "follower", "leader"), weak("fetch_response", "follower"))


@always_eventually("leader-elected", fair=LEADERSHIP)
def leader_elected(m: Fetch, s: StateView, X: Backend) -> Bool:
    """a partition does not stay for ever without a leader that knows it leads while a live ISR
    member exists: again and again it has such a leader, or no live ISR member (or the model's
    last leader epoch is used up: --max-leader-epoch bounds elections, Kafka does not)"""
    live_isr_member = X.exists(m.R, lambda r: X.and_(s.alive[r] == 1, s.quorum_isr[r] == 1))
    return X.or_(X.not_(live_isr_member), X.exists(m.R, lambda r: current_leader(m, s, X, r)),
                 s.quorum_epoch == m.max_epoch)


@always_eventually("acked-replicated", fair=LEADERSHIP + REPLICATION)
def acked_replicated(m: Fetch, s: StateView, X: Backend) -> Bool:
    """again and again, every acknowledged record is at its offset on every live ISR member"""
    def on(r: int, k: int) -> Bool:
        return X.forall(m.offsets, lambda o: X.implies(
            s.acked_offset[k] == o, X.and_(o < s.leo[r], s.log_record[r][o] == k)))

    return X.forall(m.R, lambda r: X.implies(
        X.and_(s.alive[r] == 1, s.quorum_isr[r] == 1), X.forall(m.records, lambda k: on(r, k))))


def properties(m: Fetch) -> list[Property]:
    return [leader_elected(m), acked_replicated(m)]
