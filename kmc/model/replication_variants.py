"""The `replication` model's variant modules: each mode's own actions and the operators only they use.

KafkaReplication's layout, operators and the actions every mode shares are in
kmc/model/replication.py; here are the actions each variant module of the specification adds:
how a replica truncates on becoming follower (KafkaTruncateToHighWatermark, Kip101, Kip279)
and, for Kip320FirstTry and Kip320, the epoch checks on fetches, high-watermark moves and ISR
changes. They follow the spec's order of modules, each under the name of the module that
defines it. An action keeps kmc's name in every mode (traces and baselines name it), on a
method named after the spec's action; `Replication.next` picks them per mode, and
docs/replication.md maps each one to the spec's names.

`ReplicationVariants` is a base of `Replication` (kmc/model/replication.py); both build on
KafkaReplication's operators (kmc/model/replication_operators.py).
"""

from __future__ import annotations


from kmc.model.core import Backend, Bool, Domain, Effect, Int, StateView, action, distinct, replica_name
from kmc.model.replication_operators import KafkaReplicationOperators

REPLICA = Domain(lambda m: m.R, replica_name)
EPOCH = Domain(lambda m: m.epochs)


class ReplicationVariants(KafkaReplicationOperators):
    """The variant modules' actions and operators (KafkaTruncateToHighWatermark to Kip320), on
    KafkaReplication's operators (kmc/model/replication_operators.py)."""

    # -- KafkaTruncateToHighWatermark (mode hw) ---------------------------------------------

    @action(name="become_follower", replica=REPLICA, leader=REPLICA, epoch=EPOCH, where=distinct)
    def become_follower_truncate_to_high_watermark(self, s: StateView, X: Backend, r: int, l: int, e: int) -> Bool:
        """A replica becomes follower on a LeaderAndIsr request naming another leader with a
        higher epoch than its own, and truncates its log to its own high watermark."""
        return X.and_(self.received_leader_and_isr(s, X, r, l, e), self.can_truncate_to(s, X, r, s.hw[r]))

    @become_follower_truncate_to_high_watermark.effect
    def _(self, s: StateView, X: Backend, r: int, l: int, e: int) -> Effect:
        return self.become_follower_and_truncate_to(s, X, r, l, e, s.hw[r])

    # -- Kip101 (mode kip101) -------------------------------------------------------------

    def lookup_offset_for_epoch(self, s: StateView, X: Backend, l: int, f: int, epoch: Int) -> Int:
        """The leader's answer to OffsetsForLeaderEpoch (KIP-101): its end offset if its last
        record has `epoch`, else the first offset with a larger epoch, else f's HW."""
        first_larger: Int = s.hw[f]
        for o in reversed(self.offsets):  # descending: the lowest such offset wins
            first_larger = X.ite(X.and_(o < s.end_offset[l], s.log_epoch[l][o] > epoch), o, first_larger)
        last_epoch = self.epoch_at(s, X, l, s.end_offset[l] - 1)
        return X.ite(
            s.end_offset[l] == 0,
            s.hw[f],
            X.ite(last_epoch == epoch, s.end_offset[l], first_larger),
        )

    def kip101_truncation_offset(self, s: StateView, X: Backend, l: int, r: int) -> Int:
        """0 for an empty log, else the leader's answer for r's latest epoch."""
        latest_epoch = self.epoch_at(s, X, r, s.end_offset[r] - 1)
        return X.ite(s.end_offset[r] == 0, 0, self.lookup_offset_for_epoch(s, X, l, r, latest_epoch))

    @action(name="become_follower", replica=REPLICA, leader=REPLICA, epoch=EPOCH, where=distinct)
    def become_follower_truncate_kip101(self, s: StateView, X: Backend, r: int, l: int, e: int) -> Bool:
        """A replica becomes follower on a LeaderAndIsr request naming another leader with a
        higher epoch than its own, and truncates to the end offset that leader returns for the
        replica's latest epoch (OffsetsForLeaderEpoch, KIP-101)."""
        offset = self.kip101_truncation_offset(s, X, l, r)
        return X.and_(self.received_leader_and_isr(s, X, r, l, e), self.can_truncate_to(s, X, r, offset))

    @become_follower_truncate_kip101.effect
    def _(self, s: StateView, X: Backend, r: int, l: int, e: int) -> Effect:
        return self.become_follower_and_truncate_to(s, X, r, l, e, self.kip101_truncation_offset(s, X, l, r))

    # -- Kip279 (mode kip279; its truncation is also kip320's) ----------------------------

    def first_non_matching_offset_from_tail(self, s: StateView, X: Backend, l: int, f: int) -> Int:
        """One past the highest offset where f and l hold the same record, else 0 (KIP-279)."""
        result: Int = 0
        for o in self.offsets:  # ascending: the highest matching offset wins
            result = X.ite(self.same_record(s, X, f, l, o), o + 1, result)
        return result

    @action(name="become_follower", replica=REPLICA, leader=REPLICA, epoch=EPOCH, where=distinct)
    def become_follower_truncate_kip279(self, s: StateView, X: Backend, r: int, l: int, e: int) -> Bool:
        """A replica becomes follower on a LeaderAndIsr request naming another leader with a
        higher epoch than its own, and truncates past the last offset where its log and the
        leader's hold the same record (KIP-279)."""
        offset = self.first_non_matching_offset_from_tail(s, X, l, r)
        return X.and_(self.received_leader_and_isr(s, X, r, l, e), self.can_truncate_to(s, X, r, offset))

    @become_follower_truncate_kip279.effect
    def _(self, s: StateView, X: Backend, r: int, l: int, e: int) -> Effect:
        offset = self.first_non_matching_offset_from_tail(s, X, l, r)
        return self.become_follower_and_truncate_to(s, X, r, l, e, offset)

    # -- Kip320FirstTry (mode kip320-first-try) -------------------------------------------

    def is_follower_caught_up_to_leader_epoch(self, s: StateView, X: Backend, l: int, f: int, end: Int) -> Bool:
        """l presumes leadership, f follows l and holds offset end - 1, which l also holds, with
        the same epoch (KIP-320 draft)."""
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

    def has_high_watermark_reached_current_epoch(self, s: StateView, X: Backend, l: int) -> Bool:
        """The leader's HW is at its end offset or at a record of its own epoch."""
        hw = s.hw[l]
        return X.or_(
            hw == s.end_offset[l],
            X.and_(self.has_offset(s, X, l, hw), self.epoch_at(s, X, l, hw) == s.epoch[l]),
        )

    @action(name="leader_inc_high_watermark", leader=REPLICA)
    def improved_leader_inc_high_watermark(self, s: StateView, X: Backend, l: int) -> Bool:
        """The leader advances its high watermark by one when every member of its ISR follows it
        and holds the record at the HW with the leader's epoch for it."""
        hw = s.hw[l]
        return X.and_(
            s.leader[l] == l,
            self.has_offset(s, X, l, hw),
            X.forall(self.R, lambda f: X.implies(s.isr[l][f] == 1,
                                                 self.is_follower_caught_up_to_leader_epoch(s, X, l, f, hw + 1))),
        )

    @improved_leader_inc_high_watermark.effect
    def _(self, s: StateView, X: Backend, l: int) -> Effect:
        return {"hw": {l: s.hw[l] + 1}}

    @action(name="leader_shrink_isr", leader=REPLICA, replica=REPLICA, where=distinct)
    def leader_shrink_isr_better_fencing(self, s: StateView, X: Backend, l: int, r: int) -> Bool:
        """The true leader removes a follower that is not caught up to its end offset in the
        leader's epoch from the ISR, through the quorum."""
        lagging = X.not_(self.is_follower_caught_up_to_leader_epoch(s, X, l, r, s.end_offset[l]))
        return X.and_(s.isr[l][r] == 1, lagging, self.is_true_leader(s, X, l))

    @leader_shrink_isr_better_fencing.effect
    def _(self, s: StateView, X: Backend, l: int, r: int) -> Effect:
        return self.quorum_update_leader_and_isr(s, X, l, self.without(s.isr[l], r))

    @action(name="leader_expand_isr", leader=REPLICA, replica=REPLICA, where=distinct)
    def leader_expand_isr_better_fencing(self, s: StateView, X: Backend, l: int, r: int) -> Bool:
        """The true leader adds a follower caught up to its high watermark in the leader's epoch
        to the ISR, through the quorum, once the HW has reached the leader's own epoch."""
        ready = X.and_(self.is_follower_caught_up_to_leader_epoch(s, X, l, r, s.hw[l]),
                       self.has_high_watermark_reached_current_epoch(s, X, l))
        return X.and_(s.isr[l][r] == 0, ready, self.is_true_leader(s, X, l))

    @leader_expand_isr_better_fencing.effect
    def _(self, s: StateView, X: Backend, l: int, r: int) -> Effect:
        return self.quorum_update_leader_and_isr(s, X, l, self.adding(s.isr[l], r))

    @action(replica=REPLICA, leader=REPLICA, epoch=EPOCH, where=distinct)
    def become_follower(self, s: StateView, X: Backend, r: int, l: int, e: int) -> Bool:
        """A replica becomes follower on a LeaderAndIsr request naming another leader with a
        higher epoch than its own, keeping its log and high watermark: it truncates at fetch
        time (follower_truncate)."""
        return self.received_leader_and_isr(s, X, r, l, e)

    @become_follower.effect
    def _(self, s: StateView, X: Backend, r: int, l: int, e: int) -> Effect:
        return {"epoch": {r: e}, "leader": {r: l}, "isr": {r: list(s.request_isr[e])}}

    @action(follower=REPLICA, leader=REPLICA, where=distinct)
    def follower_fetch(self, s: StateView, X: Backend, f: int, l: int) -> Bool:
        """A follower fetches the next record from the leader it follows, only while its last
        record's epoch matches the leader's at that offset."""
        return X.and_(self.is_follower_caught_up_to_leader_epoch(s, X, l, f, s.end_offset[f]),
                      s.end_offset[f] < s.end_offset[l])

    @follower_fetch.effect
    def _(self, s: StateView, X: Backend, f: int, l: int) -> Effect:
        return self.replicate_to(s, X, f, l)

    def follower_needs_truncation(self, s: StateView, X: Backend, f: int, l: int) -> Bool:
        """f's log is longer than l's, or f's last record has another epoch than l's record at
        that offset."""
        end = s.end_offset[f]
        return X.or_(
            end > s.end_offset[l],
            X.and_(end > 0, self.has_offset(s, X, l, end - 1),
                   self.epoch_at(s, X, l, end - 1) != self.epoch_at(s, X, f, end - 1)),
        )

    @action(follower=REPLICA, leader=REPLICA, where=distinct)
    def follower_truncate(self, s: StateView, X: Backend, f: int, l: int) -> Bool:
        """A follower whose log is longer than the leader's, or whose last record's epoch
        differs from the leader's at that offset, truncates at fetch time (KIP-279's offset)."""
        offset = self.first_non_matching_offset_from_tail(s, X, l, f)
        return X.and_(s.leader[l] == l, s.leader[f] == l, self.follower_needs_truncation(s, X, f, l),
                      offset <= s.end_offset[f])

    @follower_truncate.effect
    def _(self, s: StateView, X: Backend, f: int, l: int) -> Effect:
        offset = self.first_non_matching_offset_from_tail(s, X, l, f)
        return {**self.truncate_to(s, X, f, offset), "hw": {f: X.min_(offset, s.hw[f])}}

    # -- Kip320 (mode kip320) -------------------------------------------------------------

    def is_following_leader_epoch(self, s: StateView, X: Backend, l: int, f: int) -> Bool:
        """l presumes leadership and f follows l in l's epoch (KIP-320)."""
        return X.and_(s.leader[l] == l, s.leader[f] == l, s.epoch[f] == s.epoch[l])

    def has_follower_reached_high_watermark(self, s: StateView, X: Backend, l: int, f: int) -> Bool:
        """f holds the record just below l's high watermark (or that HW is 0)."""
        hw = s.hw[l]
        return X.or_(hw == 0, X.and_(hw > 0, self.has_offset(s, X, f, hw - 1)))

    @action(name="leader_inc_high_watermark", leader=REPLICA)
    def fenced_leader_inc_high_watermark(self, s: StateView, X: Backend, l: int) -> Bool:
        """The leader advances its high watermark by one when every member of its ISR follows it
        in its epoch and holds the offset."""
        hw = s.hw[l]
        return X.and_(
            self.has_offset(s, X, l, hw),
            X.forall(self.R, lambda f: X.implies(s.isr[l][f] == 1, X.and_(self.is_following_leader_epoch(s, X, l, f),
                                                                        self.has_offset(s, X, f, hw)))),
        )

    @fenced_leader_inc_high_watermark.effect
    def _(self, s: StateView, X: Backend, l: int) -> Effect:
        return {"hw": {l: s.hw[l] + 1}}

    @action(name="leader_shrink_isr", leader=REPLICA, replica=REPLICA, where=distinct)
    def fenced_leader_shrink_isr(self, s: StateView, X: Backend, l: int, r: int) -> Bool:
        """The true leader removes a follower that follows another epoch, or is behind its end
        offset, from the ISR, through the quorum."""
        lagging = X.or_(X.not_(self.is_following_leader_epoch(s, X, l, r)), s.end_offset[r] < s.end_offset[l])
        return X.and_(s.isr[l][r] == 1, lagging, self.is_true_leader(s, X, l))

    @fenced_leader_shrink_isr.effect
    def _(self, s: StateView, X: Backend, l: int, r: int) -> Effect:
        return self.quorum_update_leader_and_isr(s, X, l, self.without(s.isr[l], r))

    @action(name="leader_expand_isr", leader=REPLICA, replica=REPLICA, where=distinct)
    def fenced_leader_expand_isr(self, s: StateView, X: Backend, l: int, r: int) -> Bool:
        """The true leader adds a follower that follows its epoch and has reached its high
        watermark to the ISR, through the quorum, once the HW has reached the leader's own epoch."""
        ready = X.and_(
            self.is_following_leader_epoch(s, X, l, r),
            self.has_follower_reached_high_watermark(s, X, l, r),
            self.has_high_watermark_reached_current_epoch(s, X, l),
        )
        return X.and_(s.isr[l][r] == 0, ready, self.is_true_leader(s, X, l))

    @fenced_leader_expand_isr.effect
    def _(self, s: StateView, X: Backend, l: int, r: int) -> Effect:
        return self.quorum_update_leader_and_isr(s, X, l, self.adding(s.isr[l], r))

    @action(name="become_follower", replica=REPLICA, leader=REPLICA, epoch=EPOCH, where=distinct)
    def fenced_become_follower_and_truncate(self, s: StateView, X: Backend, r: int, l: int, e: int) -> Bool:
        """A replica becomes follower on a LeaderAndIsr request naming another leader with a
        higher epoch than its own, once that leader leads in the request's epoch, and truncates
        past the last offset where its log and the leader's hold the same record."""
        offset = self.first_non_matching_offset_from_tail(s, X, l, r)
        return X.and_(self.received_leader_and_isr(s, X, r, l, e), s.leader[l] == l, s.epoch[l] == e,
                      self.can_truncate_to(s, X, r, offset))

    @fenced_become_follower_and_truncate.effect
    def _(self, s: StateView, X: Backend, r: int, l: int, e: int) -> Effect:
        offset = self.first_non_matching_offset_from_tail(s, X, l, r)
        return self.become_follower_and_truncate_to(s, X, r, l, e, offset)

    @action(name="follower_fetch", follower=REPLICA, leader=REPLICA, where=distinct)
    def fenced_follower_fetch(self, s: StateView, X: Backend, f: int, l: int) -> Bool:
        """A follower fetches the next record from the leader it follows, in the leader's epoch."""
        return X.and_(self.is_following_leader_epoch(s, X, l, f), s.end_offset[f] < s.end_offset[l])

    @fenced_follower_fetch.effect
    def _(self, s: StateView, X: Backend, f: int, l: int) -> Effect:
        return self.replicate_to(s, X, f, l)
