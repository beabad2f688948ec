"""What must hold of the `replication` model (PROTOCOL.md section 1)."""

from __future__ import annotations

from kmc.invariants.common import type_ok
from kmc.invariants.pairing import for_model
from kmc.model.core import NONE, Backend, Bool, Int, Invariant, StateView, invariant
from kmc.model.replication import Replication
from kmc.model.temporal import Property, always_eventually, eventually, strong, weak


def _isr_holds_committed(m: Replication, s: StateView, X: Backend, leader: int, member_flags: list[Int]) -> Bool:
    """Every member flagged holds, below the leader's HW, the leader's records at the same offsets."""
    hw = s.hw[leader]
    return X.forall(m.R, lambda r: X.forall(m.offsets, lambda o: X.implies(
        X.and_(member_flags[r] == 1, o < hw), m.same_record(s, X, leader, r, o))))


@invariant("weak-isr")
def weak_isr(m: Replication, s: StateView, X: Backend) -> Bool:
    """all data below a presumed leader's high watermark is on every member of its presumed ISR"""
    return X.forall(m.R, lambda l: X.implies(s.leader[l] == l, _isr_holds_committed(m, s, X, l, s.isr[l])))


@invariant("strong-isr")
def strong_isr(m: Replication, s: StateView, X: Backend) -> Bool:
    """all data below a presumed leader's high watermark is on every member of the quorum ISR
    (committed data survives any clean election)"""
    return X.forall(m.R, lambda l: X.implies(s.leader[l] == l, _isr_holds_committed(m, s, X, l, s.quorum_isr)))


@invariant("leader-in-isr")
def leader_in_isr(m: Replication, s: StateView, X: Backend) -> Bool:
    """when the quorum names a leader, it is in the quorum ISR"""
    return X.implies(s.quorum_leader != NONE, X.at(s.quorum_isr, s.quorum_leader) == 1)


def log_type_ok(m: Replication) -> Invariant:
    base = type_ok(m.schema)

    def holds(s: StateView, X: Backend) -> Bool:
        def slot_empty_past_end(r: int, o: int) -> Bool:
            past_end = o >= s.end_offset[r]
            return X.and_(X.iff(s.log_id[r][o] == NONE, past_end), X.iff(s.log_epoch[r][o] == NONE, past_end))

        return X.and_(base.predicate(s, X),
                      X.forall(m.R, lambda r: X.forall(m.offsets, lambda o: slot_empty_past_end(r, o))))

    return Invariant("type-ok", holds, "every field within its range; empty log slots exactly at and above the end offset")


@for_model(Replication)
def invariants(m: Replication) -> list[Invariant]:
    return [weak_isr(m), strong_isr(m), leader_in_isr(m), log_type_ok(m)]


# ---------------------------------------------------------------------------------------
# Lemmas: invariants that strengthen k-induction proofs (`kmc prove --lemma NAME`).
# `kmc check` does not check them by default; each says in which modes it holds.
# ---------------------------------------------------------------------------------------


@invariant("leader-knows-epoch")
def leader_knows_epoch(m: Replication, s: StateView, X: Backend) -> Bool:
    """lemma (every mode): a replica knows a leader exactly when it knows a leader epoch"""
    return X.forall(m.R, lambda r: X.iff(s.leader[r] == NONE, s.epoch[r] == NONE))


@invariant("leader-in-own-isr")
def leader_in_own_isr(m: Replication, s: StateView, X: Backend) -> Bool:
    """lemma (every mode): the leader a replica presumes is in the ISR it presumes (empty without a leader)"""
    return X.forall(m.R, lambda r: X.forall(m.R, lambda l: X.and_(
        X.implies(s.leader[r] == l, s.isr[r][l] == 1),
        X.implies(s.leader[r] == NONE, s.isr[r][l] == 0))))


