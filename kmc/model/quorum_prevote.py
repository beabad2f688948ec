"""The actions of the `quorum` model's kip996 mode that kip853 does not have (or has in another
form): KIP-996 pre-vote, at the level of Vanlightly/kafka-tlaplus kraft/kip_996.

A voter whose fetch or election times out does not bump its epoch: it becomes Prospective and
asks the others for a pre-vote; only with a majority of pre-votes does it start an election
(ConcludePreVote). A follower that has fetched from its leader in this epoch refuses pre-votes,
so a server cut off from a working leader cannot disrupt it. Timeouts and resignations with no
cause are limited by --max-disruptive-election-triggers. quorum.py lists the actions of both
modes in their specification's Next order.
"""

from __future__ import annotations

from kmc.model.core import NONE, Backend, Bool, Domain, Effect, Int, StateView, action
from kmc.model.effects import Flat, merge, nested, when
from kmc.model.quorum_state import (
    BEGIN_QUORUM, CANDIDATE, DEAD, FENCED_LEADER_EPOCH, FOLLOWER, INVALID_REQUEST, LEADER, NIL_ERROR, PROSPECTIVE, REQUEST_VOTE,
    RESIGNED, SERVER, UNATTACHED, VOTE_RESPONSE, Kind, Transition,
)
from kmc.model.quorum_liveness996 import QuorumPreVoteLiveness


def slots(kind: Kind) -> Domain:
    """The slot parameter of an action that takes a message of this kind."""
    return Domain(lambda m: range(m.capacity[kind.name]), lambda k: f"#{k}")


def two(a: int, b: int, *rest: int) -> bool:
    """A message's source and destination differ."""
    return a != b


CONNECTED = Domain(lambda m: range(2 ** len(m.pairs)), lambda mask: f"{{{mask:b}}}")


