"""One Kafka partition at the level of the public TLA+ specification of Kafka replication.

Replicas keep a bounded log of (record id, leader epoch) records, a high watermark and a
local view of leadership; the quorum (ZooKeeper) holds the true leader, epoch and ISR; the
controller sends one LeaderAndIsr request per leader epoch, which replicas may receive late,
more than once, or never. The mode selects how a replica truncates on becoming a follower,
and how strictly leaders fence fetches, high-watermark moves and ISR changes:

- hw:               truncate to the local high watermark (Kafka before 0.11)
- kip101:           truncate to the end offset the leader returns for the follower's latest epoch
- kip279:           truncate past the last offset where follower and leader hold the same record
- kip320-first-try: no truncation on becoming follower; fetch-time truncation on an epoch mismatch
- kip320:           KIP-279 truncation fenced by epoch, and epoch-fenced fetch, HW and ISR changes

The code follows the specification's modules: this file holds the base module,
KafkaReplication (the layout, the initial state and the actions every mode shares), and `actions()`, which picks each mode's actions as that mode's module's `Next` does;
each mode's own actions, under the name of the module that defines them
(KafkaTruncateToHighWatermark, Kip101, Kip279, Kip320FirstTry, Kip320), are in
kmc/model/replication_variants.py, a base of `Replication`, and the operators both use in
kmc/model/replication_operators.py. An action keeps kmc's name in
every mode (traces and baselines name it); docs/replication.md maps each field and action to
the spec's names.
"""

from __future__ import annotations

from typing import Sequence

from kmc.model.core import (
    NONE, Action, Backend, Bool, Effect, Field, Lane, Lanes, Message, Model, Option, Schema, State, StateView, action,
    distinct, replica_name,
)
from kmc.model.replication_variants import EPOCH, REPLICA, ReplicationVariants


MODES = {
    "hw": "truncate to the local high watermark on becoming follower (before KIP-101)",
    "kip101": "truncate to the leader's end offset for the follower's latest epoch (KIP-101)",
    "kip279": "truncate after the last offset where follower and leader agree (KIP-279)",
    "kip320-first-try": "truncate at fetch time on an epoch mismatch, no fencing of HW/ISR (KIP-320 draft)",
    "kip320": "KIP-279 truncation and fetch, HW and ISR changes fenced by leader epoch (KIP-320)",
}


