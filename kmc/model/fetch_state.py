"""The fetch model's options, state layout, initial state and the operators its actions share
(kmc/model/fetch.py holds the actions, docs/fetch.md each rule)."""

from __future__ import annotations

from typing import Callable, Sequence

from kmc.errors import BadInput
from kmc.model.core import (
    NONE, Backend, Bool, Domain, Effect, Field, Int, Model, Option, Schema, State, StateView, replica_name,
)


MODES = {
    "hw": "truncate to the local HW on restart and on becoming follower (before KIP-101)",
    "epoch": "truncate by OffsetsForLeaderEpoch on becoming follower (KIP-101, KIP-279)",
    "epoch-fenced": "epoch, with requests fenced by leader epoch and diverging fetch responses (KIP-320)",
}

REPLICA = Domain(lambda m: m.R, replica_name)
REPLICA_OR_NONE = Domain(lambda m: (*m.R, NONE), replica_name)
RECORD = Domain(lambda m: m.records, lambda k: f"m{k}")


class FetchState(Model):
    summary = "HW and LEO fetch by fetch, acks, min.insync.replicas, crashes and elections (seed level)"
    modes = MODES
    options = (
        Option("mode", "epoch", "protocol variant", choices=tuple(MODES)),
        Option("replicas", 2, "number of replicas (r1 leads initially)", min=2, max=4),
        Option("max_records", 2, "records producers may write in a run", min=1, max=6),
        Option("max_leader_epoch", 1, "highest leader epoch the controller may assign (r1 leads epoch 0)", min=0, max=6),
        Option("max_crashes", 2, "broker crashes in a run", min=0, max=6),
        Option("acks", "all", "producer acks: 0, 1, all (or -1)", choices=("0", "1", "all", "-1")),
        Option("min_insync_replicas", 1, "min.insync.replicas: smallest ISR that accepts acks=all writes", min=1, max=4),
        Option("unclean_leader_election", False, "unclean.leader.election.enable: elect a live replica outside the ISR"),
    )

    def _validate(self) -> None:
        if self.settings["acks"] == "-1":
            self.settings["acks"] = "all"
        if self.settings["min_insync_replicas"] > self.settings["replicas"]:
            raise BadInput(
                f"--min-insync-replicas must be at most --replicas ({self.settings['replicas']}); "
                f"got {self.settings['min_insync_replicas']}"
            )

    # -- layout ------------------------------------------------------------------------

    def _build(self) -> None:
        s = self.settings
        self.R = range(s["replicas"])
        self.L = s["max_records"]  # a log never holds more records than were ever written
        self.offsets = range(self.L)
        self.records = range(s["max_records"])
        self.max_epoch: int = s["max_leader_epoch"]
        self.acks: str = s["acks"]
        self.min_isr: int = s["min_insync_replicas"]
        self.unclean: bool = s["unclean_leader_election"]
        n, L, E, N = len(self.R), self.L, self.max_epoch, s["max_records"]
        last = n - 1
        one = (0,)  # indexed by replica
        self.schema = Schema(
            [
                Field("log_record", lo=NONE, hi=N - 1, shape=(n, L), doc="record id per offset", replica_axes=one),
                Field("log_epoch", lo=NONE, hi=E, shape=(n, L),
                      doc="leader epoch per offset (the epoch cache derives from it)", replica_axes=one),
                Field("leo", lo=0, hi=L, shape=(n,), doc="log end offset", replica_axes=one),
                Field("hw", lo=0, hi=L, shape=(n,), doc="high watermark, checkpointed: survives crashes",
                      replica_axes=one),
                Field("alive", lo=0, hi=1, shape=(n,), doc="broker up", replica_axes=one),
                Field("epoch", lo=NONE, hi=E, shape=(n,), doc="leader epoch the replica knows", replica_axes=one),
                Field("leader", lo=NONE, hi=last, shape=(n,), doc="leader the replica follows (itself when leading)",
                      replica_axes=one, holds_replica=True),
                Field("isr", lo=0, hi=1, shape=(n, n), doc="a leader's ISR (flags)", replica_axes=(0, 1)),
                Field("remote_leo", lo=0, hi=L, shape=(n, n), doc="a leader's LEO of each follower, from fetch offsets",
                      replica_axes=(0, 1)),
                Field("response_end", lo=NONE, hi=L, shape=(n,), doc="fetch response in flight: end offset (-1: none)",
                      replica_axes=one),
                Field("response_hw", lo=0, hi=L, shape=(n,), doc="fetch response in flight: the leader's HW",
                      replica_axes=one),
                Field("response_record", lo=NONE, hi=N - 1, shape=(n, L),
                      doc="fetch response in flight: records by offset", replica_axes=one),
                Field("response_epoch", lo=NONE, hi=E, shape=(n, L), doc="fetch response in flight: record epochs",
                      replica_axes=one),
                Field("quorum_leader", lo=NONE, hi=last, doc="leader in ZooKeeper (-1: offline)", holds_replica=True),
                Field("quorum_epoch", lo=0, hi=E, doc="leader epoch in ZooKeeper"),
                Field("quorum_isr", lo=0, hi=1, shape=(n,), doc="ISR in ZooKeeper (flags)", replica_axes=one),
                Field("next_record", lo=0, hi=N, doc="id of the next record produced"),
                Field("acked_offset", lo=NONE, hi=L - 1, shape=(N,),
                      doc="offset at which a record was acknowledged (-1: not)"),
                Field("consumed", lo=NONE, hi=N - 1, shape=(L,), doc="record a consumer read at each offset"),
                Field("consumer_offset", lo=0, hi=L, doc="the consumer's next offset"),
                Field("crashes", lo=0, hi=s["max_crashes"], doc="broker crashes so far"),
            ]
        )

    def initial_states(self) -> list[State]:
        """r1 leads epoch 0 with every replica in the ISR, as in the seed's tables."""
        n, L = len(self.R), self.L
        return [
            self.schema.state(
                log_record=[[NONE] * L for _ in self.R],
                log_epoch=[[NONE] * L for _ in self.R],
                leo=[0] * n,
                hw=[0] * n,
                alive=[1] * n,
                epoch=[0] * n,
                leader=[0] * n,
                isr=[[1] * n if r == 0 else [0] * n for r in self.R],
                remote_leo=[[0] * n for _ in self.R],
                response_end=[NONE] * n,
                response_hw=[0] * n,
                response_record=[[NONE] * L for _ in self.R],
                response_epoch=[[NONE] * L for _ in self.R],
                quorum_leader=0,
                quorum_epoch=0,
                quorum_isr=[1] * n,
                next_record=0,
                acked_offset=[NONE] * len(self.records),
                consumed=[NONE] * L,
                consumer_offset=0,
                crashes=0,
            )
        ]

    # -- shared predicates and effects --------------------------------------------------

    def leads(self, s: StateView, X: Backend, l: int) -> Bool:
        """l is up and believes it is the leader."""
        return X.and_(s.alive[l] == 1, s.leader[l] == l)

    def true_leader(self, s: StateView, X: Backend, l: int) -> Bool:
        """l leads in ZooKeeper's current epoch and knows it: its ISR writes pass the zkVersion check."""
        return X.and_(self.leads(s, X, l), s.quorum_leader == l, s.epoch[l] == s.quorum_epoch)

    def isr_size(self, s: StateView, X: Backend, l: int) -> Int:
        return X.count(s.isr[l][x] for x in self.R)

    def leader_hw(self, s: StateView, X: Backend, l: int, leo: Int, isr: Sequence[Int], remote: Sequence[Int]) -> Int:
        """HW = min LEO over the ISR (the leader's own LEO included); it never moves back."""
        lowest = leo
        for x in self.R:
            if x != l:
                lowest = X.min_(lowest, X.ite(isr[x] == 1, remote[x], self.L))
        return X.max_(s.hw[l], lowest)

    def truncate(self, s: StateView, X: Backend, r: int, offset: Int) -> Effect:
        """r's log ends at `offset` (when that is below its LEO); its HW follows."""
        end = X.min_(offset, s.leo[r])
        return {
            "log_record": {r: [X.ite(o < end, s.log_record[r][o], NONE) for o in self.offsets]},
            "log_epoch": {r: [X.ite(o < end, s.log_epoch[r][o], NONE) for o in self.offsets]},
            "leo": {r: end},
            "hw": {r: X.min_(s.hw[r], end)},
        }

    def forget_leadership(self, r: int) -> Effect:
        """Volatile leader and fetcher state a replica drops when it changes role or crashes."""
        n = len(self.R)
        return {
            "isr": {r: [0] * n},
            "remote_leo": {r: [0] * n},
            "response_end": {r: NONE},
            "response_hw": {r: 0},
            "response_record": {r: [NONE] * self.L},
            "response_epoch": {r: [NONE] * self.L},
        }

    def offset_for_leader_epoch(self, s: StateView, X: Backend, l: int, r: int) -> Int:
        """Where r truncates after asking leader l for the end offset of r's latest epoch
        (OffsetsForLeaderEpoch, KIP-101; KIP-279: when the leader answers with an older epoch,
        r truncates to the smaller of the leader's end offset and its own end of that epoch)."""
        latest = X.at(s.log_epoch[r], s.leo[r] - 1)
        # the leader's epoch cache: epochs of its records, plus its current epoch from its LEO
        newer_start: Int = s.leo[l]
        for o in reversed(self.offsets):
            newer_start = X.ite(X.and_(o < s.leo[l], s.log_epoch[l][o] > latest), o, newer_start)
        has_newer = X.or_(s.epoch[l] > latest, X.exists(self.offsets, lambda o: X.and_(o < s.leo[l],
                                                                                      s.log_epoch[l][o] > latest)))
        answered: Int = NONE  # the largest epoch <= latest the leader knows
        for o in self.offsets:
            answered = X.ite(X.and_(o < s.leo[l], s.log_epoch[l][o] <= latest), X.max_(answered, s.log_epoch[l][o]), answered)
        leader_end = X.ite(s.epoch[l] == latest, s.leo[l], newer_start)
        own_end: Int = s.leo[r]  # r's end of the answered epoch
        for o in reversed(self.offsets):
            own_end = X.ite(X.and_(o < s.leo[r], answered != NONE, s.log_epoch[r][o] > answered), o, own_end)
        end = X.min_(leader_end, X.ite(X.or_(answered == latest, answered == NONE), s.leo[r], own_end))
        undefined = X.and_(s.epoch[l] != latest, X.not_(has_newer))
        return X.ite(s.leo[r] == 0, 0, X.ite(undefined, s.hw[r], end))

    def answer_fetch(self, s: StateView, X: Backend, f: int, l: int, in_range: Bool, diverged_at: Int) -> Effect:
        """The leader takes f's fetch offset as f's remote LEO when it is `in_range`, recomputes its
        HW and sends the records from there, or tells f to truncate at `diverged_at`."""
        offset = s.leo[f]
        remote = [X.ite(in_range, offset, s.remote_leo[l][x]) if x == f else s.remote_leo[l][x] for x in self.R]
        hw = self.leader_hw(s, X, l, s.leo[l], s.isr[l], remote)
        sent = [X.and_(in_range, offset <= o, o < s.leo[l]) for o in self.offsets]
        return {
            "remote_leo": {l: remote},
            "hw": {l: hw},
            "response_end": {f: X.ite(in_range, s.leo[l], diverged_at)},
            "response_hw": {f: hw},
            "response_record": {f: [X.ite(sent[o], s.log_record[l][o], NONE) for o in self.offsets]},
            "response_epoch": {f: [X.ite(sent[o], s.log_epoch[l][o], NONE) for o in self.offsets]},
        }

    def learns_leader(self, s: StateView, X: Backend, r: int, l: int) -> Bool:
        """r is up and receives the LeaderAndIsr request naming l (or none) in a newer epoch."""
        return X.and_(s.alive[r] == 1, s.quorum_leader == l, s.epoch[r] < s.quorum_epoch)

    def follow(self, s: StateView, X: Backend, r: int, l: int, offset: Callable[[], Int]) -> Effect:
        """r follows l (or none) in ZooKeeper's epoch; with a leader, it truncates to `offset()`."""
        effect = {**self.forget_leadership(r), "epoch": {r: s.quorum_epoch}, "leader": {r: l}}
        if l == NONE:
            return effect
        return {**effect, **self.truncate(s, X, r, offset())}

    def fetch_sent(self, s: StateView, X: Backend, f: int, l: int) -> Bool:
        """f is up, follows l, has no response in flight, and l is up and believes it leads."""
        return X.and_(s.alive[f] == 1, s.leader[f] == l, self.leads(s, X, l), s.response_end[f] == NONE)
