"""Replication fetch by fetch, as Kafka brokers move LEO and HW (seed article 000).

One partition. The leader keeps a remote LEO per follower, set from the fetch offset of
each FETCH request, and its HW is the minimum LEO over its ISR (never moving back). A FETCH
response carries records and the leader's HW; the follower applies it in a step of its own,
so the HW reaches followers one round late, and a crash between the two steps loses the
response. HWs are checkpointed: they survive crashes, remote LEOs do not. The controller
elects leaders from the live ISR (or any live replica with unclean election); replicas learn
of a new leader and epoch in steps of their own, so a replica may act on stale leadership.

Modes (how a replica truncates):
- hw:           to its HW on restart and on becoming follower (Kafka before 0.11)
- epoch:        on becoming follower, to the end offset the leader returns for the
                follower's latest epoch (OffsetsForLeaderEpoch, KIP-101 with KIP-279)
- epoch-fenced: as epoch, and requests carry the leader epoch: a leader in another epoch
                rejects them, and a fetch response tells a diverged follower where to
                truncate (KIP-320)

The three actions the modes change (fetch, restart, become_follower) are declared once per
variant, and `actions()` picks the mode's.

See docs/fetch.md for each rule and the seed section it comes from.
"""

from __future__ import annotations

from typing import Sequence

from kmc.model.core import (
    NONE, Action, Backend, Bool, Effect, Int, Lane, Lanes, Message, State, StateView, action, distinct, replica_name,
)
from kmc.model.fetch_state import RECORD, REPLICA, REPLICA_OR_NONE, FetchState


