"""What must hold of the `transactions` model (PROTOCOL.md section 4, issue 7)."""

from __future__ import annotations

from kmc.invariants.common import type_ok
from kmc.invariants.pairing import for_model
from kmc.model.core import NONE, Backend, Bool, Int, Invariant, StateView, invariant
from kmc.model.temporal import Property, always_eventually, weak
from kmc.model.transactions import Transactions
from kmc.model.transactions_view import (
    ABORT, COMMIT, COMPLETE_ABORT, COMPLETE_COMMIT, DATA, ONGOING, PREPARE_ABORT, PREPARE_COMMIT,
)


def is_marker(s: StateView, X: Backend, p: int, o: int) -> Bool:
    return X.and_(o < s.log_end[p], s.log_kind[p][o] != DATA)


@invariant("atomic-commit")
def atomic_commit(m: Transactions, s: StateView, X: Backend) -> Bool:
    """every marker of a transaction, in every partition and in the group's offsets, carries the decision
    the coordinator logged (no transaction committed in one partition and aborted in another)"""
    slots = [(p, o) for p in m.P for o in m.offsets]

    def same_outcome(p: int, o: int, q: int, r: int) -> Bool:
        same_txn = X.and_(is_marker(s, X, p, o), is_marker(s, X, q, r), s.log_txn[p][o] == s.log_txn[q][r])
        return X.implies(same_txn, s.log_kind[p][o] == s.log_kind[q][r])

    def with_offsets(p: int, o: int) -> Bool:
        same_txn = X.and_(is_marker(s, X, p, o), s.group_marker_txn != NONE, s.log_txn[p][o] == s.group_marker_txn)
        return X.implies(same_txn, s.log_kind[p][o] == s.group_marker_kind)

    committed = X.or_(s.co_state == PREPARE_COMMIT, s.co_state == COMPLETE_COMMIT)
    aborted = X.or_(s.co_state == PREPARE_ABORT, s.co_state == COMPLETE_ABORT)

    def decided(p: int, o: int) -> Bool:
        return X.implies(
            X.and_(is_marker(s, X, p, o), s.log_txn[p][o] == s.co_txn),
            X.and_(X.implies(committed, s.log_kind[p][o] == COMMIT), X.implies(aborted, s.log_kind[p][o] == ABORT)),
        )

    return X.and_(
        X.forall(slots, lambda a: X.forall([b for b in slots if a < b], lambda b: same_outcome(*a, *b))),
        X.forall(slots, lambda a: with_offsets(*a)),
        X.forall(slots, lambda a: decided(*a)),
    )


def resolving_txn(m: Transactions, s: StateView, X: Backend, p: int, o: int) -> Int:
    """The transaction (ghost) of the first marker after offset o in p's log (NONE: still open)."""
    res: Int = NONE
    for r in reversed(m.offsets[o + 1:]):
        res = X.ite(is_marker(s, X, p, r), s.log_txn[p][r], res)
    return res


@invariant("no-aborted-reads")
def no_aborted_reads(m: Transactions, s: StateView, X: Backend) -> Bool:
    """a read_committed consumer returns only records a COMMIT marker resolves, never aborted or open ones;
    with --end-txn-in-flight, never one committed by a transaction whose abortTransaction returned"""
    def committed(p: int, o: int) -> Bool:
        if not m.end_txn_in_flight:
            return m.resolution(s, X, p, o) == COMMIT
        aborted = X.at(s.told, resolving_txn(m, s, X, p, o)) == 0
        return X.and_(m.resolution(s, X, p, o) == COMMIT, X.not_(aborted))

    return X.forall(m.P, lambda p: X.forall(m.offsets, lambda o: X.implies(s.returned[p][o] == 1, committed(p, o))))


@invariant("no-lost-writes")
def no_lost_writes(m: Transactions, s: StateView, X: Backend) -> Bool:
    """(--end-txn-in-flight) no record written in a transaction whose commitTransaction returned is
    aborted: an ABORT marker never resolves it"""
    def kept(p: int, o: int) -> Bool:
        written = X.and_(o < s.log_end[p], s.log_kind[p][o] == DATA)
        told_committed = X.at(s.told, s.log_txn[p][o]) == COMMIT
        return X.implies(X.and_(written, told_committed), m.resolution(s, X, p, o) != ABORT)

    return X.forall(m.P, lambda p: X.forall(m.offsets, lambda o: kept(p, o)))


