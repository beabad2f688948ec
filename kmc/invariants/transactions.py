"""What must hold of the `transactions` model (PROTOCOL.md section 4, issue 7)."""

from __future__ import annotations

from typing import Any

from kmc.invariants.common import type_ok
from kmc.model.core import NONE, Invariant
from kmc.model.transactions import Transactions
from kmc.model.transactions_view import (
    ABORT, COMMIT, COMPLETE_ABORT, COMPLETE_COMMIT, DATA, ONGOING, PREPARE_ABORT, PREPARE_COMMIT,
)


def is_marker(s: Any, X: Any, p: int, o: int) -> Any:
    return X.and_(o < s.log_end[p], s.log_kind[p][o] != DATA)


def atomic_commit(m: Transactions) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        slots = [(p, o) for p in m.P for o in m.offsets]
        same_outcome = [
            X.implies(
                X.and_(is_marker(s, X, p, o), is_marker(s, X, q, r), s.log_txn[p][o] == s.log_txn[q][r]),
                s.log_kind[p][o] == s.log_kind[q][r],
            )
            for (p, o) in slots for (q, r) in slots if (p, o) < (q, r)
        ]
        with_offsets = [
            X.implies(
                X.and_(is_marker(s, X, p, o), s.group_marker_txn != NONE, s.log_txn[p][o] == s.group_marker_txn),
                s.log_kind[p][o] == s.group_marker_kind,
            )
            for (p, o) in slots
        ]
        committed = X.or_(s.co_state == PREPARE_COMMIT, s.co_state == COMPLETE_COMMIT)
        aborted = X.or_(s.co_state == PREPARE_ABORT, s.co_state == COMPLETE_ABORT)
        decided = [
            X.implies(
                X.and_(is_marker(s, X, p, o), s.log_txn[p][o] == s.co_txn),
                X.and_(X.implies(committed, s.log_kind[p][o] == COMMIT), X.implies(aborted, s.log_kind[p][o] == ABORT)),
            )
            for (p, o) in slots
        ]
        return X.and_(*same_outcome, *with_offsets, *decided)

    return Invariant(
        "atomic-commit", holds,
        "every marker of a transaction, in every partition and in the group's offsets, carries the decision "
        "the coordinator logged (no transaction committed in one partition and aborted in another)",
    )


def no_aborted_reads(m: Transactions) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.and_(*[
            X.implies(s.returned[p][o] == 1, m.resolution(s, X, p, o) == COMMIT)
            for p in m.P for o in m.offsets
        ])

    return Invariant(
        "no-aborted-reads", holds,
        "a read_committed consumer returns only records a COMMIT marker resolves, never aborted or open ones",
    )


def zombie_fenced(m: Transactions) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.and_(*[
            X.implies(o2 < s.log_end[p], s.log_epoch[p][o1] <= s.log_epoch[p][o2])
            for p in m.P for o1 in m.offsets for o2 in m.offsets if o1 < o2
        ])

    return Invariant(
        "zombie-fenced", holds,
        "no partition accepts a write of an older producer epoch once it has seen a newer one "
        "(epochs never go down along a log)",
    )


def no_hanging_transaction(m: Transactions) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        tracked = X.or_(s.co_state == ONGOING, s.co_state == PREPARE_COMMIT, s.co_state == PREPARE_ABORT)
        return X.and_(*[
            X.implies(m.open_txn(s, X, p), X.and_(tracked, s.co_parts[p] == 1)) for p in m.P
        ])

    return Invariant(
        "no-hanging-transaction", holds,
        "no partition holds an open transaction the coordinator does not track: no marker would ever "
        "close it, and the last stable offset would stay behind it forever",
    )


def own_transaction(m: Transactions) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        checks = []
        for p in m.P:
            for o in m.offsets:
                for r in m.offsets:
                    if r <= o:
                        continue
                    first_marker = X.and_(
                        o < s.log_end[p], s.log_kind[p][o] == DATA, is_marker(s, X, p, r),
                        *[s.log_kind[p][b] == DATA for b in m.offsets if o < b < r],
                    )
                    checks.append(X.implies(first_marker, s.log_txn[p][r] == s.log_txn[p][o]))
        return X.and_(*checks)

    return Invariant(
        "own-transaction", holds,
        "every record is committed or aborted with the transaction that wrote it: no late write of one "
        "transaction joins the next one",
    )


def exactly_once(m: Transactions) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        settled = X.not_(X.or_(s.co_state == PREPARE_COMMIT, s.co_state == PREPARE_ABORT))
        checks = []
        for p in m.P:
            for k in range(m.N):
                copies = sum(
                    X.and_(o < s.log_end[p], s.log_kind[p][o] == DATA, s.log_input[p][o] == k,
                           m.resolution(s, X, p, o) == COMMIT)
                    for o in m.offsets
                )
                checks.append(copies <= 1)
                checks.append(X.implies(settled, copies == X.ite(k < s.group_offset, 1, 0)))
        return X.and_(*checks)

    return Invariant(
        "exactly-once", holds,
        "each input record's output is committed once in every output partition, and exactly for the "
        "inputs below the group's committed offset once no transaction is completing",
    )


def invariants(m: Transactions) -> list[Invariant]:
    return [
        atomic_commit(m), no_aborted_reads(m), zombie_fenced(m), exactly_once(m),
        no_hanging_transaction(m), own_transaction(m), type_ok(m.schema),
    ]