class Replication(ReplicationVariants, Model):
    name = "replication"
    lanes = Lanes(
        Lane("quorum"), Lane("replicas", REPLICA),  # the controller's quorum (ZooKeeper), r1, r2, ...
        local={"controller_elect_leader": "quorum", "controller_shrink_isr": "quorum", "leader_write": "replica",
               "leader_inc_high_watermark": "leader", "leader_shrink_isr": "leader", "leader_expand_isr": "leader",
               "follower_fetch": "follower", "follower_truncate": "follower"},
        messages=[
            Message("LeaderAndIsr", "quorum", "replicas", sent_by=("controller_elect_leader", "controller_shrink_isr"),
                    received_by=("become_leader", "become_follower"), received_as=("quorum", "replica")),
            Message("Fetch", "follower", "leader", sent_by=("follower_fetch", "follower_truncate"),
                    received_by=("follower_fetch", "follower_truncate")),
        ],
    )
    summary = "a partition's leader election, ISR, truncation and high watermark (TLA+ spec level)"
    modes = MODES
    options = (
        Option("mode", "kip320", "protocol variant", choices=tuple(MODES)),
        Option("replicas", 2, "number of replicas", min=1, max=8),
        Option("log_size", 2, "log slots per replica", min=1, max=8),
        Option("max_records", 2, "records producers may write in a run", min=0, max=15),
        Option("max_leader_epoch", 2, "highest leader epoch the controller may assign", min=0, max=15),
        Option(
            "truncate_to_end_offset",
            False,
            "when the truncation offset lies beyond the follower's end offset, truncate to the "
            "end offset (as Kafka does) instead of disabling the step (as the TLA+ spec does)",
        ),
    )

    # -- layout ------------------------------------------------------------------------

    def _build(self) -> None:
        s = self.settings
        self.R = range(s["replicas"])
        self.offsets = range(s["log_size"])
        self.epochs = range(s["max_leader_epoch"] + 1)
        self.log_size: int = s["log_size"]
        self.max_records: int = s["max_records"]
        self.max_leader_epoch: int = s["max_leader_epoch"]
        n, size, e = len(self.R), self.log_size, self.max_leader_epoch
        last_replica = n - 1
        per_replica = (0,)
        self.schema = Schema(
            [
                Field("log_id", lo=NONE, hi=max(self.max_records - 1, 0), shape=(n, size),
                      doc="record id per log slot", replica_axes=per_replica),
                Field("log_epoch", lo=NONE, hi=e, shape=(n, size), doc="leader epoch per log slot",
                      replica_axes=per_replica),
                Field("end_offset", lo=0, hi=size, shape=(n,), doc="log end offset", replica_axes=per_replica),
                Field("hw", lo=0, hi=size, shape=(n,), doc="high watermark", replica_axes=per_replica),
                Field("epoch", lo=NONE, hi=e, shape=(n,), doc="leader epoch the replica knows",
                      replica_axes=per_replica),
                Field("leader", lo=NONE, hi=last_replica, shape=(n,), doc="leader the replica presumes",
                      replica_axes=per_replica, holds_replica=True),
                Field("isr", lo=0, hi=1, shape=(n, n), doc="ISR the replica presumes (flags)", replica_axes=(0, 1)),
                Field("quorum_leader", lo=NONE, hi=last_replica, doc="leader in ZooKeeper", holds_replica=True),
                Field("quorum_isr", lo=0, hi=1, shape=(n,), doc="ISR in ZooKeeper (flags)", replica_axes=per_replica),
                Field("request_leader", lo=NONE, hi=last_replica, shape=(e + 1,),
                      doc="LeaderAndIsr leader, by epoch", holds_replica=True),
                Field("request_isr", lo=0, hi=1, shape=(e + 1, n), doc="LeaderAndIsr ISR, by epoch (flags)",
                      replica_axes=(1,)),
                Field("next_record_id", lo=0, hi=self.max_records, doc="id of the next record"),
                Field("next_leader_epoch", lo=0, hi=e + 1, doc="epoch of the next LeaderAndIsr request"),
            ]
        )

    def initial_states(self) -> list[State]:
        n = len(self.R)
        return [
            self.schema.state(
                log_id=[[NONE] * self.log_size for _ in self.R],
                log_epoch=[[NONE] * self.log_size for _ in self.R],
                end_offset=[0] * n,
                hw=[0] * n,
                epoch=[NONE] * n,
                leader=[NONE] * n,
                isr=[[0] * n for _ in self.R],
                quorum_leader=NONE,
                quorum_isr=[1] * n,
                request_leader=[NONE] * len(self.epochs),
                request_isr=[[0] * n for _ in self.epochs],
                next_record_id=0,
                next_leader_epoch=0,
            )
        ]

    # -- Next, by mode -------------------------------------------------------------------

    def actions(self) -> Sequence[Action]:
        return self.next(self.mode)

    def next(self, mode: str) -> list[Action]:
        """The `Next` of `mode`: the actions its spec module's `Next` chooses, in kmc's one order
        for every mode (engines explore in it: it fixes the BFS order, hence which shortest trace
        is found). A subclass adds a mode by changing one mode's list (docs/writing-models.md)."""
        shared = [self.controller_elect_leader, self.controller_shrink_isr, self.become_leader, self.leader_write]
        if mode == "kip320":  # Kip320
            return [*shared, self.fenced_leader_inc_high_watermark, self.fenced_leader_shrink_isr,
                    self.fenced_leader_expand_isr, self.fenced_become_follower_and_truncate,
                    self.fenced_follower_fetch]
        if mode == "kip320-first-try":  # Kip320FirstTry
            return [*shared, self.improved_leader_inc_high_watermark, self.leader_shrink_isr_better_fencing,
                    self.leader_expand_isr_better_fencing, self.become_follower, self.follower_fetch,
                    self.follower_truncate]
        if mode == "kip279":  # Kip279
            become_follower = self.become_follower_truncate_kip279
        elif mode == "kip101":  # Kip101
            become_follower = self.become_follower_truncate_kip101
        else:  # KafkaTruncateToHighWatermark
            become_follower = self.become_follower_truncate_to_high_watermark
        return [*shared, self.leader_inc_high_watermark, self.leader_shrink_isr, self.leader_expand_isr,
                become_follower, self.follower_replicate]

    # -- KafkaReplication: actions every mode shares ---------------------------------------

    @action(leader=REPLICA)
    def controller_elect_leader(self, s: StateView, X: Backend, l: int) -> Bool:
        """The controller elects a new leader from the quorum ISR (on a broker failure or for
        balance), bumping the leader epoch and sending a LeaderAndIsr request."""
        return X.and_(s.quorum_isr[l] == 1, s.quorum_leader != l, s.next_leader_epoch <= self.max_leader_epoch)

    @controller_elect_leader.effect
    def _(self, s: StateView, X: Backend, l: int) -> Effect:
        return self.controller_update_isr(s, X, l, list(s.quorum_isr))

    @action(replica=REPLICA)
    def controller_shrink_isr(self, s: StateView, X: Backend, r: int) -> Bool:
        """The controller takes a failed broker out of the ISR; a failed leader also loses
        leadership, but stays in the ISR when it is alone there."""
        return X.and_(
            X.or_(s.quorum_leader == r, s.quorum_isr[r] == 1),
            s.next_leader_epoch <= self.max_leader_epoch,
        )

    @controller_shrink_isr.effect
    def _(self, s: StateView, X: Backend, r: int) -> Effect:
        is_leader = s.quorum_leader == r
        alone = X.forall(self.R, lambda x: s.quorum_isr[x] == (1 if x == r else 0))
        isr = [X.ite(X.and_(is_leader, alone), s.quorum_isr[x], 0) if x == r else s.quorum_isr[x] for x in self.R]
        return self.controller_update_isr(s, X, X.ite(is_leader, NONE, s.quorum_leader), isr)

    @action(replica=REPLICA, epoch=EPOCH)
    def become_leader(self, s: StateView, X: Backend, r: int, e: int) -> Bool:
        """A replica becomes leader on a LeaderAndIsr request naming it, with an epoch higher
        than its own; it keeps its own (possibly stale) high watermark."""
        return self.received_leader_and_isr(s, X, r, r, e)

    @become_leader.effect
    def _(self, s: StateView, X: Backend, r: int, e: int) -> Effect:
        return {"epoch": {r: e}, "leader": {r: r}, "isr": {r: list(s.request_isr[e])}}

    @action(replica=REPLICA)
    def leader_write(self, s: StateView, X: Backend, r: int) -> Bool:
        """A replica that presumes leadership appends a producer's record with its epoch."""
        return X.and_(
            s.leader[r] == r,
            s.next_record_id < self.max_records,
            s.end_offset[r] < self.log_size,
        )

    @leader_write.effect
    def _(self, s: StateView, X: Backend, r: int) -> Effect:
        end = s.end_offset[r]
        return {
            "log_id": {r: X.set_at(s.log_id[r], end, s.next_record_id)},
            "log_epoch": {r: X.set_at(s.log_epoch[r], end, s.epoch[r])},
            "end_offset": {r: end + 1},
            "next_record_id": s.next_record_id + 1,
        }

    # -- KafkaReplication: the unfenced actions of hw, kip101 and kip279 -------------------

    @action(leader=REPLICA)
    def leader_inc_high_watermark(self, s: StateView, X: Backend, l: int) -> Bool:
        """The leader advances its high watermark by one when every member of its ISR follows it
        and holds the offset (no epoch check)."""
        hw = s.hw[l]
        return X.and_(
            s.leader[l] == l,
            hw < self.log_size,
            X.forall(self.R, lambda f: X.implies(s.isr[l][f] == 1,
                                                 X.and_(s.leader[f] == l, self.has_offset(s, X, f, hw)))),
        )

    @leader_inc_high_watermark.effect
    def _(self, s: StateView, X: Backend, l: int) -> Effect:
        return {"hw": {l: s.hw[l] + 1}}

    @action(leader=REPLICA, replica=REPLICA, where=distinct)
    def leader_shrink_isr(self, s: StateView, X: Backend, l: int, r: int) -> Bool:
        """The true leader removes a follower that is not caught up to its end offset from the
        ISR, through the quorum."""
        lagging = X.not_(self.is_follower_caught_up(s, X, l, r, s.end_offset[l]))
        return X.and_(s.isr[l][r] == 1, lagging, self.is_true_leader(s, X, l))

    @leader_shrink_isr.effect
    def _(self, s: StateView, X: Backend, l: int, r: int) -> Effect:
        return self.quorum_update_leader_and_isr(s, X, l, self.without(s.isr[l], r))

    @action(leader=REPLICA, replica=REPLICA, where=distinct)
    def leader_expand_isr(self, s: StateView, X: Backend, l: int, r: int) -> Bool:
        """The true leader adds a follower caught up to its high watermark to the ISR, through
        the quorum."""
        ready = self.is_follower_caught_up(s, X, l, r, s.hw[l])
        return X.and_(s.isr[l][r] == 0, ready, self.is_true_leader(s, X, l))

    @leader_expand_isr.effect
    def _(self, s: StateView, X: Backend, l: int, r: int) -> Effect:
        return self.quorum_update_leader_and_isr(s, X, l, self.adding(s.isr[l], r))

    @action(name="follower_fetch", follower=REPLICA, leader=REPLICA, where=distinct)
    def follower_replicate(self, s: StateView, X: Backend, f: int, l: int) -> Bool:
        """A follower fetches the next record from the leader it follows (no epoch check)."""
        return X.and_(s.leader[l] == l, s.leader[f] == l, s.end_offset[f] < s.end_offset[l])

    @follower_replicate.effect
    def _(self, s: StateView, X: Backend, f: int, l: int) -> Effect:
        return self.replicate_to(s, X, f, l)

    # -- presentation --------------------------------------------------------------------

    def describe(self, state: State) -> dict[str, str]:
        v = self.schema.view(state)

        def replicas(flags: Sequence[int]) -> str:
            return "{" + ",".join(replica_name(x) for x in self.R if flags[x]) + "}"

        def epoch(e: int) -> str:
            return "-" if e == NONE else str(e)

        out: dict[str, str] = {
            "quorum.leader": replica_name(v.quorum_leader),
            "quorum.epoch": epoch(v.next_leader_epoch - 1),
            "quorum.isr": replicas(v.quorum_isr),
        }
        for e in self.epochs:
            if e < v.next_leader_epoch:
                out[f"request[epoch {e}]"] = f"leader {replica_name(v.request_leader[e])}, isr {replicas(v.request_isr[e])}"
        for r in self.R:
            name = replica_name(r)
            records = [f"m{v.log_id[r][o]}@e{v.log_epoch[r][o]}" for o in range(v.end_offset[r])]
            out[f"{name}.log"] = "[" + " ".join(records) + "]"
            out[f"{name}.hw"] = str(v.hw[r])
            out[f"{name}.epoch"] = epoch(v.epoch[r])
            out[f"{name}.leader"] = replica_name(v.leader[r])
            out[f"{name}.isr"] = replicas(v.isr[r])
        out["next record id"] = str(v.next_record_id)
        return out