@invariant("zombie-fenced")
def zombie_fenced(m: Transactions, s: StateView, X: Backend) -> Bool:
    """no partition accepts a write of an older producer epoch once it has seen a newer one
    (epochs never go down along a log)"""
    return X.forall(m.P, lambda p: X.forall(m.offsets, lambda o1: X.forall(m.offsets[o1 + 1:], lambda o2: X.implies(
        o2 < s.log_end[p], s.log_epoch[p][o1] <= s.log_epoch[p][o2]))))


@invariant("no-hanging-transaction")
def no_hanging_transaction(m: Transactions, s: StateView, X: Backend) -> Bool:
    """no partition holds an open transaction the coordinator does not track: no marker would ever
    close it, and the last stable offset would stay behind it forever"""
    tracked = X.or_(s.co_state == ONGOING, s.co_state == PREPARE_COMMIT, s.co_state == PREPARE_ABORT)
    return X.forall(m.P, lambda p: X.implies(m.open_txn(s, X, p), X.and_(tracked, s.co_parts[p] == 1)))


@invariant("own-transaction")
def own_transaction(m: Transactions, s: StateView, X: Backend) -> Bool:
    """every record is committed or aborted with the transaction that wrote it: no late write of one
    transaction joins the next one"""
    def marked_by_own(p: int, o: int, r: int) -> Bool:
        first_marker = X.and_(
            o < s.log_end[p], s.log_kind[p][o] == DATA, is_marker(s, X, p, r),
            X.forall(m.offsets[o + 1:r], lambda b: s.log_kind[p][b] == DATA),
        )
        return X.implies(first_marker, s.log_txn[p][r] == s.log_txn[p][o])

    return X.forall(m.P, lambda p: X.forall(m.offsets, lambda o: X.forall(m.offsets[o + 1:],
                                                                          lambda r: marked_by_own(p, o, r))))


@invariant("exactly-once")
def exactly_once(m: Transactions, s: StateView, X: Backend) -> Bool:
    """each input record's output is committed once in every output partition, and exactly for the
    inputs below the group's committed offset once no transaction is completing"""
    settled = X.not_(X.or_(s.co_state == PREPARE_COMMIT, s.co_state == PREPARE_ABORT))

    def committed_once(p: int, k: int) -> Bool:
        copies = X.count(
            X.and_(o < s.log_end[p], s.log_kind[p][o] == DATA, s.log_input[p][o] == k,
                   m.resolution(s, X, p, o) == COMMIT)
            for o in m.offsets
        )
        return X.and_(copies <= 1, X.implies(settled, copies == X.ite(k < s.group_offset, 1, 0)))

    return X.forall(m.P, lambda p: X.forall(range(m.N), lambda k: committed_once(p, k)))


@for_model(Transactions)
def invariants(m: Transactions) -> list[Invariant]:
    """The model's invariants; `no-lost-writes` needs --end-txn-in-flight's ghost of what the
    producer was told."""
    lost = [no_lost_writes(m)] if m.end_txn_in_flight else []
    return [
        atomic_commit(m), no_aborted_reads(m), *lost, zombie_fenced(m), exactly_once(m),
        no_hanging_transaction(m), own_transaction(m), type_ok(m.schema),
    ]


# -- liveness (docs/liveness.md) ------------------------------------------------------------

# Fair: what the producer application, the coordinator and the partition leaders go on doing
# when they can. Not fair: the faults (request timeouts, coordinator failovers) and the consumer.
PROGRESS = (
    weak("init_producer_id", "producer"), weak("begin_transaction", "producer"),
    weak("add_partition", "producer", "partition"), weak("send", "producer", "partition"),
    weak("partition_append", "producer", "partition"), weak("send_offsets", "producer"),
    weak("end_txn", "producer", "commit"), weak("fenced", "producer"),
    weak("write_marker", "partition"), weak("write_offsets_marker"), weak("complete_txn"),
)


@always_eventually("lso-advances", fair=PROGRESS)
def lso_advances(m: Transactions, s: StateView, X: Backend) -> Bool:
    """again and again, every partition's last stable offset reaches its log end: no partition
    stays blocked for ever by an open transaction (a hanging transaction stalls read_committed
    consumers for good)"""
    return X.forall(m.P, lambda p: X.not_(m.open_txn(s, X, p)))


def properties(m: Transactions) -> list[Property]:
    return [lso_advances(m)]
