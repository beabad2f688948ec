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

See docs/replication.md for each rule and the verdicts.
"""

from __future__ import annotations

from typing import Any, Sequence

from kmc.model.core import NONE, Action, Field, Model, Option, Param, Schema, State, replica_name


MODES = {
    "hw": "truncate to the local high watermark on becoming follower (before KIP-101)",
    "kip101": "truncate to the leader's end offset for the follower's latest epoch (KIP-101)",
    "kip279": "truncate after the last offset where follower and leader agree (KIP-279)",
    "kip320-first-try": "truncate at fetch time on an epoch mismatch, no fencing of HW/ISR (KIP-320 draft)",
    "kip320": "KIP-279 truncation and fetch, HW and ISR changes fenced by leader epoch (KIP-320)",
}


class Replication(Model):
    name = "replication"
    invariants_module = "kmc.invariants.replication"
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
        self.schema = Schema(
            [
                Field("log_id", NONE, max(self.max_records - 1, 0), (n, size), "record id per log slot", (0,)),
                Field("log_epoch", NONE, e, (n, size), "leader epoch per log slot", (0,)),
                Field("end_offset", 0, size, (n,), "log end offset", (0,)),
                Field("hw", 0, size, (n,), "high watermark", (0,)),
                Field("epoch", NONE, e, (n,), "leader epoch the replica knows", (0,)),
                Field("leader", NONE, last_replica, (n,), "leader the replica presumes", (0,), True),
                Field("isr", 0, 1, (n, n), "ISR the replica presumes (flags)", (0, 1)),
                Field("quorum_leader", NONE, last_replica, (), "leader in ZooKeeper", (), True),
                Field("quorum_isr", 0, 1, (n,), "ISR in ZooKeeper (flags)", (0,)),
                Field("request_leader", NONE, last_replica, (e + 1,), "LeaderAndIsr leader, by epoch", (), True),
                Field("request_isr", 0, 1, (e + 1, n), "LeaderAndIsr ISR, by epoch (flags)", (1,)),
                Field("next_record_id", 0, self.max_records, (), "id of the next record"),
                Field("next_leader_epoch", 0, e + 1, (), "epoch of the next LeaderAndIsr request"),
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

    # -- shared predicates ---------------------------------------------------------------

    @staticmethod
    def quorum_epoch(s: Any) -> Any:
        """The quorum's leader epoch: every controller change takes the next epoch."""
        return s.next_leader_epoch - 1

    def is_true_leader(self, s: Any, X: Any, l: int) -> Any:
        """The quorum names l as leader, and l presumes leadership in the quorum's epoch."""
        return X.and_(s.quorum_leader == l, s.leader[l] == l, s.epoch[l] == self.quorum_epoch(s))

    def has_offset(self, s: Any, X: Any, r: int, offset: Any) -> Any:
        return X.and_(0 <= offset, offset < s.end_offset[r])

    def epoch_at(self, s: Any, X: Any, r: int, offset: Any) -> Any:
        return X.at(s.log_epoch[r], offset)

    def same_record(self, s: Any, X: Any, a: int, b: int, o: int) -> Any:
        """Both replicas hold offset o, with the same record."""
        return X.and_(
            o < s.end_offset[a],
            o < s.end_offset[b],
            s.log_id[a][o] == s.log_id[b][o],
            s.log_epoch[a][o] == s.log_epoch[b][o],
        )

    def caught_up(self, s: Any, X: Any, l: int, f: int, end: Any) -> Any:
        """f follows l and holds offset end - 1, which l also holds (no epoch check)."""
        return X.and_(
            s.leader[f] == l,
            X.or_(end == 0, X.and_(end > 0, self.has_offset(s, X, l, end - 1), self.has_offset(s, X, f, end - 1))),
        )

    def caught_up_to_epoch(self, s: Any, X: Any, l: int, f: int, end: Any) -> Any:
        """As caught_up, and the record at end - 1 has the same epoch on both (KIP-320 draft)."""
        return X.and_(
            s.leader[l] == l,
            s.leader[f] == l,
            X.or_(
                end == 0,
                X.and_(
                    end > 0,
                    self.has_offset(s, X, l, end - 1),
                    self.has_offset(s, X, f, end - 1),
                    self.epoch_at(s, X, f, end - 1) == self.epoch_at(s, X, l, end - 1),
                ),
            ),
        )

    def follows_leader_epoch(self, s: Any, X: Any, l: int, f: int) -> Any:
        """l presumes leadership and f follows l in l's epoch (KIP-320)."""
        return X.and_(s.leader[l] == l, s.leader[f] == l, s.epoch[f] == s.epoch[l])

    def hw_reached_current_epoch(self, s: Any, X: Any, l: int) -> Any:
        """The leader's HW is at its end offset or at a record of its own epoch."""
        hw = s.hw[l]
        return X.or_(
            hw == s.end_offset[l],
            X.and_(self.has_offset(s, X, l, hw), self.epoch_at(s, X, l, hw) == s.epoch[l]),
        )

    def first_non_matching_offset_from_tail(self, s: Any, X: Any, l: int, f: int) -> Any:
        """One past the highest offset where f and l hold the same record, else 0 (KIP-279)."""
        result: Any = 0
        for o in self.offsets:  # ascending: the highest matching offset wins
            result = X.ite(self.same_record(s, X, f, l, o), o + 1, result)
        return result

    def offset_for_leader_epoch(self, s: Any, X: Any, l: int, f: int, epoch: Any) -> Any:
        """The leader's answer to OffsetsForLeaderEpoch (KIP-101): its end offset if its last
        record has `epoch`, else the first offset with a larger epoch, else f's HW."""
        first_larger: Any = s.hw[f]
        for o in reversed(self.offsets):  # descending: the lowest such offset wins
            first_larger = X.ite(X.and_(o < s.end_offset[l], s.log_epoch[l][o] > epoch), o, first_larger)
        last_epoch = self.epoch_at(s, X, l, s.end_offset[l] - 1)
        return X.ite(
            s.end_offset[l] == 0,
            s.hw[f],
            X.ite(last_epoch == epoch, s.end_offset[l], first_larger),
        )

    def truncation_offset(self, s: Any, X: Any, l: int, r: int) -> Any:
        """Where replica r truncates on becoming follower of l, by mode."""
        if self.mode == "hw":
            return s.hw[r]
        if self.mode == "kip101":
            latest_epoch = self.epoch_at(s, X, r, s.end_offset[r] - 1)
            return X.ite(s.end_offset[r] == 0, 0, self.offset_for_leader_epoch(s, X, l, r, latest_epoch))
        return self.first_non_matching_offset_from_tail(s, X, l, r)

    def truncate(self, s: Any, X: Any, r: int, offset: Any) -> dict[str, Any]:
        """The effect of truncating r's log to end at `offset`."""
        return {
            "log_id": {r: [X.ite(o < offset, s.log_id[r][o], NONE) for o in self.offsets]},
            "log_epoch": {r: [X.ite(o < offset, s.log_epoch[r][o], NONE) for o in self.offsets]},
            "end_offset": {r: offset},
        }

    def update_isr(self, s: Any, X: Any, l: int, isr: list[Any]) -> dict[str, Any]:
        """The true leader writes a new ISR to the quorum and to its own view."""
        return {"quorum_isr": isr, "isr": {l: isr}}

    def send_leader_and_isr(self, s: Any, X: Any, leader: Any, isr: list[Any]) -> dict[str, Any]:
        """The controller moves the quorum to the next epoch and sends its LeaderAndIsr request."""
        e = s.next_leader_epoch
        return {
            "quorum_leader": leader,
            "quorum_isr": isr,
            "request_leader": X.set_at(s.request_leader, e, leader),
            "request_isr": X.set_at(s.request_isr, e, isr),
            "next_leader_epoch": e + 1,
        }

    # -- actions -------------------------------------------------------------------------

    def actions(self) -> Sequence[Action]:
        replica = Param("replica", tuple(self.R), replica_name)
        leader = Param("leader", tuple(self.R), replica_name)
        follower = Param("follower", tuple(self.R), replica_name)
        epoch = Param("epoch", tuple(self.epochs))
        distinct = lambda a, b, *rest: a != b  # noqa: E731
        mode = self.mode

        acts = [
            Action("controller_elect_leader", self.elect_guard, self.elect_effect, (leader,),
                   doc=self.elect_guard.__doc__ or ""),
            Action("controller_shrink_isr", self.controller_shrink_guard, self.controller_shrink_effect, (replica,),
                   doc=self.controller_shrink_guard.__doc__ or ""),
            Action("become_leader", self.become_leader_guard, self.become_leader_effect, (replica, epoch),
                   doc=self.become_leader_guard.__doc__ or ""),
            Action("leader_write", self.write_guard, self.write_effect, (replica,),
                   doc=self.write_guard.__doc__ or ""),
            Action("leader_inc_high_watermark", self.inc_hw_guard, self.inc_hw_effect, (leader,),
                   doc=self.inc_hw_guard.__doc__ or ""),
            Action("leader_shrink_isr", self.leader_shrink_guard, self.leader_shrink_effect, (leader, replica),
                   distinct, self.leader_shrink_guard.__doc__ or ""),
            Action("leader_expand_isr", self.leader_expand_guard, self.leader_expand_effect, (leader, replica),
                   distinct, self.leader_expand_guard.__doc__ or ""),
            Action("become_follower", self.become_follower_guard, self.become_follower_effect,
                   (replica, leader, epoch), distinct, self.become_follower_guard.__doc__ or ""),
            Action("follower_fetch", self.fetch_guard, self.fetch_effect, (follower, leader),
                   distinct, self.fetch_guard.__doc__ or ""),
        ]
        if mode == "kip320-first-try":
            acts.append(Action("follower_truncate", self.follower_truncate_guard, self.follower_truncate_effect,
                               (follower, leader), distinct, self.follower_truncate_guard.__doc__ or ""))
        return acts

    def elect_guard(self, s: Any, X: Any, l: int) -> Any:
        """The controller elects a new leader from the quorum ISR (on a broker failure or for
        balance), bumping the leader epoch and sending a LeaderAndIsr request."""
        return X.and_(s.quorum_isr[l] == 1, s.quorum_leader != l, s.next_leader_epoch <= self.max_leader_epoch)

    def elect_effect(self, s: Any, X: Any, l: int) -> dict[str, Any]:
        return self.send_leader_and_isr(s, X, l, list(s.quorum_isr))

    def controller_shrink_guard(self, s: Any, X: Any, r: int) -> Any:
        """The controller takes a failed broker out of the ISR; a failed leader also loses
        leadership, but stays in the ISR when it is alone there."""
        return X.and_(
            X.or_(s.quorum_leader == r, s.quorum_isr[r] == 1),
            s.next_leader_epoch <= self.max_leader_epoch,
        )

    def controller_shrink_effect(self, s: Any, X: Any, r: int) -> dict[str, Any]:
        is_leader = s.quorum_leader == r
        alone = X.and_(*[s.quorum_isr[x] == (1 if x == r else 0) for x in self.R])
        isr = [X.ite(X.and_(is_leader, alone), s.quorum_isr[x], 0) if x == r else s.quorum_isr[x] for x in self.R]
        return self.send_leader_and_isr(s, X, X.ite(is_leader, NONE, s.quorum_leader), isr)

    def become_leader_guard(self, s: Any, X: Any, r: int, e: int) -> Any:
        """A replica becomes leader on a LeaderAndIsr request naming it, with an epoch higher
        than its own; it keeps its own (possibly stale) high watermark."""
        return X.and_(e < s.next_leader_epoch, s.request_leader[e] == r, s.epoch[r] < e)

    def become_leader_effect(self, s: Any, X: Any, r: int, e: int) -> dict[str, Any]:
        return {"epoch": {r: e}, "leader": {r: r}, "isr": {r: list(s.request_isr[e])}}

    def write_guard(self, s: Any, X: Any, r: int) -> Any:
        """A replica that presumes leadership appends a producer's record with its epoch."""
        return X.and_(
            s.leader[r] == r,
            s.next_record_id < self.max_records,
            s.end_offset[r] < self.log_size,
        )

    def write_effect(self, s: Any, X: Any, r: int) -> dict[str, Any]:
        end = s.end_offset[r]
        return {
            "log_id": {r: X.set_at(s.log_id[r], end, s.next_record_id)},
            "log_epoch": {r: X.set_at(s.log_epoch[r], end, s.epoch[r])},
            "end_offset": {r: end + 1},
            "next_record_id": s.next_record_id + 1,
        }

    def inc_hw_guard(self, s: Any, X: Any, l: int) -> Any:
        """The leader advances its high watermark by one when every member of its ISR
        follows it and holds the offset (in kip320 modes, in the leader's epoch)."""
        hw = s.hw[l]
        if self.mode == "kip320":
            members = [X.implies(s.isr[l][f] == 1, X.and_(self.follows_leader_epoch(s, X, l, f),
                                                           self.has_offset(s, X, f, hw))) for f in self.R]
            return X.and_(self.has_offset(s, X, l, hw), *members)
        if self.mode == "kip320-first-try":
            members = [X.implies(s.isr[l][f] == 1, self.caught_up_to_epoch(s, X, l, f, hw + 1)) for f in self.R]
            return X.and_(s.leader[l] == l, self.has_offset(s, X, l, hw), *members)
        members = [X.implies(s.isr[l][f] == 1, X.and_(s.leader[f] == l, self.has_offset(s, X, f, hw)))
                   for f in self.R]
        return X.and_(s.leader[l] == l, hw < self.log_size, *members)

    def inc_hw_effect(self, s: Any, X: Any, l: int) -> dict[str, Any]:
        return {"hw": {l: s.hw[l] + 1}}

    def leader_shrink_guard(self, s: Any, X: Any, l: int, r: int) -> Any:
        """The true leader removes a follower that is not caught up to its end offset (in
        kip320, also one that follows another epoch) from the ISR, through the quorum."""
        end = s.end_offset[l]
        if self.mode == "kip320":
            lagging = X.or_(X.not_(self.follows_leader_epoch(s, X, l, r)), s.end_offset[r] < end)
        elif self.mode == "kip320-first-try":
            lagging = X.not_(self.caught_up_to_epoch(s, X, l, r, end))
        else:
            lagging = X.not_(self.caught_up(s, X, l, r, end))
        return X.and_(s.isr[l][r] == 1, lagging, self.is_true_leader(s, X, l))

    def leader_shrink_effect(self, s: Any, X: Any, l: int, r: int) -> dict[str, Any]:
        return self.update_isr(s, X, l, [0 if x == r else s.isr[l][x] for x in self.R])

    def leader_expand_guard(self, s: Any, X: Any, l: int, r: int) -> Any:
        """The true leader adds a follower caught up to its high watermark to the ISR, through
        the quorum (in kip320 modes, only once the HW has reached the leader's own epoch)."""
        hw = s.hw[l]
        if self.mode == "kip320":
            ready = X.and_(
                self.follows_leader_epoch(s, X, l, r),
                X.or_(hw == 0, X.and_(hw > 0, self.has_offset(s, X, r, hw - 1))),
                self.hw_reached_current_epoch(s, X, l),
            )
        elif self.mode == "kip320-first-try":
            ready = X.and_(self.caught_up_to_epoch(s, X, l, r, hw), self.hw_reached_current_epoch(s, X, l))
        else:
            ready = self.caught_up(s, X, l, r, hw)
        return X.and_(s.isr[l][r] == 0, ready, self.is_true_leader(s, X, l))

    def leader_expand_effect(self, s: Any, X: Any, l: int, r: int) -> dict[str, Any]:
        return self.update_isr(s, X, l, [1 if x == r else s.isr[l][x] for x in self.R])

    def become_follower_guard(self, s: Any, X: Any, r: int, l: int, e: int) -> Any:
        """A replica becomes follower on a LeaderAndIsr request naming another leader with a
        higher epoch than its own, and truncates its log by the mode's rule (kip320: only
        while that leader is in the request's epoch; kip320-first-try: no truncation yet)."""
        received = X.and_(e < s.next_leader_epoch, s.request_leader[e] == l, s.epoch[r] < e)
        if self.mode == "kip320-first-try":
            return received
        fenced = X.and_(s.leader[l] == l, s.epoch[l] == e) if self.mode == "kip320" else True
        if self.settings["truncate_to_end_offset"]:
            return X.and_(received, fenced)
        return X.and_(received, fenced, self.truncation_offset(s, X, l, r) <= s.end_offset[r])

    def become_follower_effect(self, s: Any, X: Any, r: int, l: int, e: int) -> dict[str, Any]:
        view = {"epoch": {r: e}, "leader": {r: l}, "isr": {r: list(s.request_isr[e])}}
        if self.mode == "kip320-first-try":
            return view
        offset = self.truncation_offset(s, X, l, r)
        if self.settings["truncate_to_end_offset"]:
            offset = X.min_(offset, s.end_offset[r])
        return {**view, **self.truncate(s, X, r, offset), "hw": {r: X.min_(offset, s.hw[r])}}

    def fetch_guard(self, s: Any, X: Any, f: int, l: int) -> Any:
        """A follower fetches the next record from the leader it follows (kip320: in the same
        epoch; kip320-first-try: only while its last record's epoch matches the leader's)."""
        if self.mode == "kip320":
            fenced = self.follows_leader_epoch(s, X, l, f)
        elif self.mode == "kip320-first-try":
            fenced = self.caught_up_to_epoch(s, X, l, f, s.end_offset[f])
        else:
            fenced = X.and_(s.leader[l] == l, s.leader[f] == l)
        return X.and_(fenced, s.end_offset[f] < s.end_offset[l])

    def fetch_effect(self, s: Any, X: Any, f: int, l: int) -> dict[str, Any]:
        end = s.end_offset[f]
        return {
            "log_id": {f: X.set_at(s.log_id[f], end, X.at(s.log_id[l], end))},
            "log_epoch": {f: X.set_at(s.log_epoch[f], end, X.at(s.log_epoch[l], end))},
            "end_offset": {f: end + 1},
            "hw": {f: X.min_(s.hw[l], end + 1)},
        }

    def follower_truncate_guard(self, s: Any, X: Any, f: int, l: int) -> Any:
        """(kip320-first-try) A follower whose log is longer than the leader's, or whose last
        record's epoch differs from the leader's at that offset, truncates at fetch time."""
        end = s.end_offset[f]
        diverged = X.or_(
            end > s.end_offset[l],
            X.and_(end > 0, self.has_offset(s, X, l, end - 1),
                   self.epoch_at(s, X, l, end - 1) != self.epoch_at(s, X, f, end - 1)),
        )
        offset = self.first_non_matching_offset_from_tail(s, X, l, f)
        return X.and_(s.leader[l] == l, s.leader[f] == l, diverged, offset <= end)

    def follower_truncate_effect(self, s: Any, X: Any, f: int, l: int) -> dict[str, Any]:
        offset = self.first_non_matching_offset_from_tail(s, X, l, f)
        return {**self.truncate(s, X, f, offset), "hw": {f: X.min_(offset, s.hw[f])}}

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

