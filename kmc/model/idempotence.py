"""The producer and one partition leader: batches, retries, in-flight requests, sequence numbers.

One producer sends batches b0, b1, ... to one partition, in order, with at most
`max.in.flight.requests.per.connection` batches awaiting a response. The network may hand
requests to the leader in any order (requests may be reordered), and the leader's response
may be lost, so the producer times out and sends the same batch again (retries). Seed 000
§8.1 and seed 002 ("failures that must be handled", item 2) give the two consequences:
a retried batch written twice, and batches written out of order when more than one is in
flight.

Modes (`enable.idempotence`):
- no-idempotence: the leader appends every produce request it receives (Kafka before 0.11,
                  or enable.idempotence=false)
- idempotence:    each batch carries the producer id and its sequence number; the leader keeps
                  the last sequence per producer id and the last five batches, acknowledges a
                  duplicate without appending it again, and refuses a batch that leaves a gap
                  (OutOfOrderSequence), which the producer sends again (KIP-98; seed 002)

The leader's producer state is rebuilt from the log (seed 002: sequence numbers are persisted
in the topic), so a leader change does not lose it; this model has one leader.
See docs/idempotence.md for each rule and where it comes from.
"""

from __future__ import annotations

from typing import Sequence

from kmc.model.core import (
    NONE, Action, Backend, Bool, Domain, Effect, Field, Int, Lane, Lanes, Message, Model, Option, Schema, State,
    StateView, action,
)

MODES = {
    "no-idempotence": "enable.idempotence=false: the leader appends every request it receives",
    "idempotence": "enable.idempotence=true: sequence numbers per producer id, duplicates and gaps refused (KIP-98)",
}

UNSENT, AWAITING, ACKED = 0, 1, 2
DEDUP_WINDOW = 5  # Kafka's leader keeps the metadata of the last five batches per producer id


def batch_name(b: int) -> str:
    return f"b{b}"


BATCH = Domain(lambda m: m.B, batch_name)