class QuorumPreVote(QuorumPreVoteLiveness):
    """kip996's own actions."""

    # -- helpers -----------------------------------------------------------------------------

    def under_disruption_limit(self, s: StateView) -> Bool:
        """AUX_UnderDisruptionLimit."""
        return s.disruptions < self.settings["max_disruptive_election_triggers"]

    def disrupted(self, s: StateView, X: Backend, disruptive: Bool) -> Flat:
        """AUX_IncTimeoutCtrs(disruptive) (prevote_ctr only moves when liveness is tested)."""
        return {("disruptions",): X.ite(disruptive, s.disruptions + 1, s.disruptions)}

    def fetch_can_timeout(self, s: StateView, X: Backend, a: int) -> Bool:
        """FetchCanTimeout(a): the last fetch from the leader failed, or the pending fetch or
        its response is lost."""
        failed = X.and_(s.lfr[a] == 1, s.lfr_error[a] != NIL_ERROR, s.lfr_peer[a] == s.leader[a])
        pending = [s.pf_epoch[a], s.pf_offset[a], s.pf_last_epoch[a], s.pf_observer[a]]

        def lost(d: int) -> Bool:
            request = X.any([X.all([s.fq[a][d][k] == 1, *[x == y for x, y in zip(
                [s.fq_epoch[a][d][k], s.fq_offset[a][d][k], s.fq_last_epoch[a][d][k], s.fq_observer[a][d][k]],
                pending)]]) for k in range(self.capacity["fq"])])
            response = X.any([X.all([s.fs[d][a][k] != 0, *[x == y for x, y in zip(
                [s.fs_corr_epoch[d][a][k], s.fs_corr_offset[d][a][k], s.fs_corr_last_epoch[d][a][k],
                 s.fs_corr_observer[d][a][k]], pending)]]) for k in range(self.capacity["fs"])])
            return X.and_(s.pf_dest[a] == d, X.not_(request), X.not_(response))

        return X.or_(failed, X.and_(s.pf[a] == 1, X.or_(*[lost(d) for d in self.S if d != a])))

    def inflight_votes(self, s: StateView, X: Backend, a: int, pre_vote: int) -> Bool:
        """HasInflightVoteReq(a, RequestVoteRequest, pre_vote) \\/ HasInflightVoteRes(a, ...)."""
        out = []
        for b in self.S:
            if b != a:
                out += [X.and_(s.rvq[a][b][k] == 1, s.rvq_pre_vote[a][b][k] == pre_vote)
                        for k in range(self.capacity["rvq"])]
                out += [X.and_(s.rvs[b][a][k] == 1, s.rvs_pre_vote[b][a][k] == pre_vote)
                        for k in range(self.capacity["rvs"])]
        return X.or_(*out)

    def send_votes(self, s: StateView, X: Backend, a: int, epoch: Int, pre_vote: int, cond: Bool | bool = True) -> Flat:
        """SendAll of a RequestVote (pre_vote or not) to every other member of a's configuration."""
        out: Flat = {}
        msg = [1, epoch, self.last_epoch(s, X, a), s.log_len[a], pre_vote]
        for b in self.S:
            if b != a:
                out.update(self.send(s, X, REQUEST_VOTE, a, b, msg, X.and_(cond, s.cfg_members[a][b] == 1)))
        return out

    def prospective(self, s: StateView, X: Backend, a: int, disruptive: Bool) -> Effect:
        """A voter's timeout: Prospective in its epoch, pre-votes asked for."""
        return nested(merge(self.apply_state(a, self.to_prospective(s, X, a, s.epoch[a])), self.reset_fetch_state(a),
                            self.send_votes(s, X, a, s.epoch[a], 1), self.disrupted(s, X, disruptive)))

    # -- network ----------------------------------------------------------------------------

    @action(name="change_network_connectivity", connected=CONNECTED)
    def change_connectivity(self, s: StateView, X: Backend, mask: int) -> Bool:
        """ChangeNetworkConnectivity (kip996): exactly the pairs in `connected` are connected,
        none of them with a dead server, and with --test-liveness some voter can still win an
        election (at most --max-connectivity-changes times)."""
        alive = X.all([X.and_(s.state[a] != DEAD, s.state[b] != DEAD)
                       for i, (a, b) in enumerate(self.pairs) if mask >> i & 1])
        progress = [self.elections_can_progress(s, X, [mask >> i & 1 == 1 for i in range(len(self.pairs))])] \
            if self.test_liveness else []
        return X.and_(s.connectivity_changes < self.settings["max_connectivity_changes"], alive, *progress)

    @change_connectivity.effect
    def _(self, s: StateView, X: Backend, mask: int) -> Effect:
        out: Flat = {("connectivity_changes",): s.connectivity_changes + 1}
        for i, (a, b) in enumerate(self.pairs):
            out[("connected", i)] = mask >> i & 1
            if not mask >> i & 1:
                out.update(self.drop_pair(s, X, a, b))
        return nested(out)

    # -- server actions ------------------------------------------------------------------------

    def should_resign(self, s: StateView, X: Backend, a: int) -> Bool:
        """ShouldResign(a): fewer members it hears from than a majority needs."""
        members = s.cfg_members[a]
        peers = X.count([X.and_(members[t] == 1, self.connected(s, a, t), X.or_(
            X.and_(self.is_voter(s, X, t), s.epoch[a] >= s.epoch[t]), self.is_observer(s, X, t)))
            for t in self.S if t != a])
        size = self.card(X, members)
        # peers < size \div 2 (a member), < size \div 2 + 1 (not one)
        return X.ite(members[a] == 1, 2 * peers + 2 <= size, 2 * peers <= size)

    @action(name="check_quorum_resign", server=SERVER)
    def check_quorum_resign_prevote(self, s: StateView, X: Backend, a: int) -> Bool:
        """CheckQuorumResign (kip996): a leader that hears from too few members resigns; so
        may any leader, --max-disruptive-election-triggers times."""
        return X.and_(s.state[a] == LEADER, X.or_(self.should_resign(s, X, a), self.under_disruption_limit(s)))

    @check_quorum_resign_prevote.effect
    def _(self, s: StateView, X: Backend, a: int) -> Effect:
        should = self.should_resign(s, X, a)
        return nested(merge(self.apply_state(a, self.to_resigned(s, X, a)), self.fail_pending_writes(s, X, a),
                            self.reset_end_offsets(a, [m == 1 for m in s.cfg_members[a]], s, X),
                            self.disrupted(s, X, X.not_(should))))

    @action(server=SERVER)
    def voter_fetch_timeout(self, s: StateView, X: Backend, a: int) -> Bool:
        """VoterFetchTimeout: a follower's fetch times out (its leader failed it or went
        silent; else at most --max-disruptive-election-triggers times): it becomes Prospective
        and asks for pre-votes."""
        return X.and_(self.is_voter(s, X, a), s.state[a] == FOLLOWER,
                      X.or_(self.fetch_can_timeout(s, X, a), self.under_disruption_limit(s)))

    @voter_fetch_timeout.effect
    def _(self, s: StateView, X: Backend, a: int) -> Effect:
        return self.prospective(s, X, a, X.not_(self.fetch_can_timeout(s, X, a)))

    def causal_election_timeout(self, s: StateView, X: Backend, a: int) -> Bool:
        """CausalElectionTimeout(a): a candidate short of votes with none in flight, or an
        unattached voter."""
        short = 2 * X.count([v == 1 for v in s.votes_recv[a]]) <= self.card(X, s.cfg_members[a])
        not_enough = X.and_(X.not_(self.inflight_votes(s, X, a, 0)), short, s.state[a] != LEADER)
        return X.or_(X.and_(s.state[a] == CANDIDATE, not_enough), s.state[a] == UNATTACHED)

    @action(server=SERVER)
    def voter_election_timeout(self, s: StateView, X: Backend, a: int) -> Bool:
        """VoterElectionTimeout: an unattached voter, or a candidate short of votes (else at
        most --max-disruptive-election-triggers times), becomes Prospective."""
        eventual = X.or_(self.causal_election_timeout(s, X, a), X.and_(
            self.under_disruption_limit(s), X.or_(s.state[a] == CANDIDATE, s.state[a] == UNATTACHED)))
        return X.and_(self.is_voter(s, X, a), eventual)

    @voter_election_timeout.effect
    def _(self, s: StateView, X: Backend, a: int) -> Effect:
        return self.prospective(s, X, a, X.not_(self.causal_election_timeout(s, X, a)))

    @action(server=SERVER)
    def resigned_election_timeout(self, s: StateView, X: Backend, a: int) -> Bool:
        """ResignedElectionTimeout: a resigned leader times out to Unattached in the next epoch."""
        return s.state[a] == RESIGNED

    @resigned_election_timeout.effect
    def _(self, s: StateView, X: Backend, a: int) -> Effect:
        return nested(self.apply_state(a, self.to_unattached_with_leader(s, X, a, s.epoch[a] + 1, NONE)))

    @action(server=SERVER)
    def conclude_pre_vote(self, s: StateView, X: Backend, a: int) -> Bool:
        """ConcludePreVote: a prospective voter with a majority of pre-votes becomes a candidate
        of the next epoch and asks for votes (while its epoch is below --max-epoch); with no
        pre-vote left to count and no majority, it follows the leader it knows, or is
        Unattached."""
        return X.and_(self.pre_vote_concludes(s, X, a), s.epoch[a] < self.max_epoch)

    def pre_vote_concludes(self, s: StateView, X: Backend, a: int) -> Bool:
        """ConcludePreVote's guard but WithinEpochLimit: a prospective voter with a majority of
        pre-votes or none left to count."""
        quorum = self.is_quorum(X, [v == 1 for v in s.votes_recv[a]], s.cfg_members[a])
        return X.and_(self.is_voter(s, X, a), s.state[a] == PROSPECTIVE,
                      X.or_(X.not_(self.inflight_votes(s, X, a, 1)), quorum))

    @conclude_pre_vote.effect
    def _(self, s: StateView, X: Backend, a: int) -> Effect:
        quorum = self.is_quorum(X, [v == 1 for v in s.votes_recv[a]], s.cfg_members[a])
        t = self.pick(X, s.leader[a] != NONE, self.to_follower(s, X, a, s.leader[a], s.epoch[a]),
                      self.to_unattached_with_leader(s, X, a, s.epoch[a], s.leader[a]))
        t = self.pick(X, quorum, self.to_candidate(s, X, a), t)
        return nested(merge(self.apply_state(a, t), self.send_votes(s, X, a, s.epoch[a] + 1, 0, quorum)))

    @action(server=SERVER, peer=SERVER, where=two)
    def resend_begin_quorum_epoch_request(self, s: StateView, X: Backend, a: int, peer: int) -> Bool:
        """ResendBeginQuorumEpochRequest (kip996): a leader of an epoch above 1 sends its
        BeginQuorumEpoch again to a connected member that is behind and never got it (kip853,
        with --test-liveness: no request to it ever in flight or processed, NeedsResend)."""
        behind = X.or_(s.epoch[a] > s.epoch[peer], X.and_(s.epoch[a] == s.epoch[peer], s.state[peer] != FOLLOWER))
        if not self.kip996:
            never = X.and_(s.bqe[a][peer][0] == 0, s.bqe_gone[a][peer] == 0)
            return X.and_(s.state[a] == LEADER, s.cfg_members[a][peer] == 1, never, self.connected(s, a, peer), behind)
        e_hi = self.schema.by_name["epoch"].hi
        in_flight = X.any([X.and_(s.bqe[a][peer][k] == 1, s.bqe_epoch[a][peer][k] == s.epoch[a])
                           for k in range(self.capacity["bqe"])])
        processed = X.any([X.and_(s.epoch[a] == e, s.bqe_done[a][peer][e] == 1) for e in range(e_hi + 1)])
        return X.and_(s.state[a] == LEADER, s.cfg_members[a][peer] == 1, s.epoch[a] > 1, X.not_(in_flight),
                      X.not_(processed), self.connected(s, a, peer), behind)

    @resend_begin_quorum_epoch_request.effect
    def _(self, s: StateView, X: Backend, a: int, peer: int) -> Effect:
        return nested(self.send(s, X, BEGIN_QUORUM, a, peer, [1, s.epoch[a], 1 if self.kip996 else 0]))

    # -- elections: messages ---------------------------------------------------------------------

    def pre_vote_request(self, s: StateView, X: Backend, a: int, peer: int,
                         k: int) -> tuple[Int, Int, Int, Bool, Transition]:
        """HandleVoteRequest's LET (kip996): (error, the request's epoch, pre_vote, grant_vote,
        the final state)."""
        _, epoch, last_epoch, last_offset, pre_vote = self.slot(s, REQUEST_VOTE, peer, a, k)
        error = X.ite(last_epoch > epoch, INVALID_REQUEST, X.ite(epoch < s.epoch[a], FENCED_LEADER_EPOCH, NIL_ERROR))
        state0 = self.pick(X, epoch > s.epoch[a], self.to_unattached_with_leader(s, X, a, epoch, NONE),
                           self.current(s, a))
        mine = self.last_epoch(s, X, a)
        log_ok = X.or_(last_epoch > mine, X.and_(last_epoch == mine, last_offset >= s.log_len[a]))
        # --no-follower-rejects-pre-vote: a follower grants whether it has fetched or not
        fetched = [s.fetch_success[a] == 0] if self.settings["follower_rejects_pre_vote"] else []
        grant_pre = X.and_(log_ok, X.or_(*[state0[0] == x for x in (UNATTACHED, PROSPECTIVE, CANDIDATE, RESIGNED)],
                                         X.and_(state0[0] == FOLLOWER, *fetched)))
        grant_vote = X.and_(X.or_(state0[0] == UNATTACHED, state0[0] == PROSPECTIVE),
                            X.ite(state0[4] != NONE, state0[4] == peer, X.and_(state0[2] == NONE, log_ok)))
        grant = X.ite(pre_vote == 1, grant_pre, grant_vote)
        final = self.pick(X, X.and_(grant, state0[0] == PROSPECTIVE),
                          self.add_vote(X, epoch, state0, peer, PROSPECTIVE), state0)
        final = self.pick(X, X.and_(grant, state0[0] == UNATTACHED),
                          self.add_vote(X, epoch, state0, peer, UNATTACHED), final)
        final = self.pick(X, pre_vote == 1, state0, final)
        return error, epoch, pre_vote, grant, final

    @action(name="handle_vote_request", server=SERVER, peer=SERVER, slot=slots(REQUEST_VOTE), where=two)
    def handle_pre_vote_request(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Bool:
        """HandleVoteRequest (kip996): a server answers a pre-vote or a vote request. A pre-vote
        is granted to an up-to-date log unless the server leads or follows a leader it has
        fetched from; a vote as in kip853, by an unattached or prospective server."""
        return X.and_(s.rvq[peer][a][k] == 1, s.state[a] != DEAD, self.connected(s, peer, a))

    @handle_pre_vote_request.effect
    def _(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Effect:
        error, epoch, pre_vote, grant, final = self.pre_vote_request(s, X, a, peer, k)
        ok = error == NIL_ERROR
        applied = self.pick(X, ok, final, self.current(s, a))
        fail = merge(self.reset_fetch_state(a), self.fail_pending_writes(s, X, a))
        ok_reply = [1, epoch, final[2], X.ite(grant, 1, 0), NIL_ERROR, pre_vote]
        error_reply = [1, s.epoch[a], s.leader[a], 0, error, pre_vote]
        reply = [X.ite(ok, o, e) for o, e in zip(ok_reply, error_reply)]
        return nested(merge(self.apply_state(a, applied), when(s, X, X.and_(ok, final[0] != s.state[a]), fail),
                            self.discard(s, X, REQUEST_VOTE, peer, a, k),
                            self.send(s, X, VOTE_RESPONSE, a, peer, reply)))

    @action(name="handle_vote_response", server=SERVER, peer=SERVER, slot=slots(VOTE_RESPONSE), where=two)
    def handle_pre_vote_response(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Bool:
        """HandleVoteResponse (kip996): a voter takes a (pre-)vote response; a prospective
        counts a granted pre-vote, a candidate a granted vote; a leader that learns of a higher
        epoch loses its leadership."""
        return X.and_(s.rvs[peer][a][k] == 1, self.is_voter(s, X, a))

    @handle_pre_vote_response.effect
    def _(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Effect:
        _, epoch, leader, granted, error, pre_vote = self.slot(s, VOTE_RESPONSE, peer, a, k)
        state0, handled = self.common_response(s, X, a, leader, epoch, error)
        count = X.and_(X.not_(handled), granted == 1, X.or_(X.and_(state0[0] == PROSPECTIVE, pre_vote == 1),
                                                            X.and_(state0[0] == CANDIDATE, pre_vote == 0)))
        votes = [X.ite(count, 1, v) if t == peer else v for t, v in enumerate(state0[3])]
        lose = X.and_(s.state[a] == LEADER, state0[0] != LEADER)
        loss = merge(self.fail_pending_writes(s, X, a), self.reset_end_offsets(a, [m == 1 for m in s.cfg_members[a]],
                                                                               s, X))
        refused = X.and_(pre_vote == 1, granted == 0)
        return nested(merge(self.apply_state(a, (state0[0], state0[1], state0[2], votes, state0[4])),
                            when(s, X, lose, loss), self.discard(s, X, VOTE_RESPONSE, peer, a, k),
                            self.pre_vote_refused(s, X, peer, a, refused, leader, epoch)))
