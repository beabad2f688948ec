"""Ending a transaction: EndTxn and the coordinator's two phases (the `transactions` model).

Phase 1: the producer's commitTransaction or abortTransaction sends EndTxn; the coordinator
logs PrepareCommit or PrepareAbort, the point of no return. Phase 2: it writes the markers to
every partition in the transaction and logs CompleteCommit or CompleteAbort.

By default an EndTxn and its answer are one step. With `--end-txn-in-flight` an EndTxn can also
stay in the network past `request.timeout.ms`: the producer times out and retries or aborts,
and the delayed request reaches the coordinator later, possibly once the producer's next
transaction is Ongoing in the same epoch (KAFKA-17754, found by Jepsen's analysis of
Bufstream). A ghost field records what commitTransaction and abortTransaction returned for
each transaction, so the invariants can compare it with the logs (docs/transactions.md).

`TransactionEnd` is a mixin of `Transactions` (kmc/model/transactions.py), which supplies the
bounds annotated on the class.
"""

from __future__ import annotations

from typing import Any

from kmc.model.core import NONE, Backend, Bool, Effect, Field, StateView, action
from kmc.model.transactions_view import (
    ABORT, ACKED, AWAITING, COMMIT, COMPLETE_ABORT, COMPLETE_COMMIT, DECISION, IN_TRANSACTION, ONGOING,
    PARTITION, PREPARE_ABORT, PREPARE_COMMIT, PRODUCER, READY, UNSENT,
)