class Idempotence(Model):
    name = "idempotence"
    lanes = Lanes(
        Lane("producer"), Lane("leader"),
        messages=[
            Message("Produce", "producer", "leader", sent_by=("send", "retry"),
                    received_by=("leader_append", "leader_append_response_lost"), key="batch"),
            Message("ProduceResponse", "leader", "producer", sent_by="leader_append", received_by="leader_append",
                    key="batch"),
        ],
    )
    summary = "producer batches with retries and in-flight requests, with and without the idempotent producer"
    modes = MODES
    options = (
        Option("mode", "idempotence", "enable.idempotence (no-idempotence: false)", choices=tuple(MODES)),
        Option("batches", 2, "batches the producer sends, in order", min=1, max=5),
        Option("max_in_flight", 2, "max.in.flight.requests.per.connection", min=1, max=5),
        Option("retries", 1, "times the producer may send a batch again, over the whole run", min=0, max=3),
    )

    def _build(self) -> None:
        s = self.settings
        self.B = range(s["batches"])
        self.max_in_flight: int = s["max_in_flight"]
        self.retries: int = s["retries"]
        self.idempotent = self.mode == "idempotence"
        self.L = s["batches"] + s["retries"]  # every send appends at most once
        self.offsets = range(self.L)
        n, R, L = s["batches"], s["retries"], self.L
        self.schema = Schema(
            [
                Field("batch", lo=UNSENT, hi=ACKED, shape=(n,),
                      doc="producer: 0 unsent, 1 awaiting a response, 2 acknowledged"),
                Field("requests", lo=0, hi=R + 1, shape=(n,),
                      doc="copies of the batch's produce request in the network"),
                Field("retries_used", lo=0, hi=R, doc="batches sent again so far"),
                Field("log", lo=NONE, hi=n - 1, shape=(L,), doc="the partition log: batch per offset (-1: empty)"),
                Field("log_end", lo=0, hi=L, doc="log end offset"),
                Field("last_seq", lo=NONE, hi=n - 1,
                      doc="the leader's last sequence for the producer id (idempotence)"),
            ]
        )

    def initial_states(self) -> list[State]:
        n = len(self.B)
        return [
            self.schema.state(
                batch=[UNSENT] * n, requests=[0] * n, retries_used=0,
                log=[NONE] * self.L, log_end=0, last_seq=NONE,
            )
        ]

    # -- shared ----------------------------------------------------------------------------

    def in_flight(self, s: StateView, X: Backend) -> Int:
        return X.count(s.batch[b] == AWAITING for b in self.B)

    def duplicate(self, s: StateView, X: Backend, b: int) -> Bool:
        """Batch b is among the last DEDUP_WINDOW batches the leader appended."""
        return X.exists(self.offsets, lambda o: X.and_(o < s.log_end, o >= s.log_end - DEDUP_WINDOW, s.log[o] == b))

    def accepts(self, s: StateView, X: Backend, b: int) -> Bool:
        """The leader appends the request for b: always without idempotence; with it, only the
        next sequence (b's sequence number is b)."""
        if not self.idempotent:
            return True
        return s.last_seq + 1 == b

    def answered(self, s: StateView, X: Backend, b: int) -> Bool:
        """The leader answers success: an append, or (idempotence) a duplicate of a batch it has."""
        if not self.idempotent:
            return True
        return X.or_(self.accepts(s, X, b), self.duplicate(s, X, b))

    def handle(self, s: StateView, X: Backend, b: int) -> Effect:
        """The leader handles one copy of b's request: appends it or not."""
        append = self.accepts(s, X, b)
        end = s.log_end
        effect: Effect = {
            "requests": {b: s.requests[b] - 1},
            "log": [X.ite(X.and_(append, o == end), b, s.log[o]) for o in self.offsets],
            "log_end": X.ite(append, end + 1, end),
        }
        if self.idempotent:
            effect["last_seq"] = X.ite(append, b, s.last_seq)
        return effect

    # -- actions ---------------------------------------------------------------------------

    def actions(self) -> Sequence[Action]:
        """Every action, in the order engines explore them (it fixes the BFS order)."""
        return [self.send, self.leader_append, self.leader_append_response_lost, self.retry]

    @action(batch=BATCH)
    def send(self, s: StateView, X: Backend, b: int) -> Bool:
        """The producer's sender thread sends the next batch of the record accumulator, while
        fewer than max.in.flight.requests.per.connection batches await a response. [000 §8.1(2), §8.1(4)]"""
        earlier = True if b == 0 else s.batch[b - 1] != UNSENT
        return X.and_(s.batch[b] == UNSENT, earlier, self.in_flight(s, X) < self.max_in_flight)

    @send.effect
    def _(self, s: StateView, X: Backend, b: int) -> Effect:
        return {"batch": {b: AWAITING}, "requests": {b: s.requests[b] + 1}}

    @action(batch=BATCH)
    def leader_append(self, s: StateView, X: Backend, b: int) -> Bool:
        """The leader handles a produce request for b that reached it (in any order with other
        requests in the network) and its response reaches the producer: success acknowledges b;
        with idempotence a gap is refused (OutOfOrderSequence) and the producer sends b again. [000 §8.1(4); KIP-98]"""
        return X.and_(s.requests[b] > 0, s.log_end < self.L)

    @leader_append.effect
    def _(self, s: StateView, X: Backend, b: int) -> Effect:
        ok = self.answered(s, X, b)
        return {**self.handle(s, X, b), "batch": {b: X.ite(X.and_(ok, s.batch[b] == AWAITING), ACKED, s.batch[b])}}

    @action(batch=BATCH)
    def leader_append_response_lost(self, s: StateView, X: Backend, b: int) -> Bool:
        """The leader handles a produce request for b, but its response is lost (the broker or the
        connection fails after the write): the producer cannot tell and keeps waiting. [002; 000 §8.1(1)]"""
        return X.and_(s.requests[b] > 0, s.log_end < self.L)

    @leader_append_response_lost.effect
    def _(self, s: StateView, X: Backend, b: int) -> Effect:
        return self.handle(s, X, b)

    @action(batch=BATCH)
    def retry(self, s: StateView, X: Backend, b: int) -> Bool:
        """A batch awaiting a response times out (request.timeout.ms) or was refused with a
        retriable error, and the producer sends it again, with the same sequence number. [000 §8.1(1)-(3)]"""
        return X.and_(s.batch[b] == AWAITING, s.retries_used < self.retries)

    @retry.effect
    def _(self, s: StateView, X: Backend, b: int) -> Effect:
        return {"requests": {b: s.requests[b] + 1}, "retries_used": s.retries_used + 1}

    # -- presentation ----------------------------------------------------------------------

    def describe(self, state: State) -> dict[str, str]:
        v = self.schema.view(state)
        status = {UNSENT: "unsent", AWAITING: "awaiting response", ACKED: "acknowledged"}
        out = {f"producer.{batch_name(b)}": status[v.batch[b]] for b in self.B}
        out["network"] = "[" + " ".join(f"{batch_name(b)}" for b in self.B for _ in range(v.requests[b])) + "]"
        out["retries used"] = str(v.retries_used)
        out["leader.log"] = "[" + " ".join(batch_name(v.log[o]) for o in range(v.log_end)) + "]"
        if self.idempotent:
            out["leader.last sequence"] = "-" if v.last_seq == NONE else str(v.last_seq)
        return out
