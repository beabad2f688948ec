"""The operators of the specification's base module, KafkaReplication, that every mode's
actions use: who is the true leader, what a log holds, what a LeaderAndIsr request says, and
the effects of truncating, replicating and changing the ISR. `Replication`
(kmc/model/replication.py) and the variant modules' actions (kmc/model/replication_variants.py)
both build on this class.
"""

from __future__ import annotations

from typing import Any, Sequence

from kmc.model.core import NONE, Backend, Bool, Effect, Int, StateView


class KafkaReplicationOperators:
    """KafkaReplication's operators, over the bounds `Replication._build` sets."""

    R: range  # the replicas
    offsets: range  # the offsets of a bounded log
    settings: dict[str, Any]  # the model's option values (kmc/model/core.py: Model)

    @staticmethod
    def quorum_epoch(s: StateView) -> Int:
        """The quorum's leader epoch: every controller change takes the next epoch."""
        return s.next_leader_epoch - 1

    def is_true_leader(self, s: StateView, X: Backend, l: int) -> Bool:
        """The quorum names l as leader, and l presumes leadership in the quorum's epoch."""
        return X.and_(s.quorum_leader == l, s.leader[l] == l, s.epoch[l] == self.quorum_epoch(s))

    def has_offset(self, s: StateView, X: Backend, r: int, offset: Int) -> Bool:
        return X.and_(0 <= offset, offset < s.end_offset[r])

    def epoch_at(self, s: StateView, X: Backend, r: int, offset: Int) -> Int:
        return X.at(s.log_epoch[r], offset)

    def same_record(self, s: StateView, X: Backend, a: int, b: int, o: int) -> Bool:
        """Both replicas hold offset o, with the same record."""
        return X.and_(
            o < s.end_offset[a],
            o < s.end_offset[b],
            s.log_id[a][o] == s.log_id[b][o],
            s.log_epoch[a][o] == s.log_epoch[b][o],
        )

    def is_follower_caught_up(self, s: StateView, X: Backend, l: int, f: int, end: Int) -> Bool:
        """f follows l and holds offset end - 1, which l also holds (no epoch check)."""
        return X.and_(
            s.leader[f] == l,
            X.or_(end == 0, X.and_(end > 0, self.has_offset(s, X, l, end - 1), self.has_offset(s, X, f, end - 1))),
        )

    def received_leader_and_isr(self, s: StateView, X: Backend, r: int, l: int, e: int) -> Bool:
        """The LeaderAndIsr request of epoch e was sent, names l as leader, and is newer than
        the epoch r knows."""
        return X.and_(e < s.next_leader_epoch, s.request_leader[e] == l, s.epoch[r] < e)

    def controller_update_isr(self, s: StateView, X: Backend, leader: Int, isr: list[Int]) -> Effect:
        """The controller moves the quorum to the next epoch and sends its LeaderAndIsr request."""
        e = s.next_leader_epoch
        return {
            "quorum_leader": leader,
            "quorum_isr": isr,
            "request_leader": X.set_at(s.request_leader, e, leader),
            "request_isr": X.set_at(s.request_isr, e, isr),
            "next_leader_epoch": e + 1,
        }

    def quorum_update_leader_and_isr(self, s: StateView, X: Backend, l: int, isr: list[Int]) -> Effect:
        """The true leader writes a new ISR to the quorum and to its own view."""
        return {"quorum_isr": isr, "isr": {l: isr}}

    def truncate_to(self, s: StateView, X: Backend, r: int, offset: Int) -> Effect:
        """The effect of truncating r's log to end at `offset`."""
        return {
            "log_id": {r: [X.ite(o < offset, s.log_id[r][o], NONE) for o in self.offsets]},
            "log_epoch": {r: [X.ite(o < offset, s.log_epoch[r][o], NONE) for o in self.offsets]},
            "end_offset": {r: offset},
        }

    def can_truncate_to(self, s: StateView, X: Backend, r: int, offset: Int) -> Bool:
        """The spec truncates only to an offset at or below the end offset (a step beyond it is
        not enabled); with --truncate-to-end-offset, Kafka's truncation to the smaller is."""
        if self.settings["truncate_to_end_offset"]:
            return True
        return offset <= s.end_offset[r]

    def become_follower_and_truncate_to(self, s: StateView, X: Backend, r: int, l: int, e: int,
                                        offset: Int) -> Effect:
        """r takes the request of epoch e (leader l), truncates to `offset` and lowers its HW to it."""
        if self.settings["truncate_to_end_offset"]:
            offset = X.min_(offset, s.end_offset[r])
        return {
            "epoch": {r: e}, "leader": {r: l}, "isr": {r: list(s.request_isr[e])},
            **self.truncate_to(s, X, r, offset),
            "hw": {r: X.min_(offset, s.hw[r])},
        }

    def replicate_to(self, s: StateView, X: Backend, f: int, l: int) -> Effect:
        """f copies l's record at f's end offset; f's HW becomes min(l's HW, its new end offset)."""
        end = s.end_offset[f]
        return {
            "log_id": {f: X.set_at(s.log_id[f], end, X.at(s.log_id[l], end))},
            "log_epoch": {f: X.set_at(s.log_epoch[f], end, X.at(s.log_epoch[l], end))},
            "end_offset": {f: end + 1},
            "hw": {f: X.min_(s.hw[l], end + 1)},
        }

    @staticmethod
    def without(flags: Sequence[Int], r: int) -> list[Int]:
        """A set of replicas (flags) minus r."""
        return [0 if x == r else v for x, v in enumerate(flags)]

    @staticmethod
    def adding(flags: Sequence[Int], r: int) -> list[Int]:
        """A set of replicas (flags) plus r."""
        return [1 if x == r else v for x, v in enumerate(flags)]
