"""The `quorum` model's election messages (kip853): a server answering a vote request, a
candidate counting the responses, a server learning its epoch's leader from BeginQuorumEpoch
(kip996's pre-vote forms of the first two are in quorum_prevote.py).
"""

from __future__ import annotations

from kmc.model.core import Backend, Bool, Effect, Int, StateView, action
from kmc.model.effects import merge, nested, when
from kmc.model.quorum_prevote import QuorumPreVote, slots, two
from kmc.model.quorum_state import (
    BEGIN_QUORUM, CANDIDATE, DEAD, FENCED_LEADER_EPOCH, NIL_ERROR, REQUEST_VOTE, SERVER, UNATTACHED, VOTE_RESPONSE,
    VOTED, VOTER, Transition,
)


class QuorumVotes(QuorumPreVote):
    """HandleVoteRequest, HandleVoteResponse, AcceptBeginQuorumRequest."""

    # -- send/receive: elections -------------------------------------------------------------------

    def vote_request(self, s: StateView, X: Backend, a: int, peer: int,
                     k: int) -> tuple[Bool, Int, Bool, Transition]:
        """HandleVoteRequest's LET: (error, the request's epoch, grant_vote, the final state)."""
        _, epoch, last_epoch, last_offset, _ = self.slot(s, REQUEST_VOTE, peer, a, k)
        error = epoch < s.epoch[a]
        state0 = self.pick(X, epoch > s.epoch[a], self.to_unattached(s, X, a, epoch, s.role[a]), self.current(s, a))
        mine = self.last_epoch(s, X, a)
        log_ok = X.or_(last_epoch > mine, X.and_(last_epoch == mine, last_offset >= s.log_len[a]))
        grant = X.and_(X.or_(state0[0] == UNATTACHED, X.and_(state0[0] == VOTED, s.voted_for[a] == peer)), log_ok)
        final = self.pick(X, X.and_(grant, state0[0] == UNATTACHED), self.to_voted(X, epoch, state0, peer), state0)
        return error, epoch, grant, final

    @action(server=SERVER, peer=SERVER, slot=slots(REQUEST_VOTE), where=two)
    def handle_vote_request(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Bool:
        """HandleVoteRequest: a server answers a vote request; it grants its vote when the
        candidate's log is at least as up to date and it has not voted for another."""
        return X.and_(s.rvq[peer][a][k] == 1, s.state[a] != DEAD, self.connected(s, peer, a))

    @handle_vote_request.effect
    def _(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Effect:
        error, epoch, grant, final = self.vote_request(s, X, a, peer, k)
        changed = final[0] != s.state[a]
        fail = merge(self.reset_fetch_state(a), self.fail_pending_writes(s, X, a))
        ok_reply = [1, epoch, final[2], X.ite(grant, 1, 0), NIL_ERROR, 0]
        error_reply = [1, s.epoch[a], final[2], 0, FENCED_LEADER_EPOCH, 0]
        reply = [X.ite(error, e, o) for e, o in zip(error_reply, ok_reply)]
        return nested(merge(self.apply_state(a, final), when(s, X, X.and_(X.not_(error), changed), fail),
                            self.discard(s, X, REQUEST_VOTE, peer, a, k),
                            self.send(s, X, VOTE_RESPONSE, a, peer, reply)))

    @action(server=SERVER, peer=SERVER, slot=slots(VOTE_RESPONSE), where=two)
    def handle_vote_response(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Bool:
        """HandleVoteResponse: a voter takes a vote response; a candidate counts a granted
        vote of its epoch."""
        return X.and_(s.rvs[peer][a][k] == 1, s.state[a] != DEAD, s.role[a] == VOTER)

    @handle_vote_response.effect
    def _(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Effect:
        _, epoch, leader, granted, error, _ = self.slot(s, VOTE_RESPONSE, peer, a, k)
        state0, handled = self.common_response(s, X, a, leader, epoch, error)
        count = X.and_(X.not_(handled), s.state[a] == CANDIDATE, granted == 1)
        votes = [X.ite(count, 1, v) if t == peer else v for t, v in enumerate(state0[3])]
        return nested(merge(self.apply_state(a, (state0[0], state0[1], state0[2], votes, state0[4])),
                            self.discard(s, X, VOTE_RESPONSE, peer, a, k)))

    # -- send/receive: followers -------------------------------------------------------------------

    @action(server=SERVER, peer=SERVER, slot=slots(BEGIN_QUORUM), where=two)
    def accept_begin_quorum_request(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Bool:
        """AcceptBeginQuorumRequest: a server learns the new leader of an epoch not below its
        own and follows it."""
        return X.and_(s.bqe[peer][a][k] == 1, s.state[a] != DEAD, s.bqe_epoch[peer][a][k] >= s.epoch[a])

    @accept_begin_quorum_request.effect
    def _(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Effect:
        epoch = s.bqe_epoch[peer][a][k]
        t = self.maybe_transition(s, X, a, peer, epoch)
        done = {("bqe_done", peer, a, e): X.ite(epoch == e, 1, s.bqe_done[peer][a][e])
                for e in range(self.schema.by_name["epoch"].hi + 1)} if self.kip996 else {}
        return nested(merge(self.apply_state(a, t), self.reset_fetch_state(a), self.fail_pending_writes(s, X, a),
                            self.discard(s, X, BEGIN_QUORUM, peer, a, k), done, self.bqe_processed(s, X, peer, a)))
