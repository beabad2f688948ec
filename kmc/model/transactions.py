"""Exactly-once: transactional producers, the transaction coordinator, markers, read_committed.

A consume-transform-produce application reads input records from the position its consumer
group committed, writes one output record per input to every output partition, and commits
its consumer offset in the same transaction (seed 002, "offsets in the transaction"). Its
transactional producer has one transactional.id; with `--producers 2` a second instance of
the same id starts, and the first becomes a zombie that must be fenced.

The transaction coordinator keeps the transaction's state (Empty, Ongoing, PrepareCommit,
PrepareAbort, CompleteCommit, CompleteAbort), its producer epoch and its partitions in the
transaction log. Kafka changes the coordinator's cache only after an append to the log has
been replicated, so cache and log agree after every step; what a failover loses is the
volatile progress of the markers, which the new coordinator sends again after rebuilding its
state from the log (seed 002, data flow B).

Produce requests carry producer id (one here), epoch, sequence and (as a ghost, for the
invariants) the transaction the producer sent them in; they sit in the network until the
partition leader handles them, so they can land late: after the producer gave up on them
(request timeout) and aborted, after the markers, or in the next transaction. That delay is
the source of the bugs KIP-890 fixes.

Modes:
- kip98:  the classic protocol (KIP-98): a partition accepts any write of the current or a
          newer epoch with the next sequence; the epoch is bumped only by InitProducerId
- kip890: KIP-890: a partition asks the coordinator whether the producer's transaction is
          ongoing with the partition in it before accepting the producer's first write of a
          transaction (part 1), and the coordinator bumps the epoch at every EndTxn, writing
          the markers with the new epoch (part 2)

See docs/transactions.md for each rule and the KIP or seed section it comes from.
"""

from __future__ import annotations

from typing import Any, Sequence

from kmc.model.core import NONE, Action, Field, Model, Option, Param, Schema, State
from kmc.model.transactions_view import (
    ABORT, ACKED, AWAITING, COMMIT, COMPLETE_ABORT, COMPLETE_COMMIT, DATA, EMPTY, FENCED, GAVE_UP, IN_TRANSACTION,
    ONGOING, PREPARE_ABORT, PREPARE_COMMIT, READY, UNINITIALISED, UNSENT, describe, partition_name,
    producer_name,
)

MODES = {
    "kip98": "classic transactions: no partition-side verification, epoch bumped only by InitProducerId (KIP-98)",
    "kip890": "partition verifies the transaction before a first write; epoch bumped at every transaction end (KIP-890)",
}

