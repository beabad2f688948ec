"""A protocol change, as a Kafka engineer would try one: KIP-320's replication, but a replica
that becomes follower truncates to its own high watermark instead of asking the leader where
its log diverges (skipping the OffsetsForLeaderEpoch round trip, as before KIP-101).

The change is one rule. Everything else is kmc's `replication` model, inherited: its fields,
its other actions, its invariants (kmc/invariants/replication.py) and its modes. The change
is a mode of its own, so that `kmc compare` shows it beside the rule it replaces.
"""

from __future__ import annotations

from kmc.model.core import Action, Backend, Bool, Effect, Option, StateView, action, distinct
from kmc.model.replication import EPOCH, REPLICA, Replication

CHANGED = "kip320-truncate-to-hw"


class TruncateToHighWatermark(Replication):
    name = "replication-truncate-to-hw"
    summary = "KIP-320, but a new follower truncates to its own high watermark"
    modes = {**Replication.modes, CHANGED: "KIP-320, but becoming follower truncates to the local high watermark"}
    options = (Option("mode", CHANGED, "protocol variant", choices=tuple(modes)), *Replication.options[1:])

    @action(name="become_follower", replica=REPLICA, leader=REPLICA, epoch=EPOCH, where=distinct)
    def fenced_become_follower_truncating_to_hw(self, s: StateView, X: Backend, r: int, l: int, e: int) -> Bool:
        """A replica becomes follower of a leader that leads in the request's epoch, and
        truncates its log to its own high watermark (no OffsetsForLeaderEpoch request)."""
        return X.and_(self.received_leader_and_isr(s, X, r, l, e), s.leader[l] == l, s.epoch[l] == e,
                      self.can_truncate_to(s, X, r, s.hw[r]))

    @fenced_become_follower_truncating_to_hw.effect
    def _(self, s: StateView, X: Backend, r: int, l: int, e: int) -> Effect:
        return self.become_follower_and_truncate_to(s, X, r, l, e, s.hw[r])

    def next(self, mode: str) -> list[Action]:
        if mode != CHANGED:
            return super().next(mode)
        changed = self.fenced_become_follower_truncating_to_hw
        return [changed if a.name == changed.name else a for a in super().next("kip320")]
