"""What must hold of the `kraft` model: the safety properties of the specification
(v3_5_properties, kip_966_properties), under their names in kebab case."""

from __future__ import annotations

from typing import Any, Callable

from kmc.invariants.common import type_ok
from kmc.invariants.pairing import for_model
from kmc.model.core import Backend, Bool, Int, Invariant, StateView, invariant
from kmc.model.kraft import VALUE, Kraft
from kmc.model.kraft_state import FENCED, FOLLOWER, LEADER, NIL_ROLE, RUNNING, STARTING, UNFENCED, broker_name
from kmc.model.temporal import Fairness, Property, weak


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


@for_model(Kraft)
def invariants(m: Kraft) -> list[Invariant]:
    found = [leader_completeness(m), leader_candidate_completeness(m), replication_quorum_superset(m),
             log_matching(m), metadata_log_matching(m), consistent_read(m), no_committed_record_lost_globally(m)]
    if m.kip966:
        found.append(min_isr_recovery_quorum(m))
    return [*found, type_ok(m.schema)]





# -- liveness (v3_5_properties / kip_966_properties; docs/kraft.md; TLC: tlc-kraft-liveness.md) --

# The specification's `Liveness` (LivenessSpec), the same in v3.5 and kip-966: for each broker b,
# WF_vars of each of these actions of b. The spec's action takes b and chooses the rest (\E
# over messages, leaders, offsets), so each condition groups kmc's instances by the parameter
# that is the spec's b: the fetching follower, the leader receiving a FetchRequest, the
# follower receiving its FetchResponse.
SPEC_FAIRNESS: tuple[Fairness, ...] = (
    weak("broker_start", "broker"), weak("receive_broker_reg_response", "broker"),
    weak("receive_metadata_update", "broker"), weak("send_alter_partition_request", "broker"),
    weak("receive_alter_partition_response", "broker"), weak("send_fetch_request", "follower"),
    weak("receive_fetch_request", "leader"), weak("receive_fetch_response", "follower"),
    weak("receive_broker_reg_request", "broker"), weak("receive_alter_partition_request", "broker"),
    weak("unfence_broker", "broker"),
)

Predicate = Callable[[StateView, Backend], Any]


def _conjunct(name: str, form: str, predicate: Predicate, doc: str, fair: tuple[Fairness, ...]) -> Property:
    # default: the specification's cfg checks these properties, so `kmc check kraft` does too
    return Property(name, form, predicate, " ".join(doc.split()), fair, default=True)


def eventually_runs(m: Kraft, b: int, fair: tuple[Fairness, ...] = SPEC_FAIRNESS) -> Property:
    """EventuallyRuns, the conjunct of broker b: a STARTING broker eventually RUNs, unfenced."""
    return _conjunct(f"eventually-runs-{broker_name(b)}", "leads_to", lambda s, X: (
        s.status[b] == STARTING, X.and_(s.status[b] == RUNNING, s.reg_status[b] == UNFENCED)),
        f"EventuallyRuns for {broker_name(b)}: status = STARTING ~> status = RUNNING /\\ "
        "con_broker_reg.status = UNFENCED", fair)


def eventually_unfenced(m: Kraft, b: int, fair: tuple[Fairness, ...] = SPEC_FAIRNESS) -> Property:
    """EventuallyUnfenced, the conjunct of broker b: a fenced broker is eventually unfenced."""
    return _conjunct(f"eventually-unfenced-{broker_name(b)}", "leads_to", lambda s, X: (
        s.reg_status[b] == FENCED, s.reg_status[b] == UNFENCED),
        f"EventuallyUnfenced for {broker_name(b)}: con_broker_reg.status = FENCED ~> UNFENCED", fair)


def metadata_converged(m: Kraft, s: StateView, X: Backend, b: int) -> Bool:
    """Broker b's partition metadata equals the controller's, or b is a follower with no
    unapplied metadata record that concerns it, or b holds no replica and is not in the set."""
    same = X.and_(m.same_set(X, s.pm_isr[b], s.con_isr), s.pm_leader[b] == s.con_leader,
                  s.pm_leader_epoch[b] == s.con_leader_epoch, s.pm_partition_epoch[b] == s.con_partition_epoch)
    if not m.replicas[b]:
        return X.or_(same, s.role[b] == NIL_ROLE)
    quiet = X.and_(s.role[b] == FOLLOWER,
                   X.not_(X.exists(m.md, lambda o: m.partition_needs_action(s, X, b, o))))
    return X.or_(same, quiet)


def eventually_metadata_converges(m: Kraft, fair: tuple[Fairness, ...] = SPEC_FAIRNESS) -> Property:
    """EventuallyMetadataConverges: again and again every broker agrees with the controller."""
    return _conjunct("eventually-metadata-converges", "always_eventually",
                     lambda s, X: X.forall(m.B, lambda b: metadata_converged(m, s, X, b)),
                     "EventuallyMetadataConverges: []<> every broker's partition metadata is the controller's "
                     "(or it is a follower with no relevant unreplicated record)", fair)


def eventually_write_is_accepted_or_rejected(m: Kraft, v: int,
                                             fair: tuple[Fairness, ...] = SPEC_FAIRNESS) -> Property:
    """EventuallyWriteIsAcceptedOrRejected, the conjunct of value v."""
    name = VALUE.show(v)
    return _conjunct(f"eventually-write-is-accepted-or-rejected-{name}", "leads_to", lambda s, X: (
        s.sent[v] == 1, X.or_(s.pos_acked[v] == 1, s.neg_acked[v] == 1)),
        f"EventuallyWriteIsAcceptedOrRejected for {name}: sent ~> positively or negatively acknowledged", fair)


def eventually_acknowledged_value_fully_replicated(m: Kraft, v: int,
                                                   fair: tuple[Fairness, ...] = SPEC_FAIRNESS) -> Property:
    """EventuallyAcknowledgedValueFullyReplicated, the conjunct of value v."""
    name = VALUE.show(v)
    return _conjunct(f"eventually-acknowledged-value-fully-replicated-{name}", "leads_to", lambda s, X: (
        s.pos_acked[v] == 1, X.forall([b for b in m.B if m.replicas[b]], lambda b: holds_value(m, s, X, b, v))),
        f"EventuallyAcknowledgedValueFullyReplicated for {name}: positively acknowledged ~> on every "
        "replica's log", fair)


def properties(m: Kraft, fair: tuple[Fairness, ...] = SPEC_FAIRNESS) -> list[Property]:
    """The five liveness properties the specification's cfg lists, each universally quantified
    one (\\A b, \\A v) as one property per broker or value (their conjunction is the spec's);
    AlterPartitionEpochEventuallyReachedOrZero and EventuallyReassignmentCompletes are not
    checked (the first nests ~> under []<>, the second needs reassignment, which kmc leaves out).
    Fairness of an action this configuration has no instance of (broker_start, without
    shutdowns) is vacuous and dropped."""
    present = {i.action.name for i in m.instances()}
    fair = tuple(f for f in fair if f.action in present)
    return [*(eventually_runs(m, b, fair) for b in m.B), *(eventually_unfenced(m, b, fair) for b in m.B),
            eventually_metadata_converges(m, fair),
            *(eventually_write_is_accepted_or_rejected(m, v, fair) for v in m.V),
            *(eventually_acknowledged_value_fully_replicated(m, v, fair) for v in m.V)]
