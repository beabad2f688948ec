"""`replication` with one protocol change that silently disables a rule: the leader's ISR
expansion (kip320's FencedLeaderExpandIsr) asks for a follower already in the ISR as well as
outside it, so `leader_expand_isr` can never apply. Every invariant still holds (an ISR that
only shrinks is safe), so only a gate's `fires` key catches the change
(tests/test_coverage.py, docs/ci.md)."""

from __future__ import annotations

from kmc.model.core import Backend, Bool, StateView
from kmc.model.replication import Replication


def _expand_isr_of_a_member(self: Replication, s: StateView, X: Backend, l: int, r: int) -> Bool:
    """The regression: the follower must already be in the leader's ISR, and outside it too."""
    return X.and_(s.isr[l][r] == 1, Replication.fenced_leader_expand_isr.guard(self, s, X, l, r))


class StuckIsr(Replication):
    name = "stuck-isr"
    summary = "replication whose leader never adds a follower back to the ISR (a disabled rule)"
    fenced_leader_expand_isr = Replication.fenced_leader_expand_isr.replace(guard=_expand_isr_of_a_member)
