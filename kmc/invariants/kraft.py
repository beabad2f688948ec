"""What must hold of the `kraft` model: the safety properties of the specification
(v3_5_properties, kip_966_properties), under their names in kebab case."""

from __future__ import annotations

from kmc.invariants.common import type_ok
from kmc.model.core import Backend, Bool, Int, Invariant, StateView, invariant
from kmc.model.kraft import Kraft
from kmc.model.kraft_state import LEADER, RUNNING


def holds_value(m: Kraft, s: StateView, X: Backend, b: int, v: int) -> Bool:
    """\\E offset \\in LogOffsets(b) : partition_data[b].log[offset].value = v"""
    return X.exists(m.V, lambda o: X.and_(o + 1 < s.leo[b], s.log_value[b][o] == v))


def is_non_stale_leader(m: Kraft, s: StateView, X: Backend, b: int) -> Bool:
    return X.and_(s.role[b] == LEADER, s.pm_leader_epoch[b] == s.con_leader_epoch)


@invariant("leader-completeness")
def leader_completeness(m: Kraft, s: StateView, X: Backend) -> Bool:
    """LeaderCompletenessProperty: a running leader the controller chose holds every committed
    offset (up to the true HWM) and every positively acknowledged value"""
    def complete(b: int) -> Bool:
        return X.and_(s.leo[b] >= s.true_hwm, X.forall(m.V, lambda v: X.implies(s.pos_acked[v] == 1,
                                                                               holds_value(m, s, X, b, v))))
    return X.implies(s.true_hwm > 1, X.forall(m.B, lambda b: X.implies(
        X.and_(s.con_leader == b, s.status[b] == RUNNING), complete(b))))


@invariant("leader-candidate-completeness")
def leader_candidate_completeness(m: Kraft, s: StateView, X: Backend) -> Bool:
    """LeaderCandidateCompletenessProperty: no running member of the controller's ISR (kip966:
    or ELR) misses a committed offset"""
    pool = [X.or_(s.con_isr[b] == 1, s.con_elr[b] == 1) if m.kip966 else s.con_isr[b] == 1 for b in m.B]
    return X.implies(s.true_hwm > 1, X.forall(m.B, lambda b: X.not_(X.and_(
        pool[b], s.leo[b] < s.true_hwm, s.status[b] == RUNNING))))


@invariant("replication-quorum-superset")
def replication_quorum_superset(m: Kraft, s: StateView, X: Backend) -> Bool:
    """ReplicationQuorumSupersetProperty: a non-stale leader's maximal ISR equals its ISR unless
    a request is pending, and contains the controller's ISR (kip966: ISR and ELR, when the
    leader's ISR has MinISR members)"""
    def superset(b: int) -> Bool:
        covers_isr = X.forall(m.B, lambda x: X.implies(s.con_isr[x] == 1, s.pm_maximal_isr[b][x] == 1))
        if not m.kip966:
            return covers_isr
        covers_elr = X.forall(m.B, lambda x: X.implies(s.con_elr[x] == 1, s.pm_maximal_isr[b][x] == 1))
        return X.implies(m.card(X, s.pm_isr[b]) >= m.min_isr, X.and_(covers_isr, covers_elr))

    def ok(b: int) -> Bool:
        settled = X.implies(X.not_(m.pending_alter_partition_response(s, b)),
                            m.same_set(X, s.pm_maximal_isr[b], s.pm_isr[b]))
        return X.and_(settled, superset(b))
    return X.forall(m.B, lambda b: X.implies(is_non_stale_leader(m, s, X, b), ok(b)))


@invariant("log-matching")
def log_matching(m: Kraft, s: StateView, X: Backend) -> Bool:
    """LogMatchingProperty: below both replicas' HWMs, two logs hold the same values"""
    def differ(a: int, b: int, o: int) -> Bool:
        return X.and_(s.leo[a] > o + 1, s.leo[b] > o + 1, s.hwm[a] > o + 1, s.hwm[b] > o + 1,
                      s.log_value[a][o] != s.log_value[b][o])
    return X.all([X.not_(differ(a, b, o)) for o in m.V for a in m.B for b in m.B if a < b])


@invariant("metadata-log-matching")
def metadata_log_matching(m: Kraft, s: StateView, X: Backend) -> Bool:
    """MetadataLogMatchingProperty: every broker's metadata log is a prefix of the
    controller's (kmc keeps a broker's log as the length of that prefix, so this checks the
    length)"""
    return X.forall(m.B, lambda b: s.md_applied[b] <= s.md_len)


@invariant("consistent-read")
def consistent_read(m: Kraft, s: StateView, X: Backend) -> Bool:
    """ConsistentReadProperty: a non-stale leader's log still holds, at the same offsets, every
    record consumers read"""
    def repeatable(b: int, o: int) -> Bool:
        return X.implies(o + 1 < s.true_hwm, X.and_(o + 1 < s.leo[b], s.log_epoch[b][o] == s.consumed_epoch[o],
                                                     s.log_value[b][o] == s.consumed_value[o]))
    return X.forall(m.B, lambda b: X.implies(is_non_stale_leader(m, s, X, b),
                                             X.forall(m.V, lambda o: repeatable(b, o))))


@invariant("no-committed-record-lost-globally")
def no_committed_record_lost_globally(m: Kraft, s: StateView, X: Backend) -> Bool:
    """NoCommittedRecordLostGlobally: every positively acknowledged value is on some broker"""
    return X.forall(m.V, lambda v: X.implies(s.pos_acked[v] == 1,
                                             X.exists(m.B, lambda b: holds_value(m, s, X, b, v))))


@invariant("min-isr-recovery-quorum")
def min_isr_recovery_quorum(m: Kraft, s: StateView, X: Backend) -> Bool:
    """MinIsrRecoveryQuorum (kip966): with the ISR and the ELR empty, the last-known ELR has
    MinISR members"""
    size: Int = m.card(X, s.con_last_known_elr)
    empty = X.and_(m.card(X, s.con_isr) == 0, m.card(X, s.con_elr) == 0)
    return X.implies(empty, size == m.min_isr)


def invariants(m: Kraft) -> list[Invariant]:
    found = [leader_completeness(m), leader_candidate_completeness(m), replication_quorum_superset(m),
             log_matching(m), metadata_log_matching(m), consistent_read(m), no_committed_record_lost_globally(m)]
    if m.kip966:
        found.append(min_isr_recovery_quorum(m))
    return [*found, type_ok(m.schema)]



