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

from typing import Any, Sequence

from kmc.model.core import NONE, Action, Field, Model, Option, Param, Schema, State

MODES = {
    "no-idempotence": "enable.idempotence=false: the leader appends every request it receives",
    "idempotence": "enable.idempotence=true: sequence numbers per producer id, duplicates and gaps refused (KIP-98)",
}

UNSENT, AWAITING, ACKED = 0, 1, 2
DEDUP_WINDOW = 5  # Kafka's leader keeps the metadata of the last five batches per producer id


def batch_name(b: int) -> str:
    return f"b{b}"


class Idempotence(Model):
    name = "idempotence"
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
                Field("batch", lo=UNSENT, hi=ACKED, shape=(n,), doc="producer: 0 unsent, 1 awaiting a response, 2 acknowledged"),
                Field("requests", lo=0, hi=R + 1, shape=(n,), doc="copies of the batch's produce request in the network"),
                Field("retries_used", lo=0, hi=R, doc="batches sent again so far"),
                Field("log", lo=NONE, hi=n - 1, shape=(L,), doc="the partition log: batch per offset (-1: empty)"),
                Field("log_end", lo=0, hi=L, doc="log end offset"),
                Field("last_seq", lo=NONE, hi=n - 1, doc="the leader's last sequence for the producer id (idempotence)"),
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

    def in_flight(self, s: Any) -> Any:
        return sum(s.batch[b] == AWAITING for b in self.B)

    def duplicate(self, s: Any, X: Any, b: int) -> Any:
        """Batch b is among the last DEDUP_WINDOW batches the leader appended."""
        return X.or_(*[
            X.and_(o < s.log_end, o >= s.log_end - DEDUP_WINDOW, s.log[o] == b) for o in self.offsets
        ])

    def accepts(self, s: Any, X: Any, b: int) -> Any:
        """The leader appends the request for b: always without idempotence; with it, only the
        next sequence (b's sequence number is b)."""
        if not self.idempotent:
            return True
        return s.last_seq + 1 == b

    def answered(self, s: Any, X: Any, b: int) -> Any:
        """The leader answers success: an append, or (idempotence) a duplicate of a batch it has."""
        if not self.idempotent:
            return True
        return X.or_(self.accepts(s, X, b), self.duplicate(s, X, b))

    def handle(self, s: Any, X: Any, b: int) -> dict[str, Any]:
        """The leader handles one copy of b's request: appends it or not."""
        append = self.accepts(s, X, b)
        end = s.log_end
        effect: dict[str, Any] = {
            "requests": {b: s.requests[b] - 1},
            "log": [X.ite(X.and_(append, o == end), b, s.log[o]) for o in self.offsets],
            "log_end": X.ite(append, end + 1, end),
        }
        if self.idempotent:
            effect["last_seq"] = X.ite(append, b, s.last_seq)
        return effect

    # -- actions ---------------------------------------------------------------------------

    def actions(self) -> Sequence[Action]:
        batch = Param("batch", tuple(self.B), batch_name)

        def act(name: str, guard: Any, effect: Any) -> Action:
            return Action(name, guard, effect, (batch,), None, " ".join((guard.__doc__ or "").split()))

        return [
            act("send", self.send_guard, self.send_effect),
            act("leader_append", self.append_guard, self.append_effect),
            act("leader_append_response_lost", self.lost_guard, self.lost_effect),
            act("retry", self.retry_guard, self.retry_effect),
        ]

    def send_guard(self, s: Any, X: Any, b: int) -> Any:
        """The producer's sender thread sends the next batch of the record accumulator, while
        fewer than max.in.flight.requests.per.connection batches await a response. [000 §8.1(2), §8.1(4)]"""
        earlier = True if b == 0 else s.batch[b - 1] != UNSENT
        return X.and_(s.batch[b] == UNSENT, earlier, self.in_flight(s) < self.max_in_flight)

    def send_effect(self, s: Any, X: Any, b: int) -> dict[str, Any]:
        return {"batch": {b: AWAITING}, "requests": {b: s.requests[b] + 1}}

    def append_guard(self, s: Any, X: Any, b: int) -> Any:
        """The leader handles a produce request for b that reached it (in any order with other
        requests in the network) and its response reaches the producer: success acknowledges b;
        with idempotence a gap is refused (OutOfOrderSequence) and the producer sends b again. [000 §8.1(4); KIP-98]"""
        return X.and_(s.requests[b] > 0, s.log_end < self.L)

    def append_effect(self, s: Any, X: Any, b: int) -> dict[str, Any]:
        ok = self.answered(s, X, b)
        return {**self.handle(s, X, b), "batch": {b: X.ite(X.and_(ok, s.batch[b] == AWAITING), ACKED, s.batch[b])}}

    def lost_guard(self, s: Any, X: Any, b: int) -> Any:
        """The leader handles a produce request for b, but its response is lost (the broker or the
        connection fails after the write): the producer cannot tell and keeps waiting. [002; 000 §8.1(1)]"""
        return X.and_(s.requests[b] > 0, s.log_end < self.L)

    def lost_effect(self, s: Any, X: Any, b: int) -> dict[str, Any]:
        return self.handle(s, X, b)

    def retry_guard(self, s: Any, X: Any, b: int) -> Any:
        """A batch awaiting a response times out (request.timeout.ms) or was refused with a
        retriable error, and the producer sends it again, with the same sequence number. [000 §8.1(1)-(3)]"""
        return X.and_(s.batch[b] == AWAITING, s.retries_used < self.retries)

    def retry_effect(self, s: Any, X: Any, b: int) -> dict[str, Any]:
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