@invariant("request-leader-in-isr")
def request_leader_in_isr(m: Replication, s: StateView, X: Backend) -> Bool:
    """lemma (every mode): a LeaderAndIsr request's leader is in the request's ISR"""
    return X.forall(m.epochs, lambda e: X.forall(m.R, lambda r: X.implies(s.request_leader[e] == r,
                                                                          s.request_isr[e][r] == 1)))


@invariant("counters-ahead")
def counters_ahead(m: Replication, s: StateView, X: Backend) -> Bool:
    """lemma (every mode): epochs and record ids in use were handed out; requests not yet sent are empty"""
    known = X.forall(m.R, lambda r: s.epoch[r] < s.next_leader_epoch)
    logged = X.forall(m.R, lambda r: X.forall(m.offsets, lambda o: X.and_(
        s.log_epoch[r][o] < s.next_leader_epoch, s.log_id[r][o] < s.next_record_id)))
    unsent = X.forall(m.epochs, lambda e: X.implies(
        s.next_leader_epoch <= e,
        X.and_(s.request_leader[e] == NONE, X.forall(m.R, lambda x: s.request_isr[e][x] == 0))))
    first = X.implies(s.next_leader_epoch == 0, s.quorum_leader == NONE)
    return X.and_(known, logged, unsent, first)


@invariant("hw-le-end-offset")
def hw_le_end_offset(m: Replication, s: StateView, X: Backend) -> Bool:
    """lemma (every mode): no replica's high watermark is above its end offset"""
    return X.forall(m.R, lambda r: s.hw[r] <= s.end_offset[r])


def lemmas(m: Replication) -> list[Invariant]:
    """Proof aids, each an invariant of every reachable state in the modes it names
    (tests check each with the explicit engine); see docs/symbolic.md for the proofs that use them."""
    return [leader_knows_epoch(m), leader_in_own_isr(m), request_leader_in_isr(m), counters_ahead(m), hw_le_end_offset(m)]


# -- liveness (docs/liveness.md; TLC's verdicts: tests/reference/tlc-liveness.md) ------------

# The fairness of the specification's own `Spec` (the same five conjuncts in every module),
# plus WF(ControllerElectLeader): the controller elects a leader when it can.
SPEC_FAIRNESS = (
    strong("leader_inc_high_watermark"), strong("leader_expand_isr"), strong("leader_write"),
    weak("become_follower"), weak("become_leader"), weak("controller_elect_leader"),
)


@eventually("leader-elected", fair=SPEC_FAIRNESS)
def leader_elected(m: Replication, s: StateView, X: Backend) -> Bool:
    """the controller eventually names a leader (TLA+: <>(quorumState.leader # None)); fails: the
    controller may shrink the ISR to nobody first"""
    return s.quorum_leader != NONE


@always_eventually("hw-catches-up", fair=SPEC_FAIRNESS)
def hw_catches_up(m: Replication, s: StateView, X: Backend) -> Bool:
    """again and again, the true leader's high watermark is at its log end: every write is
    eventually committed (TLA+: []<>(\\A r \\in Replicas: IsTrueLeader(r) => replicaState[r].hw =
    ReplicaLog!GetEndOffset(r))); fails: a follower in the ISR need never fetch"""
    return X.forall(m.R, lambda r: X.implies(m.is_true_leader(s, X, r), s.hw[r] == s.end_offset[r]))


@always_eventually("leader-takes-office", fair=SPEC_FAIRNESS)
def leader_takes_office(m: Replication, s: StateView, X: Backend) -> Bool:
    """again and again, the quorum names no leader or its leader presumes leadership in the
    quorum's epoch (TLA+: []<>(quorumState.leader = None \\/ IsTrueLeader(quorumState.leader)))"""
    return X.or_(s.quorum_leader == NONE, X.exists(m.R, lambda r: m.is_true_leader(s, X, r)))


# Not checked by default (`kmc check replication --properties` checks them): the specification
# itself violates them, as TLC finds, and its cfgs check none.
def properties(m: Replication) -> list[Property]:
    return [leader_elected(m), leader_takes_office(m), hw_catches_up(m)]