class Fetch(FetchState):
    name = "fetch"
    lanes = Lanes(
        Lane("controller"), Lane("replicas", REPLICA), Lane("producer"), Lane("consumer"),
        local={"shrink_isr": "leader", "expand_isr": "leader", "crash": "replica", "restart": "replica",
               "elect": "controller", "consume": "consumer", "acknowledge": "leader"},
        messages=[
            Message("Produce", "producer", "leader", sent_by="produce", received_by="produce"),
            Message("Fetch", "follower", "leader", sent_by="fetch", received_by="fetch"),
            Message("FetchResponse", "leader", "follower", sent_by="fetch", received_by="fetch_response",
                    received_as=("replicas", "follower")),
            Message("LeaderAndIsr", "controller", "replicas", sent_by="elect",
                    received_by=("become_leader", "become_follower"), received_as=("controller", "replica")),
            Message("Fetch", "consumer", "leader", sent_by="consume", received_by="consume"),
            Message("ProduceResponse", "leader", "producer", sent_by="acknowledge", received_by="acknowledge"),
        ],
    )

    # -- the mode's actions ---------------------------------------------------------------

    def actions(self) -> Sequence[Action]:
        """Every action, in the order engines explore them (it fixes the BFS order, hence which
        shortest trace is found); the mode picks the variants of fetch, restart and become_follower."""
        if self.mode == "hw":
            fetch, restart = self.fetch, self.restart_truncating_to_hw
            become_follower = self.become_follower_truncating_to_hw
        elif self.mode == "epoch":
            fetch, restart, become_follower = self.fetch, self.restart, self.become_follower_by_leader_epoch
        else:  # epoch-fenced
            fetch, restart, become_follower = self.fenced_fetch, self.restart, self.fenced_become_follower
        acts = [
            self.produce, fetch, self.fetch_response, self.shrink_isr, self.expand_isr, self.crash, restart,
            self.elect, self.become_leader, become_follower, self.consume,
        ]
        if self.acks == "all":
            acts.append(self.acknowledge)
        return acts

    # -- producing and fetching ---------------------------------------------------------

    @action(leader=REPLICA)
    def produce(self, s: StateView, X: Backend, l: int) -> Bool:
        """A producer's record reaches a replica that believes it leads; with acks=all it is
        refused (NotEnoughReplicas) while the ISR is smaller than min.insync.replicas. [000 §5, §8.2]"""
        room = X.and_(self.leads(s, X, l), s.next_record < len(self.records), s.leo[l] < self.L)
        if self.acks == "all":
            return X.and_(room, self.isr_size(s, X, l) >= self.min_isr)
        return room

    @produce.effect
    def _(self, s: StateView, X: Backend, l: int) -> Effect:
        end = s.leo[l]
        effect: Effect = {
            "log_record": {l: X.set_at(s.log_record[l], end, s.next_record)},
            "log_epoch": {l: X.set_at(s.log_epoch[l], end, s.epoch[l])},
            "leo": {l: end + 1},
            "hw": {l: self.leader_hw(s, X, l, end + 1, s.isr[l], s.remote_leo[l])},
            "next_record": s.next_record + 1,
        }
        if self.acks == "1":  # acknowledged on the leader's append
            effect["acked_offset"] = X.set_at(s.acked_offset, s.next_record, end)
        return effect

    @action(follower=REPLICA, leader=REPLICA, where=distinct)
    def fetch(self, s: StateView, X: Backend, f: int, l: int) -> Bool:
        """The leader handles a follower's FETCH: it records the fetch offset as the follower's
        remote LEO, recomputes its HW, and sends records and that HW back; a fetch offset past its
        LEO (OFFSET_OUT_OF_RANGE) tells the follower to truncate to the leader's LEO. [000 §2(2), §4, §5(2)]"""
        return self.fetch_sent(s, X, f, l)

    @fetch.effect
    def _(self, s: StateView, X: Backend, f: int, l: int) -> Effect:
        return self.answer_fetch(s, X, f, l, s.leo[f] <= s.leo[l], s.leo[l])

    @action(name="fetch", follower=REPLICA, leader=REPLICA, where=distinct)
    def fenced_fetch(self, s: StateView, X: Backend, f: int, l: int) -> Bool:
        """(epoch-fenced) As fetch, but the request carries the follower's leader epoch and a leader
        in another epoch rejects it; a follower whose last record's epoch differs from the leader's
        at that offset is told where its log diverges (KIP-320)."""
        return X.and_(self.fetch_sent(s, X, f, l), s.epoch[f] == s.epoch[l])

    @fenced_fetch.effect
    def _(self, s: StateView, X: Backend, f: int, l: int) -> Effect:
        offset, last = s.leo[f], s.leo[f] - 1
        in_range = offset <= s.leo[l]
        matches = X.or_(offset == 0, X.and_(in_range, X.at(s.log_epoch[l], last) == X.at(s.log_epoch[f], last)))
        diverged_at = X.min_(self.offset_for_leader_epoch(s, X, l, f), offset)
        return self.answer_fetch(s, X, f, l, X.and_(in_range, matches), diverged_at)

    @action(follower=REPLICA)
    def fetch_response(self, s: StateView, X: Backend, f: int) -> Bool:
        """The follower handles the FETCH response: it appends the records (or truncates where
        the leader says its log ends) and sets HW = min(leader HW in the response, its LEO). [000 §2(1), §3]"""
        return X.and_(s.alive[f] == 1, s.response_end[f] != NONE)

    @fetch_response.effect
    def _(self, s: StateView, X: Backend, f: int) -> Effect:
        end = s.response_end[f]
        keep = [o < X.min_(end, s.leo[f]) for o in self.offsets]
        take = [X.and_(s.leo[f] <= o, o < end) for o in self.offsets]
        return {
            "log_record": {f: [X.ite(keep[o], s.log_record[f][o], X.ite(take[o], s.response_record[f][o], NONE))
                               for o in self.offsets]},
            "log_epoch": {f: [X.ite(keep[o], s.log_epoch[f][o], X.ite(take[o], s.response_epoch[f][o], NONE))
                              for o in self.offsets]},
            "leo": {f: end},
            "hw": {f: X.min_(s.response_hw[f], end)},
            "response_end": {f: NONE},
            "response_hw": {f: 0},
            "response_record": {f: [NONE] * self.L},
            "response_epoch": {f: [NONE] * self.L},
        }

    # -- the ISR --------------------------------------------------------------------------

    @action(leader=REPLICA, follower=REPLICA, where=distinct)
    def shrink_isr(self, s: StateView, X: Backend, l: int, f: int) -> Bool:
        """The leader removes a follower whose LEO has lagged its own for replica.lag.time.max.ms
        from the ISR, through ZooKeeper, and its HW may then move on. [003; 000 §4]"""
        return X.and_(self.true_leader(s, X, l), s.isr[l][f] == 1, s.remote_leo[l][f] < s.leo[l])

    @shrink_isr.effect
    def _(self, s: StateView, X: Backend, l: int, f: int) -> Effect:
        isr = [0 if x == f else s.isr[l][x] for x in self.R]
        return {"isr": {l: isr}, "quorum_isr": isr, "hw": {l: self.leader_hw(s, X, l, s.leo[l], isr, s.remote_leo[l])}}

    @action(leader=REPLICA, follower=REPLICA, where=distinct)
    def expand_isr(self, s: StateView, X: Backend, l: int, f: int) -> Bool:
        """The leader adds a follower whose last fetch reached its LEO back to the ISR. [003]"""
        return X.and_(self.true_leader(s, X, l), s.isr[l][f] == 0, s.remote_leo[l][f] >= s.leo[l])

    @expand_isr.effect
    def _(self, s: StateView, X: Backend, l: int, f: int) -> Effect:
        isr = [1 if x == f else s.isr[l][x] for x in self.R]
        return {"isr": {l: isr}, "quorum_isr": isr}

    # -- brokers failing ------------------------------------------------------------------

    @action(replica=REPLICA)
    def crash(self, s: StateView, X: Backend, r: int) -> Bool:
        """A broker crashes: its log and HW checkpoint survive, its leader state and fetch
        responses in flight to it do not; a crashed leader leaves the partition offline. [000 §6]"""
        return X.and_(s.alive[r] == 1, s.crashes < self.settings["max_crashes"])

    @crash.effect
    def _(self, s: StateView, X: Backend, r: int) -> Effect:
        return {
            **self.forget_leadership(r),
            "alive": {r: 0},
            "epoch": {r: NONE},
            "leader": {r: NONE},
            "quorum_leader": X.ite(s.quorum_leader == r, NONE, s.quorum_leader),
            "crashes": s.crashes + 1,
        }

    @action(replica=REPLICA)
    def restart(self, s: StateView, X: Backend, r: int) -> Bool:
        """A crashed broker restarts with its log as it was. [000 §6]"""
        return s.alive[r] == 0

    @restart.effect
    def _(self, s: StateView, X: Backend, r: int) -> Effect:
        return {"alive": {r: 1}}

    @action(name="restart", replica=REPLICA)
    def restart_truncating_to_hw(self, s: StateView, X: Backend, r: int) -> Bool:
        """(hw) A crashed broker restarts and truncates its log to its checkpointed HW. [000 §6(1)]"""
        return s.alive[r] == 0

    @restart_truncating_to_hw.effect
    def _(self, s: StateView, X: Backend, r: int) -> Effect:
        return {"alive": {r: 1}, **self.truncate(s, X, r, s.hw[r])}

    # -- leadership -----------------------------------------------------------------------

    @action(replica=REPLICA)
    def elect(self, s: StateView, X: Backend, c: int) -> Bool:
        """The controller elects a live replica when the leader is offline or has lost its
        ZooKeeper session: from the ISR, or from any live replica when
        unclean.leader.election.enable. [004; 000 §8.2(3)]"""
        eligible = s.quorum_isr[c] == 1
        if self.unclean:
            eligible = True
        return X.and_(s.alive[c] == 1, eligible, s.quorum_leader != c, s.quorum_epoch < self.max_epoch)

    @elect.effect
    def _(self, s: StateView, X: Backend, c: int) -> Effect:
        in_isr = s.quorum_isr[c] == 1
        # the new ISR: the live members other than the deposed leader, or the unclean choice alone
        isr = [
            1 if x == c else X.and_(in_isr, s.quorum_isr[x] == 1, s.alive[x] == 1, s.quorum_leader != x)
            for x in self.R
        ]
        return {"quorum_leader": c, "quorum_epoch": s.quorum_epoch + 1, "quorum_isr": [X.ite(v, 1, 0) for v in isr]}

    @action(replica=REPLICA)
    def become_leader(self, s: StateView, X: Backend, r: int) -> Bool:
        """A replica receives the LeaderAndIsr request naming it leader in a newer epoch; it
        takes ZooKeeper's ISR and recomputes its HW from its own (possibly stale) value. [000 §4]"""
        return X.and_(s.alive[r] == 1, s.quorum_leader == r, s.epoch[r] < s.quorum_epoch)

    @become_leader.effect
    def _(self, s: StateView, X: Backend, r: int) -> Effect:
        zeros = [0] * len(self.R)
        isr = list(s.quorum_isr)
        return {
            **self.forget_leadership(r),
            "epoch": {r: s.quorum_epoch},
            "leader": {r: r},
            "isr": {r: isr},
            "hw": {r: self.leader_hw(s, X, r, s.leo[r], isr, zeros)},
        }

    @action(name="become_follower", replica=REPLICA, leader=REPLICA_OR_NONE, where=distinct)
    def become_follower_truncating_to_hw(self, s: StateView, X: Backend, r: int, l: int) -> Bool:
        """(hw) A replica receives the LeaderAndIsr request naming another leader (or none) in a
        newer epoch and truncates to its HW. [000 §6]"""
        return self.learns_leader(s, X, r, l)

    @become_follower_truncating_to_hw.effect
    def _(self, s: StateView, X: Backend, r: int, l: int) -> Effect:
        return self.follow(s, X, r, l, lambda: s.hw[r])

    @action(name="become_follower", replica=REPLICA, leader=REPLICA_OR_NONE, where=distinct)
    def become_follower_by_leader_epoch(self, s: StateView, X: Backend, r: int, l: int) -> Bool:
        """(epoch) A replica receives the LeaderAndIsr request naming another leader (or none) in a
        newer epoch and, once that leader leads, truncates to the end offset the leader returns for
        its latest epoch (OffsetsForLeaderEpoch, KIP-101 with KIP-279). [000 §7]"""
        if l == NONE:
            return self.learns_leader(s, X, r, l)
        return X.and_(self.learns_leader(s, X, r, l), self.leads(s, X, l))

    @become_follower_by_leader_epoch.effect
    def _(self, s: StateView, X: Backend, r: int, l: int) -> Effect:
        return self.follow(s, X, r, l, lambda: self.offset_for_leader_epoch(s, X, l, r))

    @action(name="become_follower", replica=REPLICA, leader=REPLICA_OR_NONE, where=distinct)
    def fenced_become_follower(self, s: StateView, X: Backend, r: int, l: int) -> Bool:
        """(epoch-fenced) As by leader epoch, but the leader must lead in ZooKeeper's epoch: the
        OffsetsForLeaderEpoch request carries the epoch and another epoch's leader rejects it (KIP-320). [000 §7]"""
        if l == NONE:
            return self.learns_leader(s, X, r, l)
        return X.and_(self.learns_leader(s, X, r, l), self.leads(s, X, l), s.epoch[l] == s.quorum_epoch)

    @fenced_become_follower.effect
    def _(self, s: StateView, X: Backend, r: int, l: int) -> Effect:
        return self.follow(s, X, r, l, lambda: self.offset_for_leader_epoch(s, X, l, r))

    # -- clients --------------------------------------------------------------------------

    @action(record=RECORD, leader=REPLICA)
    def acknowledge(self, s: StateView, X: Backend, k: int, l: int) -> Bool:
        """acks=all: the leader that appended a record acknowledges it once its HW passes the
        record and its ISR still has min.insync.replicas members. [000 §8.2(4); 004]"""
        held = X.exists(self.offsets, lambda o: X.and_(s.log_record[l][o] == k, s.log_epoch[l][o] == s.epoch[l],
                                                       o < s.hw[l]))
        return X.and_(s.acked_offset[k] == NONE, self.leads(s, X, l), self.isr_size(s, X, l) >= self.min_isr, held)

    @acknowledge.effect
    def _(self, s: StateView, X: Backend, k: int, l: int) -> Effect:
        offset: Int = 0
        for o in self.offsets:
            offset = X.ite(s.log_record[l][o] == k, o, offset)
        return {"acked_offset": {k: offset}}

    @action(leader=REPLICA)
    def consume(self, s: StateView, X: Backend, l: int) -> Bool:
        """A consumer reads the next record below the HW of the replica it takes for leader. [000 §1]"""
        return X.and_(self.leads(s, X, l), s.consumer_offset < s.hw[l])

    @consume.effect
    def _(self, s: StateView, X: Backend, l: int) -> Effect:
        pos = s.consumer_offset
        return {"consumed": X.set_at(s.consumed, pos, X.at(s.log_record[l], pos)), "consumer_offset": pos + 1}

    # -- presentation --------------------------------------------------------------------

    def describe(self, state: State) -> dict[str, str]:
        v = self.schema.view(state)

        def flags(row: Sequence[int]) -> str:
            return "{" + ",".join(replica_name(x) for x in self.R if row[x]) + "}"

        out: dict[str, str] = {
            "controller.leader": replica_name(v.quorum_leader),
            "controller.epoch": str(v.quorum_epoch),
            "controller.isr": flags(v.quorum_isr),
        }
        for r in self.R:
            name = replica_name(r)
            role = "down" if not v.alive[r] else ("leader" if v.leader[r] == r else f"follows {replica_name(v.leader[r])}")
            out[f"{name}"] = f"{role}, epoch {v.epoch[r] if v.epoch[r] != NONE else '-'}"
            out[f"{name}.log"] = "[" + " ".join(f"m{v.log_record[r][o]}@e{v.log_epoch[r][o]}" for o in range(v.leo[r])) + "]"
            out[f"{name}.LEO"] = str(v.leo[r])
            out[f"{name}.HW"] = str(v.hw[r])
            if v.leader[r] == r and v.alive[r]:
                out[f"{name}.ISR"] = flags(v.isr[r])
                for x in self.R:
                    if x != r:
                        out[f"{name}.remote LEO[{replica_name(x)}]"] = str(v.remote_leo[r][x])
            if v.response_end[r] != NONE:
                got = [f"m{v.response_record[r][o]}" for o in self.offsets if v.response_record[r][o] != NONE]
                out[f"{name}.response"] = f"records [{' '.join(got)}], leader HW {v.response_hw[r]}, ends at {v.response_end[r]}"
        acked = [f"m{k}@{v.acked_offset[k]}" for k in self.records if v.acked_offset[k] != NONE]
        out["producer.acked"] = "[" + " ".join(acked) + "]"
        out["consumer.read"] = "[" + " ".join(f"m{v.consumed[o]}" for o in range(v.consumer_offset)) + "]"
        out["crashes"] = str(v.crashes)
        return out