class TransactionEnd:
    """EndTxn (answered, or in flight), the markers, completion and coordinator failover."""

    I: range
    P: range
    T: int
    E: int
    L: int
    offsets: range
    kip890: bool
    end_txn_in_flight: bool
    max_failovers: int

    # -- state shared with the producer's actions ---------------------------------------------

    def preparing(self, s: StateView, X: Backend) -> Bool:
        return X.or_(s.co_state == PREPARE_COMMIT, s.co_state == PREPARE_ABORT)

    def reset_transaction(self, i: int) -> Effect:
        """The instance's client-side transaction state, cleared."""
        P = len(self.P)
        out: Effect = {
            "txn": {i: NONE}, "input": {i: NONE}, "added": {i: [0] * P}, "write": {i: [UNSENT] * P},
            "offsets_sent": {i: 0}, "abortable": {i: 0},
        }
        if self.end_txn_in_flight:
            out["unanswered"] = {i: NONE}
        return out

    def in_flight_fields(self) -> list[Field]:
        """The fields `--end-txn-in-flight` adds: the producer's unanswered EndTxn, a delayed
        EndTxn in the network, and (ghost) what the producer was told of each transaction."""
        I, T, E = len(self.I), self.T, self.E
        return [
            Field("unanswered", lo=NONE, hi=COMMIT, shape=(I,),
                  doc="the EndTxn that timed out, 1 commit or 0 abort (-1: none): the outcome is unknown"),
            Field("end_req", lo=NONE, hi=COMMIT, shape=(I,),
                  doc="a delayed EndTxn in the network: 1 commit, 0 abort (-1: none)"),
            Field("end_req_epoch", lo=NONE, hi=E, shape=(I,), doc="its producer epoch"),
            Field("end_req_txn", lo=NONE, hi=T - 1, shape=(I,), doc="the transaction it was sent for (ghost)"),
            Field("told", lo=NONE, hi=COMMIT, shape=(T,),
                  doc="what commitTransaction/abortTransaction returned: 1 committed, 0 aborted (-1: nothing; ghost)"),
        ]

    def in_flight_initial(self) -> dict[str, Any]:
        I = len(self.I)
        return {"unanswered": [NONE] * I, "end_req": [NONE] * I, "end_req_epoch": [NONE] * I,
                "end_req_txn": [NONE] * I, "told": [NONE] * self.T}

    # -- EndTxn, answered at once ---------------------------------------------------------

    def may_end(self, s: StateView, X: Backend, i: int, commit: int) -> Bool:
        """EndTxn is sent: to commit, every write acknowledged and the offsets sent; to abort, no
        write still awaited."""
        base = X.and_(s.phase[i] == IN_TRANSACTION, X.not_(X.exists(self.P, lambda p: s.write[i][p] == AWAITING)),
                      X.or_(s.epoch[i] == s.co_epoch, X.not_(s.co_state == ONGOING)))
        if commit:
            done = X.forall(self.P, lambda p: X.and_(s.added[i][p] == 1, s.write[i][p] == ACKED))
            return X.and_(base, s.abortable[i] == 0, s.offsets_sent[i] == 1, done, s.co_state == ONGOING,
                          s.epoch[i] == s.co_epoch)
        return base

    def ours(self, s: StateView, X: Backend, i: int) -> Bool:
        """The coordinator's Ongoing transaction is the instance's (else there is nothing to end)."""
        return X.and_(s.co_state == ONGOING, s.epoch[i] == s.co_epoch)

    def prepare(self, s: StateView, X: Backend, i: int, commit: int) -> Effect:
        """The coordinator logs PrepareCommit or PrepareAbort; the instance is ready for the next."""
        return {
            **self.reset_transaction(i),
            "phase": {i: READY},
            "position": {i: s.input[i] + 1 if commit else NONE},
            "co_state": X.ite(self.ours(s, X, i), PREPARE_COMMIT if commit else PREPARE_ABORT, s.co_state),
        }

    @action(producer=PRODUCER, commit=DECISION)
    def end_txn(self, s: StateView, X: Backend, i: int, commit: int) -> Bool:
        """commitTransaction (every write acknowledged and the offsets sent) or abortTransaction
        (no write still awaited): EndTxn makes the coordinator log PrepareCommit or PrepareAbort,
        the point of no return. [002 A.3, D]"""
        return self.may_end(s, X, i, commit)

    @end_txn.effect
    def _(self, s: StateView, X: Backend, i: int, commit: int) -> Effect:
        return self.prepare(s, X, i, commit)

    @action(name="end_txn", producer=PRODUCER, commit=DECISION)
    def end_txn_bumping_epoch(self, s: StateView, X: Backend, i: int, commit: int) -> Bool:
        """(kip890) As end_txn, and the coordinator bumps the epoch and returns it to the producer
        (KIP-890 part 2). [002 A.3, D; KIP-890]"""
        return self.may_end(s, X, i, commit)

    @end_txn_bumping_epoch.effect
    def _(self, s: StateView, X: Backend, i: int, commit: int) -> Effect:
        ours, epoch = self.ours(s, X, i), s.co_epoch + 1
        return {
            **self.prepare(s, X, i, commit),
            "co_epoch": X.ite(ours, epoch, s.co_epoch),
            "epoch": {i: X.ite(ours, epoch, s.epoch[i])},
            "seq": {i: [X.ite(ours, 0, s.seq[i][p]) for p in self.P]},
        }

    # -- EndTxn in flight (--end-txn-in-flight) ---------------------------------------------

    def needs_end_txn(self, s: StateView, X: Backend, i: int) -> Bool:
        """The transaction added a partition or the offsets: ending it takes an EndTxn (else the
        client ends it locally)."""
        return X.or_(X.exists(self.P, lambda p: s.added[i][p] == 1), s.offsets_sent[i] == 1)

    def may_send_end_txn(self, s: StateView, X: Backend, i: int, commit: int) -> Bool:
        """The producer may send EndTxn: to commit, every write acknowledged and the offsets sent,
        or a commit that timed out retried; to abort, no write still awaited (also after a commit
        timed out, as Jepsen's clients did)."""
        base = X.and_(s.phase[i] == IN_TRANSACTION, X.not_(X.exists(self.P, lambda p: s.write[i][p] == AWAITING)))
        if commit:
            done = X.forall(self.P, lambda p: X.and_(s.added[i][p] == 1, s.write[i][p] == ACKED))
            fresh = X.and_(s.unanswered[i] == NONE, s.abortable[i] == 0, s.offsets_sent[i] == 1, done)
            return X.and_(base, X.or_(fresh, s.unanswered[i] == COMMIT))
        return base

    def prepares(self, s: StateView, X: Backend, epoch: Any) -> Bool:
        """The coordinator takes an EndTxn of this epoch to its Ongoing transaction, whichever
        transaction the producer sent it for: it logs PrepareCommit or PrepareAbort."""
        return X.and_(s.co_state == ONGOING, epoch == s.co_epoch)

    def retried(self, s: StateView, X: Backend, epoch: Any, commit: int) -> Bool:
        """The coordinator answers an EndTxn as a retry of the transaction it completed with the same
        decision: kip98 in the same epoch; kip890 (EndTxn v5) in the epoch before the bump."""
        done = s.co_state == (COMPLETE_COMMIT if commit else COMPLETE_ABORT)
        return X.and_(done, epoch == (s.co_epoch - 1 if self.kip890 else s.co_epoch))

    @action(name="end_txn", producer=PRODUCER, commit=DECISION)
    def answered_end_txn(self, s: StateView, X: Backend, i: int, commit: int) -> Bool:
        """(--end-txn-in-flight) commitTransaction or abortTransaction returns: the EndTxn and its
        answer arrive in time and the coordinator takes it (Ongoing in the producer's epoch), or
        answers a retry of what it completed; an abort with nothing added sends no EndTxn. Any
        other answer (INVALID_TXN_STATE, PRODUCER_FENCED) leaves the transaction unended. [002 A.3, D;
        KIP-890; KAFKA-17754]"""
        local = X.and_(X.not_(self.needs_end_txn(s, X, i)), commit == 0)
        answered = X.or_(self.prepares(s, X, s.epoch[i]), self.retried(s, X, s.epoch[i], commit))
        return X.and_(self.may_send_end_txn(s, X, i, commit), X.or_(local, answered))

    @answered_end_txn.effect
    def _(self, s: StateView, X: Backend, i: int, commit: int) -> Effect:
        prep = X.and_(self.needs_end_txn(s, X, i), self.prepares(s, X, s.epoch[i]))
        effect = {
            **self.reset_transaction(i),
            "phase": {i: READY},
            "position": {i: s.input[i] + 1 if commit else NONE},
            "co_state": X.ite(prep, PREPARE_COMMIT if commit else PREPARE_ABORT, s.co_state),
            "told": X.set_at(s.told, s.txn[i], commit),
        }
        if self.kip890:  # the coordinator bumps the epoch and returns it, a retry's answer too
            bumped = X.and_(self.needs_end_txn(s, X, i), X.not_(prep))
            epoch = X.ite(prep, s.co_epoch + 1, X.ite(bumped, s.co_epoch, s.epoch[i]))
            effect.update({
                "co_epoch": X.ite(prep, s.co_epoch + 1, s.co_epoch),
                "epoch": {i: epoch},
                "seq": {i: [X.ite(epoch != s.epoch[i], 0, s.seq[i][p]) for p in self.P]},
            })
        return effect

    @action(producer=PRODUCER, commit=DECISION)
    def end_txn_timeout(self, s: StateView, X: Backend, i: int, commit: int) -> Bool:
        """(--end-txn-in-flight) The producer sends EndTxn, and request.timeout.ms passes with no
        answer: the request is delayed (a paused broker, a slow connection) and stays in the network;
        the producer no longer knows the outcome and may retry or abort. One delayed EndTxn per
        producer at a time. [KAFKA-17754]"""
        return X.and_(self.may_send_end_txn(s, X, i, commit), self.needs_end_txn(s, X, i), s.end_req[i] == NONE)

    @end_txn_timeout.effect
    def _(self, s: StateView, X: Backend, i: int, commit: int) -> Effect:
        return {"unanswered": {i: commit}, "end_req": {i: commit}, "end_req_epoch": {i: s.epoch[i]},
                "end_req_txn": {i: s.txn[i]}}

    @action(producer=PRODUCER, commit=DECISION)
    def delayed_end_txn(self, s: StateView, X: Backend, i: int, commit: int) -> Bool:
        """(--end-txn-in-flight) The delayed EndTxn reaches the coordinator, which handles it as any
        EndTxn of its epoch: an Ongoing transaction of that epoch is prepared, whichever it is (kip890
        bumps the epoch); the answer finds no one waiting. Right after the timeout, this is a lost
        answer. [KAFKA-17754]"""
        return s.end_req[i] == commit

    @delayed_end_txn.effect
    def _(self, s: StateView, X: Backend, i: int, commit: int) -> Effect:
        prep = self.prepares(s, X, s.end_req_epoch[i])
        effect: Effect = {
            "end_req": {i: NONE}, "end_req_epoch": {i: NONE}, "end_req_txn": {i: NONE},
            "co_state": X.ite(prep, PREPARE_COMMIT if commit else PREPARE_ABORT, s.co_state),
        }
        if self.kip890:
            effect["co_epoch"] = X.ite(prep, s.co_epoch + 1, s.co_epoch)
        return effect

    # -- the coordinator's phase 2 ------------------------------------------------------------

    @action(partition=PARTITION)
    def write_marker(self, s: StateView, X: Backend, p: int) -> Bool:
        """Phase 2: the coordinator writes the COMMIT or ABORT marker, with the transaction's
        epoch, to every partition in the transaction. [002 D; KIP-98]"""
        return X.and_(self.preparing(s, X), s.co_parts[p] == 1, s.marked[p] == 0, s.log_end[p] < self.L)

    @write_marker.effect
    def _(self, s: StateView, X: Backend, p: int) -> Effect:
        kind = X.ite(s.co_state == PREPARE_COMMIT, COMMIT, ABORT)
        end = s.log_end[p]
        # a marker sent again after a failover is not appended twice in a row
        again = X.and_(end > 0, X.at(s.log_kind[p], end - 1) == kind, X.at(s.log_txn[p], end - 1) == s.co_txn)
        at_end = [X.and_(X.not_(again), o == end) for o in self.offsets]
        newer = s.co_epoch > s.part_epoch[p]
        return {
            "log_kind": {p: [X.ite(at_end[o], kind, s.log_kind[p][o]) for o in self.offsets]},
            "log_epoch": {p: [X.ite(at_end[o], s.co_epoch, s.log_epoch[p][o]) for o in self.offsets]},
            "log_txn": {p: [X.ite(at_end[o], s.co_txn, s.log_txn[p][o]) for o in self.offsets]},
            "log_end": {p: X.ite(again, end, end + 1)},
            "part_epoch": {p: X.max_(s.co_epoch, s.part_epoch[p])},
            "part_seq": {p: X.ite(newer, NONE, s.part_seq[p])},
            "marked": {p: 1},
        }

    @action()
    def write_offsets_marker(self, s: StateView, X: Backend) -> Bool:
        """The marker reaches the group's offsets partition: on commit the pending offset becomes
        the committed one, on abort it is dropped. [002 offsets in the transaction]"""
        return X.and_(self.preparing(s, X), s.co_group == 1, s.marked_group == 0)

    @write_offsets_marker.effect
    def _(self, s: StateView, X: Backend) -> Effect:
        commit = X.and_(s.co_state == PREPARE_COMMIT, s.pending_offset != NONE)
        return {"group_offset": X.ite(commit, s.pending_offset, s.group_offset), "pending_offset": NONE,
                "marked_group": 1, "group_marker_txn": s.co_txn,
                "group_marker_kind": X.ite(s.co_state == PREPARE_COMMIT, COMMIT, ABORT)}

    @action()
    def complete_txn(self, s: StateView, X: Backend) -> Bool:
        """Once every marker is written the coordinator logs CompleteCommit or CompleteAbort. [002 D]"""
        marked = X.forall(self.P, lambda p: X.implies(s.co_parts[p] == 1, s.marked[p] == 1))
        return X.and_(self.preparing(s, X), X.implies(s.co_group == 1, s.marked_group == 1), marked)

    @complete_txn.effect
    def _(self, s: StateView, X: Backend) -> Effect:
        P = len(self.P)
        return {"co_state": X.ite(s.co_state == PREPARE_COMMIT, COMPLETE_COMMIT, COMPLETE_ABORT),
                "co_parts": [0] * P, "co_group": 0, "marked": [0] * P, "marked_group": 0}

    @action()
    def coordinator_failover(self, s: StateView, X: Backend) -> Bool:
        """The broker leading the transaction log partition fails; the new coordinator rebuilds
        the transaction's state from the log and sends the markers of a Prepare* state again. [002 B]"""
        return s.failovers < self.max_failovers

    @coordinator_failover.effect
    def _(self, s: StateView, X: Backend) -> Effect:
        return {"marked": [0] * len(self.P), "marked_group": 0, "failovers": s.failovers + 1}
