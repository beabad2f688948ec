"""What kip853's actions require when the specification tests liveness (`TestLiveness =
TRUE`, kmc's --test-liveness): a timeout or a resignation only with a cause.

Without them any server may time out and any leader resign at any moment, and a fair run can
go round such steps for ever; with them, a follower times out only when its fetch failed or
was lost (CanFetchTimeout), a candidate only when its election cannot succeed, a leader
resigns only when too few members are connected to it (CheckQuorumResign), and a leader
resends a BeginQuorumEpoch that never arrived (ResendBeginQuorumEpochRequest, in
quorum_prevote.py). The epoch stays bounded by --max-epoch, which the specification drops
when testing liveness (its state space is then infinite; tests/reference/tlc-quorum.md,
"Liveness", gives the one edit TLC runs with).
"""

from __future__ import annotations

from kmc.model.core import Backend, Bool, StateView
from kmc.model.quorum_reconfig import QuorumReconfig
from kmc.model.quorum_state import CANDIDATE, FOLLOWER, LEADER, OBSERVER, RESIGNED, UNATTACHED, VOTED, VOTER


class QuorumLiveness(QuorumReconfig):
    """The TestLiveness conditions of CheckQuorumResign, ObserverFetchTimeout and SendRequestVote."""

    def too_few_connected(self, s: StateView, X: Backend, a: int) -> Bool:
        """CheckQuorumResign's condition: fewer than half of the other members of a's
        configuration are connected to it and a voter not ahead of it, or an observer."""
        peers = X.count([X.and_(s.cfg_members[a][t] == 1, self.connected(s, a, t),
                                X.or_(X.and_(s.role[t] == VOTER, s.epoch[a] >= s.epoch[t]), s.role[t] == OBSERVER))
                         for t in self.S if t != a])
        return 2 * (peers + 1) <= self.card(X, s.cfg_members[a])  # peers < Cardinality(members) \div 2

    def not_enough_votes(self, s: StateView, X: Backend, b: int) -> Bool:
        """NotEnoughVotes(b): no vote request of b's and no answer to it in flight, fewer votes
        than a majority of b's configuration, and b does not lead."""
        votes = X.count([v == 1 for v in s.votes_recv[b]])
        return X.and_(X.not_(self.inflight_votes(s, X, b, 0)), 2 * votes <= self.card(X, s.cfg_members[b]),
                      s.state[b] != LEADER)

    def election_timeout(self, s: StateView, X: Backend, a: int) -> Bool:
        """FetchOrElectionTimeout(a): with --test-liveness, a follower whose fetch failed or was
        lost, a candidate short of votes, a voter whose candidate is short of votes, or an
        unattached or resigned voter; otherwise any state but Leader."""
        if not self.test_liveness:
            return X.or_(*[s.state[a] == x for x in (FOLLOWER, CANDIDATE, UNATTACHED, VOTED, RESIGNED)])
        voted = X.any([X.and_(s.voted_for[a] == b, self.not_enough_votes(s, X, b)) for b in self.S])
        return X.or_(X.and_(s.state[a] == FOLLOWER, self.fetch_can_timeout(s, X, a)),
                     X.and_(s.state[a] == CANDIDATE, self.not_enough_votes(s, X, a)),
                     X.and_(s.state[a] == VOTED, voted), s.state[a] == UNATTACHED, s.state[a] == RESIGNED)
