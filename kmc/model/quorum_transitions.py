"""The `quorum` model's server transitions: the Transition* operators of the specification's
functions module (a server's state, epoch, leader, votes and vote as one record), the
responses' common handling, and the resets actions share (fetch state, pending writes,
follower end offsets).
"""

from __future__ import annotations

from typing import Sequence

from kmc.model.core import NONE, Backend, Bool, Int, StateView
from kmc.model.effects import Flat
from kmc.model.quorum_messages import QuorumMessages
from kmc.model.quorum_state import (
    CANDIDATE, DEAD, FENCED_LEADER_EPOCH, FOLLOWER, ILLEGAL, LEADER, NIL_ERROR, NOT_LEADER, OBSERVER, PROSPECTIVE,
    RESIGNED, UNATTACHED, VOTED, VOTER, Transition,
)


class QuorumTransitions(QuorumMessages):
    """TransitionTo*, MaybeTransition, MaybeHandleCommonResponse, ApplyState, the resets."""

    # -- server state transitions (Transition* of the functions module) ------------------

    def current(self, s: StateView, a: int) -> Transition:
        """NoTransition(a)."""
        return (s.state[a], s.epoch[a], s.leader[a], list(s.votes_recv[a]), s.voted_for[a])

    def illegal(self) -> Transition:
        """SetIllegalState."""
        return (ILLEGAL, 0, NONE, [0] * len(self.S), NONE)

    def pick(self, X: Backend, cond: Bool, a: Transition, b: Transition) -> Transition:
        """IF cond THEN a ELSE b, on transition records."""
        return (X.ite(cond, a[0], b[0]), X.ite(cond, a[1], b[1]), X.ite(cond, a[2], b[2]),
                [X.ite(cond, x, y) for x, y in zip(a[3], b[3])], X.ite(cond, a[4], b[4]))

    def to_voted(self, X: Backend, epoch: Int, state0: Transition, recipient: int) -> Transition:
        """TransitionToVoted(epoch, state0, recipient)."""
        bad = X.and_(state0[1] == epoch, state0[0] != UNATTACHED)
        return self.pick(X, bad, self.illegal(), (VOTED, epoch, NONE, [0] * len(self.S), recipient))

    def to_unattached(self, s: StateView, X: Backend, a: int, epoch: Int, role: Int) -> Transition:
        """TransitionToUnattached(a, epoch, role) (kip853)."""
        bad = X.and_(role == VOTER, epoch <= s.epoch[a])
        return self.pick(X, bad, self.illegal(), (UNATTACHED, epoch, NONE, [0] * len(self.S), NONE))

    def to_unattached_with_leader(self, s: StateView, X: Backend, a: int, epoch: Int, leader_id: Int) -> Transition:
        """TransitionToUnattached(a, epoch, leader_id) (kip996): the vote is kept in the same epoch."""
        bad = X.or_(epoch < s.epoch[a], X.and_(epoch == s.epoch[a], s.state[a] != PROSPECTIVE))
        ok = (UNATTACHED, epoch, leader_id, [0] * len(self.S), X.ite(epoch > s.epoch[a], NONE, s.voted_for[a]))
        return self.pick(X, bad, self.illegal(), ok)

    def is_voter(self, s: StateView, X: Backend, a: int) -> Bool:
        """IsVoter(a) (kip996): alive and a member of its own configuration."""
        return X.and_(s.state[a] != DEAD, s.cfg_members[a][a] == 1)

    def is_observer(self, s: StateView, X: Backend, a: int) -> Bool:
        """IsObserver(a) (kip996): alive and not a member of its own configuration."""
        return X.and_(s.state[a] != DEAD, s.cfg_members[a][a] == 0)

    def to_follower(self, s: StateView, X: Backend, a: int, leader_id: Int, epoch: Int) -> Transition:
        """TransitionToFollower(a, leader_id, epoch)."""
        bad = X.or_(leader_id == a,
                    X.and_(s.epoch[a] == epoch, X.or_(s.state[a] == FOLLOWER, s.state[a] == LEADER)),
                    epoch < s.epoch[a])
        ok = (FOLLOWER, epoch, leader_id, [0] * len(self.S), X.ite(epoch > s.epoch[a], NONE, s.voted_for[a]))
        return self.pick(X, bad, self.illegal(), ok)

    def to_leader(self, s: StateView, X: Backend, a: int) -> Transition:
        """TransitionToLeader(a) (kip996: the vote is forgotten)."""
        ok = (LEADER, s.epoch[a], a, [0] * len(self.S), NONE if self.kip996 else s.voted_for[a])
        return self.pick(X, s.state[a] != CANDIDATE, self.illegal(), ok)

    def to_resigned(self, s: StateView, X: Backend, a: int) -> Transition:
        """TransitionToResigned(a) (kip996: it keeps itself as leader and forgets the vote)."""
        ok = ((RESIGNED, s.epoch[a], a, [0] * len(self.S), NONE) if self.kip996
              else (RESIGNED, s.epoch[a], NONE, [0] * len(self.S), s.voted_for[a]))
        return self.pick(X, s.state[a] != LEADER, self.illegal(), ok)

    def to_candidate(self, s: StateView, X: Backend, a: int) -> Transition:
        """TransitionToCandidate(a): it votes for itself (kip996: only from Prospective)."""
        ok = (CANDIDATE, s.epoch[a] + 1, NONE, [1 if t == a else 0 for t in self.S], a)
        return self.pick(X, s.state[a] != PROSPECTIVE, self.illegal(), ok) if self.kip996 else ok

    def to_prospective(self, s: StateView, X: Backend, a: int, epoch: Int) -> Transition:
        """TransitionToProspective(a, epoch) (kip996): it keeps the leader it knows and its vote."""
        bad = X.or_(s.state[a] == LEADER, s.state[a] == PROSPECTIVE)
        ok = (PROSPECTIVE, epoch, s.leader[a], [1 if t == a else 0 for t in self.S], s.voted_for[a])
        return self.pick(X, bad, self.illegal(), ok)

    def add_vote(self, X: Backend, epoch: Int, state0: Transition, recipient: int, kind: int) -> Transition:
        """TransitionToUnattachedAddVote / TransitionToProspectiveAddVote (kip996): the vote is
        recorded (kind: UNATTACHED or PROSPECTIVE)."""
        bad = X.or_(state0[1] != epoch, state0[0] != kind, state0[4] != NONE)
        votes = [0] * len(self.S) if kind == UNATTACHED else state0[3]
        return self.pick(X, bad, self.illegal(), (kind, epoch, state0[2], votes, recipient))

    def consistent_leader(self, s: StateView, X: Backend, a: int, leader_id: Int, epoch: Int) -> Bool:
        """HasConsistentLeader(a, leader_id, epoch)."""
        if self.kip996:
            quiet = X.or_(X.not_(self.is_voter(s, X, a)),
                          *[s.state[a] == x for x in (RESIGNED, PROSPECTIVE, UNATTACHED)])
        else:
            quiet = X.or_(s.role[a] == OBSERVER, s.state[a] == RESIGNED)
        me = X.or_(X.and_(s.epoch[a] == epoch, quiet), s.state[a] == LEADER)
        other = X.or_(epoch != s.epoch[a], leader_id == NONE, s.leader[a] == NONE, s.leader[a] == leader_id)
        return X.ite(leader_id == a, me, other)

    def maybe_transition(self, s: StateView, X: Backend, a: int, leader_id: Int, epoch: Int) -> Transition:
        """MaybeTransition(a, leader_id, epoch)."""
        unattached = (self.to_unattached_with_leader(s, X, a, epoch, NONE) if self.kip996
                      else self.to_unattached(s, X, a, epoch, s.role[a]))
        higher = self.pick(X, leader_id == NONE, unattached, self.to_follower(s, X, a, leader_id, epoch))
        learn = X.and_(leader_id != NONE, s.leader[a] == NONE, *([] if self.kip996 else [leader_id != a]))
        out = self.pick(X, learn, self.to_follower(s, X, a, leader_id, epoch), self.current(s, a))
        out = self.pick(X, epoch > s.epoch[a], higher, out)
        return self.pick(X, X.not_(self.consistent_leader(s, X, a, leader_id, epoch)), self.illegal(), out)

    def common_response(self, s: StateView, X: Backend, a: int, leader_id: Int, epoch: Int,
                        error: Int) -> tuple[Transition, Bool]:
        """MaybeHandleCommonResponse(a, leader_id, epoch, error): the record and `handled`."""
        stale = epoch < s.epoch[a]
        newer = X.or_(epoch > s.epoch[a], error == FENCED_LEADER_EPOCH, error == NOT_LEADER)
        learn = X.and_(epoch == s.epoch[a], leader_id != NONE, s.leader[a] == NONE,
                       *([] if self.kip996 else [leader_id != a]))
        out = self.pick(X, learn, self.to_follower(s, X, a, leader_id, epoch), self.current(s, a))
        out = self.pick(X, newer, self.maybe_transition(s, X, a, leader_id, epoch), out)
        out = self.pick(X, stale, self.current(s, a), out)
        # kip996: learning the leader of the same epoch without an error leaves the rest to the caller
        learned = X.and_(learn, error != NIL_ERROR) if self.kip996 else learn
        return out, X.or_(stale, newer, learned)

    def apply_state(self, a: int, t: Transition) -> Flat:
        """ApplyState(a, t)."""
        out: Flat = {("state", a): t[0], ("epoch", a): t[1], ("leader", a): t[2], ("voted_for", a): t[4]}
        for u in self.S:
            out[("votes_recv", a, u)] = t[3][u]
        return out

    # -- fetch state, pending writes, follower end offsets -------------------------------

    def reset_fetch_state(self, a: int) -> Flat:
        """ResetFetchState(a)."""
        return {("pf", a): 0, ("pf_dest", a): NONE, ("pf_epoch", a): 0, ("pf_offset", a): 0,
                ("pf_last_epoch", a): 0, ("pf_observer", a): 0, ("lfr", a): 0, ("lfr_peer", a): NONE,
                ("lfr_error", a): 0, ("fetch_success", a): 0}

    def fail_pending_writes(self, s: StateView, X: Backend, a: int) -> Flat:
        """FailPendingWrites(a): its pending values are negatively acknowledged."""
        out: Flat = {}
        for v in self.V:
            out[("pending_ack", a, v)] = 0
            out[("neg_acked", v)] = X.ite(s.pending_ack[a][v] == 1, 1, s.neg_acked[v])
        return out

    def reset_end_offsets(self, a: int, members: Sequence[Bool] | None, s: StateView, X: Backend) -> Flat:
        """ResetFollowerEndOffsetMap(a, members): 0 for the members, outside the domain else;
        members None: the current domain."""
        out: Flat = {}
        for t in self.S:
            inside = s.feo[a][t] != NONE if members is None else members[t]
            out[("feo", a, t)] = X.ite(inside, 0, NONE)
        return out
