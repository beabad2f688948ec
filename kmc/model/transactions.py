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

KIP-890's two changes are actions of their own (`verified_partition_append`,
`end_txn_bumping_epoch`), which `actions()` picks in kip890 mode in place of KIP-98's.

Ending a transaction (EndTxn, the markers, completion, failover) is in
kmc/model/transactions_end.py, a mixin of this class. `--end-txn-in-flight` (off by default)
lets EndTxn requests stay in the network past request.timeout.ms, as produce requests can:
the producer retries or aborts, and the delayed request lands later (KAFKA-17754).

See docs/transactions.md for each rule and the KIP or seed section it comes from.
"""

from __future__ import annotations

from typing import Sequence

from kmc.model.core import (
    NONE, Action, Backend, Bool, Effect, Field, Int, Lane, Lanes, Message, Model, Option, Schema, State, StateView,
    action,
)
from kmc.model.transactions_end import TransactionEnd
from kmc.model.transactions_view import (
    ABORT, ACKED, AWAITING, COMPLETE_ABORT, DATA, EMPTY, FENCED, GAVE_UP, IN_TRANSACTION, ONGOING, PARTITION,
    PREPARE_ABORT, PRODUCER, READY, UNINITIALISED, UNSENT, describe,
)

MODES = {
    "kip98": "classic transactions: no partition-side verification, epoch bumped only by InitProducerId (KIP-98)",
    "kip890": "partition verifies the transaction before a first write; epoch bumped at every transaction end (KIP-890)",
}


class Transactions(TransactionEnd, Model):
    name = "transactions"
    lanes = Lanes(
        Lane("producers", PRODUCER), Lane("coordinator"), Lane("partitions", PARTITION), Lane("group"),
        local={"begin_transaction": "producer", "request_timeout": "producer", "fenced": "producer",
               "complete_txn": "coordinator", "coordinator_failover": "coordinator", "consume": "partition"},
        messages=[
            Message("InitProducerId", "producer", "coordinator", sent_by="init_producer_id",
                    received_by="init_producer_id"),
            Message("AddPartitionsToTxn", "producer", "coordinator", sent_by="add_partition",
                    received_by="add_partition"),
            Message("Produce", "producer", "partition", sent_by="send", received_by="partition_append"),
            Message("AddOffsetsToTxn", "producer", "coordinator", sent_by="send_offsets", received_by="send_offsets"),
            Message("EndTxn", "producer", "coordinator", sent_by="end_txn", received_by="end_txn"),
            Message("EndTxn", "producer", "coordinator", sent_by="end_txn_timeout", received_by="delayed_end_txn"),
            Message("WriteTxnMarkers", "coordinator", "partition", sent_by="write_marker", received_by="write_marker"),
            Message("WriteTxnMarkers", "coordinator", "group", sent_by="write_offsets_marker",
                    received_by="write_offsets_marker"),
        ],
    )
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
        Option("end_txn_in_flight", False, "EndTxn requests delayed past request.timeout.ms, retried or "
               "followed by an abort, landing late (KAFKA-17754)"),
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
        self.end_txn_in_flight: bool = s["end_txn_in_flight"]
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
                Field("phase", lo=UNINITIALISED, hi=FENCED, shape=(I,),
                      doc="instance: uninitialised, ready, in transaction, fenced"),
                Field("epoch", lo=NONE, hi=E, shape=(I,), doc="producer epoch the instance holds"),
                Field("txn", lo=NONE, hi=T - 1, shape=(I,),
                      doc="transaction the instance is in (ghost: T1, T2, ...)"),
                Field("position", lo=NONE, hi=N, shape=(I,),
                      doc="the application's next input record (-1: fetch the committed offset)"),
                Field("input", lo=NONE, hi=N - 1, shape=(I,), doc="input record the transaction processes"),
                Field("added", lo=0, hi=1, shape=(I, P), doc="AddPartitionsToTxn answered for the partition"),
                Field("write", lo=UNSENT, hi=GAVE_UP, shape=(I, P),
                      doc="the instance's write to the partition in this transaction"),
                Field("offsets_sent", lo=0, hi=1, shape=(I,), doc="consumer offsets sent to the transaction"),
                Field("abortable", lo=0, hi=1, shape=(I,),
                      doc="a write failed or timed out: the transaction can only abort"),
                Field("seq", lo=0, hi=T, shape=(I, P), doc="next sequence number to the partition"),
                # produce requests in the network
                Field("request", lo=0, hi=1, shape=(I, P), doc="a produce request in the network"),
                Field("request_epoch", lo=NONE, hi=E, shape=(I, P), doc="its producer epoch"),
                Field("request_seq", lo=NONE, hi=T, shape=(I, P), doc="its sequence number"),
                Field("request_txn", lo=NONE, hi=T - 1, shape=(I, P),
                      doc="the transaction it was sent in (ghost)"),
                Field("request_input", lo=NONE, hi=N - 1, shape=(I, P),
                      doc="the input record its output comes from"),
                # output partitions
                Field("log_kind", lo=NONE, hi=ABORT, shape=(P, L),
                      doc="entry: data, COMMIT or ABORT marker (-1: empty)"),
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
                Field("pending_offset", lo=NONE, hi=N,
                      doc="offset committed in an open transaction (TxnOffsetCommit)"),
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
                *(self.in_flight_fields() if self.end_txn_in_flight else []),
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
                **(self.in_flight_initial() if self.end_txn_in_flight else {}),
            )
        ]

    # -- reading a partition log -----------------------------------------------------------

    def resolution(self, s: StateView, X: Backend, p: int, o: int) -> Int:
        """The kind of the first marker after offset o in p's log (NONE: still open)."""
        res: Int = NONE
        for m in reversed(self.offsets):
            if m > o:
                res = X.ite(X.and_(m < s.log_end[p], s.log_kind[p][m] != DATA), s.log_kind[p][m], res)
        return res

    def open_txn(self, s: StateView, X: Backend, p: int) -> Bool:
        """p holds a transaction with no marker yet: its last entry is data."""
        end = s.log_end[p]
        return X.and_(end > 0, X.at(s.log_kind[p], end - 1) == DATA)

    def last_stable_offset(self, s: StateView, X: Backend, p: int) -> Int:
        """The first offset of an open transaction, or the log end (the LSO)."""
        lso: Int = s.log_end[p]
        for o in reversed(self.offsets):
            unresolved = X.and_(o < s.log_end[p], s.log_kind[p][o] == DATA, self.resolution(s, X, p, o) == NONE)
            lso = X.ite(unresolved, o, lso)
        return lso

    def joinable(self, s: StateView, X: Backend, i: int) -> Bool:
        """The coordinator takes the instance's AddPartitionsToTxn / AddOffsetsToTxn: same epoch,
        and not completing a transaction (CONCURRENT_TRANSACTIONS: the client retries later); the
        producer adds nothing once it has sent EndTxn."""
        return X.and_(s.phase[i] == IN_TRANSACTION, s.abortable[i] == 0, s.epoch[i] == s.co_epoch,
                      X.not_(self.preparing(s, X)), *self.not_ending(s, i))

    def not_ending(self, s: StateView, i: int) -> list[Bool]:
        """With --end-txn-in-flight: no EndTxn of the instance timed out (it sends nothing more)."""
        return [s.unanswered[i] == NONE] if self.end_txn_in_flight else []

    def join(self, s: StateView, X: Backend, i: int) -> Effect:
        """Coordinator effect of adding to the instance's transaction: Ongoing, logged."""
        fresh = s.co_state != ONGOING
        return {
            "co_state": ONGOING,
            "co_txn": s.txn[i],
            "co_parts": [X.ite(fresh, 0, s.co_parts[p]) for p in self.P],
            "co_group": X.ite(fresh, 0, s.co_group),
        }

    # -- actions ---------------------------------------------------------------------------

    def actions(self) -> Sequence[Action]:
        """Every action, in the order engines explore them (it fixes the BFS order, hence which
        shortest trace is found); kip890 takes KIP-890's partition append and transaction end."""
        append, end = ((self.verified_partition_append, self.end_txn_bumping_epoch) if self.kip890
                       else (self.partition_append, self.end_txn))
        ends = [self.answered_end_txn, self.end_txn_timeout, self.delayed_end_txn] if self.end_txn_in_flight else [end]
        acts = [
            self.init_producer_id, self.begin_transaction, self.add_partition, self.send, self.request_timeout,
            append, self.send_offsets, *ends, self.fenced, self.write_marker, self.write_offsets_marker,
            self.complete_txn, self.consume,
        ]
        if self.max_failovers:
            acts.append(self.coordinator_failover)
        return acts

    # -- the producer ----------------------------------------------------------------------

    @action(producer=PRODUCER)
    def init_producer_id(self, s: StateView, X: Backend, i: int) -> Bool:
        """initTransactions: InitProducerId bumps the epoch, fencing older instances. An Ongoing
        transaction is aborted first (PrepareAbort with the new epoch) and the instance retries;
        while a transaction completes the coordinator answers CONCURRENT_TRANSACTIONS. [002 A.1; KIP-98]"""
        return X.and_(s.phase[i] == UNINITIALISED, X.not_(self.preparing(s, X)), s.co_epoch < self.E)

    @init_producer_id.effect
    def _(self, s: StateView, X: Backend, i: int) -> Effect:
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

    @action(producer=PRODUCER)
    def begin_transaction(self, s: StateView, X: Backend, i: int) -> Bool:
        """beginTransaction: the application takes its next input record, after an abort or a
        restart from the group's committed offset, which it reads only once no transactional
        offset is pending (KIP-447's stable offset fetch). [002; KIP-98]"""
        fetch = s.position[i] == NONE
        nxt = X.ite(fetch, s.group_offset, s.position[i])
        stable = X.or_(X.not_(fetch), s.pending_offset == NONE)
        return X.and_(s.phase[i] == READY, s.next_txn < self.T, stable, nxt < self.N)

    @begin_transaction.effect
    def _(self, s: StateView, X: Backend, i: int) -> Effect:
        nxt = X.ite(s.position[i] == NONE, s.group_offset, s.position[i])
        return {"phase": {i: IN_TRANSACTION}, "txn": {i: s.next_txn}, "next_txn": s.next_txn + 1,
                "input": {i: nxt}, "position": {i: nxt}}

    @action(producer=PRODUCER, partition=PARTITION)
    def add_partition(self, s: StateView, X: Backend, i: int, p: int) -> Bool:
        """AddPartitionsToTxn before the first write to a partition in the transaction; the
        coordinator logs Ongoing with the partition. [002 A.2; KIP-98]"""
        return X.and_(self.joinable(s, X, i), s.added[i][p] == 0)

    @add_partition.effect
    def _(self, s: StateView, X: Backend, i: int, p: int) -> Effect:
        effect = self.join(s, X, i)
        effect["co_parts"] = [1 if q == p else v for q, v in enumerate(effect["co_parts"])]
        return {**effect, "added": {i: {p: 1}}}

    @action(producer=PRODUCER, partition=PARTITION)
    def send(self, s: StateView, X: Backend, i: int, p: int) -> Bool:
        """The producer sends its output record for the input to a partition it added, with
        producer id, epoch and the next sequence number. [002 C; KIP-98]"""
        return X.and_(s.phase[i] == IN_TRANSACTION, s.abortable[i] == 0, s.added[i][p] == 1,
                      s.write[i][p] == UNSENT, s.request[i][p] == 0, *self.not_ending(s, i))

    @send.effect
    def _(self, s: StateView, X: Backend, i: int, p: int) -> Effect:
        return {
            "write": {i: {p: AWAITING}}, "seq": {i: {p: s.seq[i][p] + 1}},
            "request": {i: {p: 1}}, "request_epoch": {i: {p: s.epoch[i]}}, "request_seq": {i: {p: s.seq[i][p]}},
            "request_txn": {i: {p: s.txn[i]}}, "request_input": {i: {p: s.input[i]}},
        }

    @action(producer=PRODUCER, partition=PARTITION)
    def request_timeout(self, s: StateView, X: Backend, i: int, p: int) -> Bool:
        """request.timeout.ms passes with the produce request still in the network: the producer
        gives up on it, and its transaction can only abort; the request may still land. [KIP-890 motivation]"""
        return X.and_(s.write[i][p] == AWAITING, s.request[i][p] == 1)

    @request_timeout.effect
    def _(self, s: StateView, X: Backend, i: int, p: int) -> Effect:
        return {"write": {i: {p: GAVE_UP}}, "abortable": {i: 1}}

    # -- the partition leader --------------------------------------------------------------

    def in_epoch_and_sequence(self, s: StateView, X: Backend, i: int, p: int) -> Bool:
        """KIP-98: the request's epoch is not older than the partition's, and its sequence is the
        next of that epoch (0 in a newer one)."""
        e, q = s.request_epoch[i][p], s.request_seq[i][p]
        in_sequence = X.ite(e == s.part_epoch[p], q == s.part_seq[p] + 1, q == 0)
        return X.and_(X.not_(e < s.part_epoch[p]), in_sequence)

    def verified(self, s: StateView, X: Backend, i: int, p: int) -> Bool:
        """KIP-890 part 1: before the first write of a transaction (no open transaction of this
        epoch at the partition) the leader asks the coordinator whether the producer's transaction
        is Ongoing, in this epoch, with the partition in it."""
        e = s.request_epoch[i][p]
        continues = X.and_(self.open_txn(s, X, p), X.at(s.log_epoch[p], s.log_end[p] - 1) == e)
        ongoing = X.and_(s.co_state == ONGOING, s.co_epoch == e, s.co_parts[p] == 1)
        return X.or_(continues, ongoing)

    def append(self, s: StateView, X: Backend, i: int, p: int, accept: Bool) -> Effect:
        """The leader takes the request off the network and appends it when it `accept`s it."""
        e, q, end = s.request_epoch[i][p], s.request_seq[i][p], s.log_end[p]
        fenced = e < s.part_epoch[p]
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

    @action(producer=PRODUCER, partition=PARTITION)
    def partition_append(self, s: StateView, X: Backend, i: int, p: int) -> Bool:
        """The partition leader handles a produce request, whenever the network delivers it: an
        older epoch than it has seen is refused (fencing); otherwise the next sequence of the
        epoch (0 in a newer one) is appended. The answer reaches the producer unless it gave up. [002 C; KIP-98]"""
        return X.and_(s.request[i][p] == 1, s.log_end[p] < self.L)

    @partition_append.effect
    def _(self, s: StateView, X: Backend, i: int, p: int) -> Effect:
        return self.append(s, X, i, p, self.in_epoch_and_sequence(s, X, i, p))

    @action(name="partition_append", producer=PRODUCER, partition=PARTITION)
    def verified_partition_append(self, s: StateView, X: Backend, i: int, p: int) -> Bool:
        """(kip890) As partition_append, but the leader first verifies the transaction with the
        coordinator (KIP-890 part 1). [002 C; KIP-98; KIP-890]"""
        return X.and_(s.request[i][p] == 1, s.log_end[p] < self.L)

    @verified_partition_append.effect
    def _(self, s: StateView, X: Backend, i: int, p: int) -> Effect:
        return self.append(s, X, i, p, X.and_(self.in_epoch_and_sequence(s, X, i, p), self.verified(s, X, i, p)))

    # -- ending the transaction ------------------------------------------------------------

    @action(producer=PRODUCER)
    def send_offsets(self, s: StateView, X: Backend, i: int) -> Bool:
        """sendOffsetsToTransaction: AddOffsetsToTxn puts the group's offsets partition in the
        transaction, then TxnOffsetCommit leaves the next input offset pending until the marker. [002]"""
        return X.and_(self.joinable(s, X, i), s.offsets_sent[i] == 0)

    @send_offsets.effect
    def _(self, s: StateView, X: Backend, i: int) -> Effect:
        return {**self.join(s, X, i), "co_group": 1, "pending_offset": s.input[i] + 1, "offsets_sent": {i: 1}}

    @action(producer=PRODUCER)
    def fenced(self, s: StateView, X: Backend, i: int) -> Bool:
        """An instance whose epoch a newer InitProducerId superseded gets ProducerFenced from the
        coordinator on its next request, and closes. [002 A.1; KIP-98]"""
        return X.and_(X.or_(s.phase[i] == READY, s.phase[i] == IN_TRANSACTION), s.epoch[i] < s.co_epoch)

    @fenced.effect
    def _(self, s: StateView, X: Backend, i: int) -> Effect:
        return {**self.reset_transaction(i), "phase": {i: FENCED}}

    # -- the read_committed consumer -------------------------------------------------------

    @action(partition=PARTITION)
    def consume(self, s: StateView, X: Backend, p: int) -> Bool:
        """A read_committed consumer reads up to the last stable offset, skipping aborted records
        and markers. [002 D; KIP-98]"""
        return s.read_pos[p] < self.last_stable_offset(s, X, p)

    @consume.effect
    def _(self, s: StateView, X: Backend, p: int) -> Effect:
        pos = s.read_pos[p]
        returned = [X.and_(o == pos, s.log_kind[p][o] == DATA, self.resolution(s, X, p, o) != ABORT)
                    for o in self.offsets]
        return {"read_pos": {p: pos + 1},
                "returned": {p: [X.ite(returned[o], 1, s.returned[p][o]) for o in self.offsets]}}

    # -- presentation ----------------------------------------------------------------------

    def describe(self, state: State) -> dict[str, str]:
        return describe(self, state)