class Transactions(Model):
    name = "transactions"
    summary = "transactional producers, coordinator, transaction log, markers, fencing and read_committed (KIP-98, KIP-890)"
    modes = MODES
    options = (
        Option("mode", "kip98", "protocol variant", choices=tuple(MODES)),
        Option("producers", 2, "producer instances sharing the transactional.id (the second makes the first a zombie)",
               min=1, max=3),
        Option("output_partitions", 1, "output partitions each transaction writes to", min=1, max=2),
        Option("transactions", 2, "transactions begun over the whole run", min=1, max=3),
        Option("inputs", 1, "input records the application consumes", min=1, max=2),
        Option("max_failovers", 1, "transaction coordinator failovers in a run", min=0, max=2),
    )

    # -- layout ----------------------------------------------------------------------------

    def _build(self) -> None:
        s = self.settings
        self.I = range(s["producers"])
        self.P = range(s["output_partitions"])
        self.T: int = s["transactions"]
        self.N: int = s["inputs"]
        self.max_failovers: int = s["max_failovers"]
        self.kip890 = self.mode == "kip890"
        # every transaction leaves at most one record and one marker per partition, a
        # failover one marker sent again, and a late write one record more
        self.L = 2 * self.T + self.max_failovers + 1
        self.offsets = range(self.L)
        # epochs: two InitProducerId bumps per instance (the first aborts an open transaction)
        # and, with KIP-890, one per transaction end
        self.E = 2 * len(self.I) + (self.T if self.kip890 else 0)
        I, P, L, E, T, N = len(self.I), len(self.P), self.L, self.E, self.T, self.N
        self.schema = Schema(
            [
                # producer instances
                Field("phase", lo=UNINITIALISED, hi=FENCED, shape=(I,), doc="instance: uninitialised, ready, in transaction, fenced"),
                Field("epoch", lo=NONE, hi=E, shape=(I,), doc="producer epoch the instance holds"),
                Field("txn", lo=NONE, hi=T - 1, shape=(I,), doc="transaction the instance is in (ghost: T1, T2, ...)"),
                Field("position", lo=NONE, hi=N, shape=(I,), doc="the application's next input record (-1: fetch the committed offset)"),
                Field("input", lo=NONE, hi=N - 1, shape=(I,), doc="input record the transaction processes"),
                Field("added", lo=0, hi=1, shape=(I, P), doc="AddPartitionsToTxn answered for the partition"),
                Field("write", lo=UNSENT, hi=GAVE_UP, shape=(I, P), doc="the instance's write to the partition in this transaction"),
                Field("offsets_sent", lo=0, hi=1, shape=(I,), doc="consumer offsets sent to the transaction"),
                Field("abortable", lo=0, hi=1, shape=(I,), doc="a write failed or timed out: the transaction can only abort"),
                Field("seq", lo=0, hi=T, shape=(I, P), doc="next sequence number to the partition"),
                # produce requests in the network
                Field("request", lo=0, hi=1, shape=(I, P), doc="a produce request in the network"),
                Field("request_epoch", lo=NONE, hi=E, shape=(I, P), doc="its producer epoch"),
                Field("request_seq", lo=NONE, hi=T, shape=(I, P), doc="its sequence number"),
                Field("request_txn", lo=NONE, hi=T - 1, shape=(I, P), doc="the transaction it was sent in (ghost)"),
                Field("request_input", lo=NONE, hi=N - 1, shape=(I, P), doc="the input record its output comes from"),
                # output partitions
                Field("log_kind", lo=NONE, hi=ABORT, shape=(P, L), doc="entry: data, COMMIT or ABORT marker (-1: empty)"),
                Field("log_epoch", lo=NONE, hi=E, shape=(P, L), doc="producer epoch of the entry"),
                Field("log_txn", lo=NONE, hi=T - 1, shape=(P, L), doc="transaction of the entry (ghost)"),
                Field("log_input", lo=NONE, hi=N - 1, shape=(P, L), doc="input record a data entry comes from"),
                Field("log_end", lo=0, hi=L, shape=(P,), doc="log end offset"),
                Field("part_epoch", lo=NONE, hi=E, shape=(P,), doc="latest producer epoch the partition has seen"),
                Field("part_seq", lo=NONE, hi=T, shape=(P,), doc="last sequence appended in that epoch"),
                Field("read_pos", lo=0, hi=L, shape=(P,), doc="the read_committed consumer's position"),
                Field("returned", lo=0, hi=1, shape=(P, L), doc="the read_committed consumer returned the record"),
                # consumer group
                Field("group_offset", lo=0, hi=N, doc="the group's committed offset of the input"),
                Field("pending_offset", lo=NONE, hi=N, doc="offset committed in an open transaction (TxnOffsetCommit)"),
                Field("group_marker_kind", lo=NONE, hi=ABORT, doc="the last marker the offsets partition got"),
                Field("group_marker_txn", lo=NONE, hi=T - 1, doc="its transaction (ghost)"),
                # transaction coordinator: the transaction log's last state, and volatile progress
                Field("co_state", lo=EMPTY, hi=COMPLETE_ABORT, doc="transaction state"),
                Field("co_epoch", lo=NONE, hi=E, doc="producer epoch"),
                Field("co_txn", lo=NONE, hi=T - 1, doc="transaction the state belongs to (ghost)"),
                Field("co_parts", lo=0, hi=1, shape=(P,), doc="partitions in the transaction"),
                Field("co_group", lo=0, hi=1, doc="the consumer group's offsets in the transaction"),
                Field("marked", lo=0, hi=1, shape=(P,), doc="marker written to the partition (volatile)"),
                Field("marked_group", lo=0, hi=1, doc="marker written to the offsets (volatile)"),
                Field("failovers", lo=0, hi=self.max_failovers, doc="coordinator failovers so far"),
                Field("next_txn", lo=0, hi=T, doc="transactions begun so far"),
            ]
        )

    def initial_states(self) -> list[State]:
        I, P, L = len(self.I), len(self.P), self.L
        per_ip = lambda v: [[v] * P for _ in self.I]  # noqa: E731
        per_pl = lambda v: [[v] * L for _ in self.P]  # noqa: E731
        return [
            self.schema.state(
                phase=[UNINITIALISED] * I, epoch=[NONE] * I, txn=[NONE] * I, position=[NONE] * I,
                input=[NONE] * I, added=per_ip(0), write=per_ip(UNSENT), offsets_sent=[0] * I,
                abortable=[0] * I, seq=per_ip(0),
                request=per_ip(0), request_epoch=per_ip(NONE), request_seq=per_ip(NONE),
                request_txn=per_ip(NONE), request_input=per_ip(NONE),
                log_kind=per_pl(NONE), log_epoch=per_pl(NONE), log_txn=per_pl(NONE), log_input=per_pl(NONE),
                log_end=[0] * P, part_epoch=[NONE] * P, part_seq=[NONE] * P, read_pos=[0] * P,
                returned=per_pl(0),
                group_offset=0, pending_offset=NONE, group_marker_kind=NONE, group_marker_txn=NONE,
                co_state=EMPTY, co_epoch=NONE, co_txn=NONE, co_parts=[0] * P, co_group=0,
                marked=[0] * P, marked_group=0, failovers=0, next_txn=0,
            )
        ]

    # -- reading a partition log -----------------------------------------------------------

    def resolution(self, s: Any, X: Any, p: int, o: int) -> Any:
        """The kind of the first marker after offset o in p's log (NONE: still open)."""
        res: Any = NONE
        for m in reversed(self.offsets):
            if m > o:
                res = X.ite(X.and_(m < s.log_end[p], s.log_kind[p][m] != DATA), s.log_kind[p][m], res)
        return res

    def open_txn(self, s: Any, X: Any, p: int) -> Any:
        """p holds a transaction with no marker yet: its last entry is data."""
        end = s.log_end[p]
        return X.and_(end > 0, X.at(s.log_kind[p], end - 1) == DATA)

    def last_stable_offset(self, s: Any, X: Any, p: int) -> Any:
        """The first offset of an open transaction, or the log end (the LSO)."""
        lso: Any = s.log_end[p]
        for o in reversed(self.offsets):
            unresolved = X.and_(o < s.log_end[p], s.log_kind[p][o] == DATA, self.resolution(s, X, p, o) == NONE)
            lso = X.ite(unresolved, o, lso)
        return lso

    def coordinator_open(self, s: Any, X: Any) -> Any:
        return X.or_(s.co_state == ONGOING, s.co_state == PREPARE_COMMIT, s.co_state == PREPARE_ABORT)

    def preparing(self, s: Any, X: Any) -> Any:
        return X.or_(s.co_state == PREPARE_COMMIT, s.co_state == PREPARE_ABORT)

    def joinable(self, s: Any, X: Any, i: int) -> Any:
        """The coordinator takes the instance's AddPartitionsToTxn / AddOffsetsToTxn: same epoch,
        and not completing a transaction (CONCURRENT_TRANSACTIONS: the client retries later)."""
        return X.and_(s.phase[i] == IN_TRANSACTION, s.abortable[i] == 0, s.epoch[i] == s.co_epoch,
                      X.not_(self.preparing(s, X)))

    def join(self, s: Any, X: Any, i: int) -> dict[str, Any]:
        """Coordinator effect of adding to the instance's transaction: Ongoing, logged."""
        fresh = s.co_state != ONGOING
        return {
            "co_state": ONGOING,
            "co_txn": s.txn[i],
            "co_parts": [X.ite(fresh, 0, s.co_parts[p]) for p in self.P],
            "co_group": X.ite(fresh, 0, s.co_group),
        }

    def reset_transaction(self, i: int) -> dict[str, Any]:
        """The instance's client-side transaction state, cleared."""
        P = len(self.P)
        return {
            "txn": {i: NONE}, "input": {i: NONE}, "added": {i: [0] * P}, "write": {i: [UNSENT] * P},
            "offsets_sent": {i: 0}, "abortable": {i: 0},
        }

    # -- actions ---------------------------------------------------------------------------

    def actions(self) -> Sequence[Action]:
        inst = Param("producer", tuple(self.I), producer_name)
        part = Param("partition", tuple(self.P), partition_name)
        decision = Param("commit", (1, 0), lambda c: "commit" if c else "abort")

        def act(name: str, guard: Any, effect: Any, params: tuple[Param, ...]) -> Action:
            return Action(name, guard, effect, params, None, " ".join((guard.__doc__ or "").split()))

        acts = [
            act("init_producer_id", self.init_guard, self.init_effect, (inst,)),
            act("begin_transaction", self.begin_guard, self.begin_effect, (inst,)),
            act("add_partition", self.add_guard, self.add_effect, (inst, part)),
            act("send", self.send_guard, self.send_effect, (inst, part)),
            act("request_timeout", self.timeout_guard, self.timeout_effect, (inst, part)),
            act("partition_append", self.append_guard, self.append_effect, (inst, part)),
            act("send_offsets", self.offsets_guard, self.offsets_effect, (inst,)),
            act("end_txn", self.end_guard, self.end_effect, (inst, decision)),
            act("fenced", self.fenced_guard, self.fenced_effect, (inst,)),
            act("write_marker", self.marker_guard, self.marker_effect, (part,)),
            act("write_offsets_marker", self.group_marker_guard, self.group_marker_effect, ()),
            act("complete_txn", self.complete_guard, self.complete_effect, ()),
            act("consume", self.consume_guard, self.consume_effect, (part,)),
        ]
        if self.max_failovers:
            acts.append(act("coordinator_failover", self.failover_guard, self.failover_effect, ()))
        return acts

    def init_guard(self, s: Any, X: Any, i: int) -> Any:
        """initTransactions: InitProducerId bumps the epoch, fencing older instances. An Ongoing
        transaction is aborted first (PrepareAbort with the new epoch) and the instance retries;
        while a transaction completes the coordinator answers CONCURRENT_TRANSACTIONS. [002 A.1; KIP-98]"""
        return X.and_(s.phase[i] == UNINITIALISED, X.not_(self.preparing(s, X)), s.co_epoch < self.E)

    def init_effect(self, s: Any, X: Any, i: int) -> dict[str, Any]:
        aborts = s.co_state == ONGOING
        epoch = s.co_epoch + 1
        return {
            "co_epoch": epoch,
            "co_state": X.ite(aborts, PREPARE_ABORT, EMPTY),
            "phase": {i: X.ite(aborts, UNINITIALISED, READY)},
            "epoch": {i: X.ite(aborts, s.epoch[i], epoch)},
            "seq": {i: [X.ite(aborts, s.seq[i][p], 0) for p in self.P]},
            "position": {i: NONE},
        }

    def begin_guard(self, s: Any, X: Any, i: int) -> Any:
        """beginTransaction: the application takes its next input record, after an abort or a
        restart from the group's committed offset, which it reads only once no transactional
        offset is pending (KIP-447's stable offset fetch). [002; KIP-98]"""
        fetch = s.position[i] == NONE
        nxt = X.ite(fetch, s.group_offset, s.position[i])
        stable = X.or_(X.not_(fetch), s.pending_offset == NONE)
        return X.and_(s.phase[i] == READY, s.next_txn < self.T, stable, nxt < self.N)

    def begin_effect(self, s: Any, X: Any, i: int) -> dict[str, Any]:
        nxt = X.ite(s.position[i] == NONE, s.group_offset, s.position[i])
        return {"phase": {i: IN_TRANSACTION}, "txn": {i: s.next_txn}, "next_txn": s.next_txn + 1,
                "input": {i: nxt}, "position": {i: nxt}}

    def add_guard(self, s: Any, X: Any, i: int, p: int) -> Any:
        """AddPartitionsToTxn before the first write to a partition in the transaction; the
        coordinator logs Ongoing with the partition. [002 A.2; KIP-98]"""
        return X.and_(self.joinable(s, X, i), s.added[i][p] == 0)

    def add_effect(self, s: Any, X: Any, i: int, p: int) -> dict[str, Any]:
        effect = self.join(s, X, i)
        effect["co_parts"] = [1 if q == p else v for q, v in enumerate(effect["co_parts"])]
        return {**effect, "added": {i: {p: 1}}}

    def send_guard(self, s: Any, X: Any, i: int, p: int) -> Any:
        """The producer sends its output record for the input to a partition it added, with
        producer id, epoch and the next sequence number. [002 C; KIP-98]"""
        return X.and_(s.phase[i] == IN_TRANSACTION, s.abortable[i] == 0, s.added[i][p] == 1,
                      s.write[i][p] == UNSENT, s.request[i][p] == 0)

    def send_effect(self, s: Any, X: Any, i: int, p: int) -> dict[str, Any]:
        return {
            "write": {i: {p: AWAITING}}, "seq": {i: {p: s.seq[i][p] + 1}},
            "request": {i: {p: 1}}, "request_epoch": {i: {p: s.epoch[i]}}, "request_seq": {i: {p: s.seq[i][p]}},
            "request_txn": {i: {p: s.txn[i]}}, "request_input": {i: {p: s.input[i]}},
        }

    def timeout_guard(self, s: Any, X: Any, i: int, p: int) -> Any:
        """request.timeout.ms passes with the produce request still in the network: the producer
        gives up on it, and its transaction can only abort; the request may still land. [KIP-890 motivation]"""
        return X.and_(s.write[i][p] == AWAITING, s.request[i][p] == 1)

    def timeout_effect(self, s: Any, X: Any, i: int, p: int) -> dict[str, Any]:
        return {"write": {i: {p: GAVE_UP}}, "abortable": {i: 1}}

    def verified(self, s: Any, X: Any, i: int, p: int) -> Any:
        """KIP-890 part 1: before the first write of a transaction (no open transaction of this
        epoch at the partition) the leader asks the coordinator whether the producer's transaction
        is Ongoing, in this epoch, with the partition in it."""
        e = s.request_epoch[i][p]
        continues = X.and_(self.open_txn(s, X, p), X.at(s.log_epoch[p], s.log_end[p] - 1) == e)
        ongoing = X.and_(s.co_state == ONGOING, s.co_epoch == e, s.co_parts[p] == 1)
        return X.or_(continues, ongoing)

    def append_guard(self, s: Any, X: Any, i: int, p: int) -> Any:
        """The partition leader handles a produce request, whenever the network delivers it: an
        older epoch than it has seen is refused (fencing); otherwise the next sequence of the
        epoch (0 in a newer one) is appended (KIP-98); kip890 first verifies the transaction
        (KIP-890 part 1). The answer reaches the producer unless it gave up. [002 C; KIP-98; KIP-890]"""
        return X.and_(s.request[i][p] == 1, s.log_end[p] < self.L)

    def append_effect(self, s: Any, X: Any, i: int, p: int) -> dict[str, Any]:
        e, q, end = s.request_epoch[i][p], s.request_seq[i][p], s.log_end[p]
        fenced = e < s.part_epoch[p]
        in_sequence = X.ite(e == s.part_epoch[p], q == s.part_seq[p] + 1, q == 0)
        accept = X.and_(X.not_(fenced), in_sequence)
        if self.kip890:
            accept = X.and_(accept, self.verified(s, X, i, p))
        waiting = s.write[i][p] == AWAITING
        at_end = [X.and_(accept, o == end) for o in self.offsets]
        return {
            "request": {i: {p: 0}}, "request_epoch": {i: {p: NONE}}, "request_seq": {i: {p: NONE}},
            "request_txn": {i: {p: NONE}}, "request_input": {i: {p: NONE}},
            "log_kind": {p: [X.ite(at_end[o], DATA, s.log_kind[p][o]) for o in self.offsets]},
            "log_epoch": {p: [X.ite(at_end[o], e, s.log_epoch[p][o]) for o in self.offsets]},
            "log_txn": {p: [X.ite(at_end[o], s.request_txn[i][p], s.log_txn[p][o]) for o in self.offsets]},
            "log_input": {p: [X.ite(at_end[o], s.request_input[i][p], s.log_input[p][o]) for o in self.offsets]},
            "log_end": {p: X.ite(accept, end + 1, end)},
            "part_epoch": {p: X.ite(accept, e, s.part_epoch[p])},
            "part_seq": {p: X.ite(accept, q, s.part_seq[p])},
            # the answer: acked, ProducerFenced (the instance stops), or an error that makes the
            # transaction abortable (OutOfOrderSequence, or KIP-890's failed verification)
            "write": {i: {p: X.ite(X.and_(waiting, accept), ACKED, s.write[i][p])}},
            "phase": {i: X.ite(X.and_(waiting, fenced), FENCED, s.phase[i])},
            "abortable": {i: X.ite(X.and_(waiting, X.not_(accept)), 1, s.abortable[i])},
        }

    def offsets_guard(self, s: Any, X: Any, i: int) -> Any:
        """sendOffsetsToTransaction: AddOffsetsToTxn puts the group's offsets partition in the
        transaction, then TxnOffsetCommit leaves the next input offset pending until the marker. [002]"""
        return X.and_(self.joinable(s, X, i), s.offsets_sent[i] == 0)

    def offsets_effect(self, s: Any, X: Any, i: int) -> dict[str, Any]:
        return {**self.join(s, X, i), "co_group": 1, "pending_offset": s.input[i] + 1, "offsets_sent": {i: 1}}

    def end_guard(self, s: Any, X: Any, i: int, commit: int) -> Any:
        """commitTransaction (every write acknowledged and the offsets sent) or abortTransaction
        (no write still awaited): EndTxn makes the coordinator log PrepareCommit or PrepareAbort,
        the point of no return; kip890 bumps the epoch and returns it (KIP-890 part 2). [002 A.3, D]"""
        base = X.and_(s.phase[i] == IN_TRANSACTION, X.not_(X.or_(*[s.write[i][p] == AWAITING for p in self.P])),
                      X.or_(s.epoch[i] == s.co_epoch, X.not_(s.co_state == ONGOING)))
        if commit:
            done = [X.and_(s.added[i][p] == 1, s.write[i][p] == ACKED) for p in self.P]
            return X.and_(base, s.abortable[i] == 0, s.offsets_sent[i] == 1, *done, s.co_state == ONGOING,
                          s.epoch[i] == s.co_epoch)
        return base

    def end_effect(self, s: Any, X: Any, i: int, commit: int) -> dict[str, Any]:
        ours = X.and_(s.co_state == ONGOING, s.epoch[i] == s.co_epoch)  # else nothing to end at the coordinator
        epoch = s.co_epoch + 1 if self.kip890 else s.co_epoch
        effect: dict[str, Any] = {
            **self.reset_transaction(i),
            "phase": {i: READY},
            "position": {i: s.input[i] + 1 if commit else NONE},
            "co_state": X.ite(ours, PREPARE_COMMIT if commit else PREPARE_ABORT, s.co_state),
        }
        if self.kip890:
            effect["co_epoch"] = X.ite(ours, epoch, s.co_epoch)
            effect["epoch"] = {i: X.ite(ours, epoch, s.epoch[i])}
            effect["seq"] = {i: [X.ite(ours, 0, s.seq[i][p]) for p in self.P]}
        return effect

    def fenced_guard(self, s: Any, X: Any, i: int) -> Any:
        """An instance whose epoch a newer InitProducerId superseded gets ProducerFenced from the
        coordinator on its next request, and closes. [002 A.1; KIP-98]"""
        return X.and_(X.or_(s.phase[i] == READY, s.phase[i] == IN_TRANSACTION), s.epoch[i] < s.co_epoch)

    def fenced_effect(self, s: Any, X: Any, i: int) -> dict[str, Any]:
        return {**self.reset_transaction(i), "phase": {i: FENCED}}

    def marker_guard(self, s: Any, X: Any, p: int) -> Any:
        """Phase 2: the coordinator writes the COMMIT or ABORT marker, with the transaction's
        epoch, to every partition in the transaction. [002 D; KIP-98]"""
        return X.and_(self.preparing(s, X), s.co_parts[p] == 1, s.marked[p] == 0, s.log_end[p] < self.L)

    def marker_effect(self, s: Any, X: Any, p: int) -> dict[str, Any]:
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

    def group_marker_guard(self, s: Any, X: Any) -> Any:
        """The marker reaches the group's offsets partition: on commit the pending offset becomes
        the committed one, on abort it is dropped. [002 offsets in the transaction]"""
        return X.and_(self.preparing(s, X), s.co_group == 1, s.marked_group == 0)

    def group_marker_effect(self, s: Any, X: Any) -> dict[str, Any]:
        commit = X.and_(s.co_state == PREPARE_COMMIT, s.pending_offset != NONE)
        return {"group_offset": X.ite(commit, s.pending_offset, s.group_offset), "pending_offset": NONE,
                "marked_group": 1, "group_marker_txn": s.co_txn,
                "group_marker_kind": X.ite(s.co_state == PREPARE_COMMIT, COMMIT, ABORT)}

    def complete_guard(self, s: Any, X: Any) -> Any:
        """Once every marker is written the coordinator logs CompleteCommit or CompleteAbort. [002 D]"""
        marked = [X.implies(s.co_parts[p] == 1, s.marked[p] == 1) for p in self.P]
        return X.and_(self.preparing(s, X), X.implies(s.co_group == 1, s.marked_group == 1), *marked)

    def complete_effect(self, s: Any, X: Any) -> dict[str, Any]:
        P = len(self.P)
        return {"co_state": X.ite(s.co_state == PREPARE_COMMIT, COMPLETE_COMMIT, COMPLETE_ABORT),
                "co_parts": [0] * P, "co_group": 0, "marked": [0] * P, "marked_group": 0}

    def failover_guard(self, s: Any, X: Any) -> Any:
        """The broker leading the transaction log partition fails; the new coordinator rebuilds
        the transaction's state from the log and sends the markers of a Prepare* state again. [002 B]"""
        return s.failovers < self.max_failovers

    def failover_effect(self, s: Any, X: Any) -> dict[str, Any]:
        return {"marked": [0] * len(self.P), "marked_group": 0, "failovers": s.failovers + 1}

    def consume_guard(self, s: Any, X: Any, p: int) -> Any:
        """A read_committed consumer reads up to the last stable offset, skipping aborted records
        and markers. [002 D; KIP-98]"""
        return s.read_pos[p] < self.last_stable_offset(s, X, p)

    def consume_effect(self, s: Any, X: Any, p: int) -> dict[str, Any]:
        pos = s.read_pos[p]
        returned = [X.and_(o == pos, s.log_kind[p][o] == DATA, self.resolution(s, X, p, o) != ABORT)
                    for o in self.offsets]
        return {"read_pos": {p: pos + 1},
                "returned": {p: [X.ite(returned[o], 1, s.returned[p][o]) for o in self.offsets]}}

    # -- presentation ----------------------------------------------------------------------

    def describe(self, state: State) -> dict[str, str]:
        return describe(self, state)
