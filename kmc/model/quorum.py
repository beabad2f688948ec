"""KRaft's Raft quorum (the controllers' metadata log), at the level of the public TLA+
specifications Vanlightly/kafka-tlaplus kraft/kip_853 (KIP-853, dynamic voters; mode kip853)
and kraft/kip_996 (KIP-996 pre-vote on top of it; mode kip996, its own actions in
quorum_prevote.py).

KRaft is Raft with pull replication: followers fetch from the leader, which answers with the
next entry or a diverging epoch to truncate to; a candidate asks the voters for their votes
and, elected, appends a LeaderChangeRecord and tells the voters with BeginQuorumEpoch; the
high watermark moves over a majority of the voters' fetched offsets. Servers restart (keeping
their state) or crash (losing it); the network loses connectivity between pairs.

Each action is one of the specification's actions, under its name in snake_case, in the order
of Next; the message an action takes is its `slot` parameter (which of the messages of that
kind from `peer` to `server`). The state and the shared operators are in quorum_state.py, the
way states print in quorum_view.py; docs/quorum.md maps every field, action and invariant to
the specification and gives the parity with TLC. Not modelled yet: StartNewServer,
AcceptAddVoterRequest, AcceptRemoveVoterRequest (their limits only take 0) and liveness
(TestLiveness = TRUE, kip853's ResendBeginQuorumEpochRequest).
"""

from __future__ import annotations

from typing import Sequence

from kmc.model.core import (
    NONE, Action, Backend, Bool, Domain, Effect, Int, Lane, Lanes, Message, State, StateView, action,
)
from kmc.model.effects import Flat, merge, nested, when
from kmc.model.quorum_state import (
    APPEND, BEGIN_QUORUM, CANDIDATE, DEAD, DIVERGING, FETCH, FETCH_RESPONSE, FENCED_LEADER_EPOCH, FOLLOWER,
    LEADER, LEADER_CHANGE, NIL_ERROR, NIL_ROLE, NOT_LEADER, NOT_OK, OBSERVER, OK, PROSPECTIVE, REQUEST_VOTE,
    RESIGNED, SERVER, UNATTACHED, UNKNOWN_LEADER, VALUE, VOTE_RESPONSE, VOTED, VOTER, Transition,
)
from kmc.model.quorum_prevote import QuorumPreVote, slots, two
from kmc.model.quorum_view import describe_state


DISCONNECTED = Domain(lambda m: range(2 ** len(m.pairs)), lambda mask: f"{{{mask:b}}}")

ASKS_VOTES = ("send_request_vote", "voter_fetch_timeout", "voter_election_timeout", "conclude_pre_vote")  # (pre-)votes
ANSWERS_FETCH = ("reject_fetch_request", "diverging_fetch_request", "accept_fetch_request_from_voter",
                 "accept_fetch_request_from_observer", "accept_fetch_request")  # a leader's answers to a Fetch


class Quorum(QuorumPreVote):
    name = "quorum"
    lanes = Lanes(
        Lane("servers", SERVER), Lane("network"),
        local={"change_network_connectivity": "network", "restart_with_state": "server", "crash_lose_state": "server",
               "send_request_vote": "server", "become_leader": "server", "client_request": "server",
               "handle_client_request": "server", "check_quorum_resign": "server", "observer_fetch_timeout": "server",
               "voter_fetch_timeout": "server", "voter_election_timeout": "server",
               "resigned_election_timeout": "server", "conclude_pre_vote": "server"},
        messages=[
            Message("VoteRequest", "server", "servers", sent_by=ASKS_VOTES, received_by="handle_vote_request",
                    received_as=("peer", "server")),
            Message("VoteResponse", "server", "peer", sent_by="handle_vote_request", received_by="handle_vote_response",
                    received_as=("peer", "server")),
            Message("BeginQuorumEpoch", "server", "servers", sent_by="become_leader",
                    received_by="accept_begin_quorum_request", received_as=("peer", "server")),
            Message("BeginQuorumEpoch", "server", "peer", sent_by="resend_begin_quorum_epoch_request"),
            Message("Fetch", "server", "peer", sent_by="send_fetch_request", received_as=("peer", "server"),
                    received_by=ANSWERS_FETCH),
            Message("FetchResponse", "server", "peer", sent_by=ANSWERS_FETCH, received_by="handle_fetch_response",
                    received_as=("peer", "server")),
        ],
    )

    def actions(self) -> Sequence[Action]:
        """Next, in the specification's order of disjuncts."""
        if self.kip996:
            return [self.change_connectivity, self.restart_with_state, self.crash_lose_state, self.voter_fetch_timeout,
                    self.voter_election_timeout, self.resigned_election_timeout, self.conclude_pre_vote,
                    self.become_leader, self.handle_client_request, self.check_quorum_resign_prevote,
                    self.handle_pre_vote_request, self.handle_pre_vote_response, self.accept_begin_quorum_request,
                    self.send_fetch_request, self.handle_fetch_response, self.resend_begin_quorum_epoch_request,
                    self.reject_fetch_request,
                    self.diverging_fetch_request, self.accept_fetch_request]
        return [self.change_network_connectivity, self.restart_with_state, self.crash_lose_state,
                self.send_request_vote, self.become_leader, self.client_request, self.check_quorum_resign,
                self.observer_fetch_timeout, self.handle_vote_request, self.handle_vote_response,
                self.accept_begin_quorum_request, self.send_fetch_request, self.handle_fetch_response,
                self.reject_fetch_request, self.diverging_fetch_request, self.accept_fetch_request_from_voter,
                self.accept_fetch_request_from_observer]

    def describe(self, state: State) -> dict[str, str]:
        return describe_state(self, state)

    # -- network ----------------------------------------------------------------------------

    @action(disconnected=DISCONNECTED)
    def change_network_connectivity(self, s: StateView, X: Backend, mask: int) -> Bool:
        """ChangeNetworkConnectivity: the pairs in `disconnected` lose connectivity (the
        others have it), at most --max-disconnected-pairs of them and always every pair of a
        dead server (at most --max-connectivity-changes times)."""
        chosen = [mask >> i & 1 for i in range(len(self.pairs))]
        dead = [s.state[a] == DEAD for a in self.S]
        covers = X.all([X.implies(dead[a], X.any([chosen[i] == 1 for i, p in enumerate(self.pairs) if a in p]))
                        for a in self.S])
        all_dead_pairs = X.all([X.implies(X.or_(dead[p[0]], dead[p[1]]), chosen[i] == 1)
                                for i, p in enumerate(self.pairs)])
        now = X.count([c == 0 for c in s.connected])
        size = sum(chosen)
        limit = self.settings["max_disconnected_pairs"]
        bounded = X.ite(now > limit, size < now, size <= limit)
        changes = X.or_(size != now, X.any([s.connected[i] == 1 for i in range(len(self.pairs)) if chosen[i]]))
        return X.and_(s.connectivity_changes < self.settings["max_connectivity_changes"], covers, all_dead_pairs,
                      bounded, changes)

    @change_network_connectivity.effect
    def _(self, s: StateView, X: Backend, mask: int) -> Effect:
        out: Flat = {("connectivity_changes",): s.connectivity_changes + 1}
        for i, (a, b) in enumerate(self.pairs):
            cut = mask >> i & 1
            out[("connected", i)] = 1 - cut
            if cut:
                out.update(self.drop_pair(s, X, a, b))
        return nested(out)

    # -- single server actions ----------------------------------------------------------------

    def restart_transition(self, s: StateView, X: Backend, a: int) -> Transition:
        """RestartWithState's new_state: a leader resigns (kip996: a prospective, or a leader
        that is not a voter, boots Unattached keeping its vote)."""
        if self.kip996:
            boot = (UNATTACHED, s.epoch[a], NONE, [0] * len(self.S), s.voted_for[a])
            voter = self.is_voter(s, X, a)
            out = self.pick(X, s.state[a] == PROSPECTIVE, boot, self.current(s, a))
            out = self.pick(X, X.and_(s.state[a] == LEADER, self.is_observer(s, X, a)), boot, out)
            return self.pick(X, X.and_(s.state[a] == LEADER, voter), self.to_resigned(s, X, a), out)
        leader_voter = X.and_(s.state[a] == LEADER, s.role[a] == VOTER)
        leader_observer = X.and_(s.state[a] == LEADER, s.role[a] == OBSERVER)
        out = self.pick(X, leader_observer, self.to_unattached(s, X, a, s.epoch[a], s.role[a]), self.current(s, a))
        return self.pick(X, leader_voter, self.to_resigned(s, X, a), out)

    @action(server=SERVER)
    def restart_with_state(self, s: StateView, X: Backend, a: int) -> Bool:
        """RestartWithState: the server restarts from its stable storage (a leader resigns);
        its high watermark, fetch state and follower offsets start over and its pending
        writes fail (at most --max-restarts times)."""
        t = self.restart_transition(s, X, a)
        limit = X.and_(s.restarts < self.settings["max_restarts"], s.state[a] != DEAD)
        if self.kip996:
            return limit
        # kip853: the epoch and the vote are UNCHANGED in the specification as well as set by ApplyState
        return X.and_(limit, t[1] == s.epoch[a], t[4] == s.voted_for[a])

    @restart_with_state.effect
    def _(self, s: StateView, X: Backend, a: int) -> Effect:
        return nested(merge(self.apply_state(a, self.restart_transition(s, X, a)), {("hwm", a): 0},
                            self.reset_fetch_state(a), self.reset_end_offsets(a, None, s, X),
                            self.fail_pending_writes(s, X, a), {("restarts",): s.restarts + 1}))

    @action(server=SERVER)
    def crash_lose_state(self, s: StateView, X: Backend, a: int) -> Bool:
        """CrashLoseState: a voter crashes and loses its disk for good; its network pairs go
        down, which --max-disconnected-pairs must allow in kip853 (at most --max-crashes times)."""
        if self.kip996:  # MaxPermCrashes; DisconnectServer has no limit
            return X.and_(s.crashes < self.settings["max_crashes"], self.is_voter(s, X, a))
        down = X.count([X.or_(s.connected[i] == 0, a in p) for i, p in enumerate(self.pairs)])
        return X.and_(s.crashes < self.settings["max_crashes"], s.role[a] == VOTER,
                      down <= self.settings["max_disconnected_pairs"])

    @crash_lose_state.effect
    def _(self, s: StateView, X: Backend, a: int) -> Effect:
        out: Flat = {("state", a): DEAD, ("cfg_id", a): 0, ("cfg_committed", a): 0, ("role", a): NIL_ROLE,
                     ("epoch", a): 0, ("leader", a): NONE, ("voted_for", a): NONE, ("hwm", a): 0,
                     ("crashes",): s.crashes + 1}
        for t in self.S:
            out[("cfg_members", a, t)] = 0
            out[("votes_recv", a, t)] = 0
            out[("feo", a, t)] = NONE
        for i, p in enumerate(self.pairs):
            if a in p:
                out[("connected", i)] = 0
                out.update(self.drop_pair(s, X, p[0], p[1]))
        return nested(merge(out, self.reset_fetch_state(a), self.truncated(s, X, a, 0),
                            self.fail_pending_writes(s, X, a)))

    # -- elections -------------------------------------------------------------------------------

    @action(server=SERVER)
    def send_request_vote(self, s: StateView, X: Backend, a: int) -> Bool:
        """SendRequestVote: a voter that is not the leader times out (fetch or election
        timeout), becomes a candidate in the next epoch and asks the other members for their
        votes (while its epoch is below --max-epoch)."""
        timeout = X.or_(*[s.state[a] == x for x in (FOLLOWER, CANDIDATE, UNATTACHED, VOTED, RESIGNED)])
        return X.and_(s.role[a] == VOTER, s.state[a] != LEADER, s.cfg_members[a][a] == 1, timeout,
                      s.epoch[a] < self.max_epoch)

    @send_request_vote.effect
    def _(self, s: StateView, X: Backend, a: int) -> Effect:
        out = merge(self.apply_state(a, self.to_candidate(s, X, a)), self.reset_fetch_state(a))
        msg = [1, s.epoch[a] + 1, self.last_epoch(s, X, a), s.log_len[a], 0]
        for b in self.S:
            if b != a:
                out.update(self.send(s, X, REQUEST_VOTE, a, b, msg, s.cfg_members[a][b] == 1))
        return nested(out)

    @action(server=SERVER)
    def become_leader(self, s: StateView, X: Backend, a: int) -> Bool:
        """BecomeLeader: a candidate with the votes of a majority of its configuration leads,
        appends a LeaderChangeRecord and sends BeginQuorumEpoch to the other members."""
        votes = [x == 1 for x in s.votes_recv[a]]
        single = self.card(X, s.cfg_members[a]) == 1
        # hwm is UNCHANGED as well as set for a single member
        return X.and_(s.state[a] == CANDIDATE, self.is_quorum(X, votes, s.cfg_members[a]),
                      X.implies(single, s.log_len[a] + 1 == s.hwm[a]))

    @become_leader.effect
    def _(self, s: StateView, X: Backend, a: int) -> Effect:
        out = merge(self.apply_state(a, self.to_leader(s, X, a)),
                    self.appended(a, s.log_len[a], X, LEADER_CHANGE, s.epoch[a], 0, s),
                    self.reset_end_offsets(a, [m == 1 for m in s.cfg_members[a]], s, X), self.reset_fetch_state(a))
        for b in self.S:
            if b != a:
                out.update(self.send(s, X, BEGIN_QUORUM, a, b, [1, s.epoch[a], 0], s.cfg_members[a][b] == 1))
        return nested(out)

    # -- leader actions --------------------------------------------------------------------------

    @action(server=SERVER, value=VALUE)
    def client_request(self, s: StateView, X: Backend, a: int, v: int) -> Bool:
        """ClientRequest: a client writes a value to the leader, which appends it (each value
        once; at most --max-values-per-epoch per epoch)."""
        this_epoch = X.count([X.and_(self.has(s, a, o), s.log_epoch[a][o] == s.epoch[a], s.log_cmd[a][o] == APPEND)
                              for o in self.O])
        return X.and_(s.state[a] == LEADER, s.sent[v] == 0, this_epoch < self.values_per_epoch)

    @client_request.effect
    def _(self, s: StateView, X: Backend, a: int, v: int) -> Effect:
        single = self.card(X, s.cfg_members[a]) == 1
        return nested(merge(self.appended(a, s.log_len[a], X, APPEND, s.epoch[a], v, s),
                            {("hwm", a): X.ite(single, s.log_len[a] + 1, s.hwm[a]), ("pending_ack", a, v): 1,
                             ("sent", v): 1}))

    @action(server=SERVER, value=VALUE)
    def handle_client_request(self, s: StateView, X: Backend, a: int, v: int) -> Bool:
        """HandleClientRequest (kip996): ClientRequest under its kip996 name."""
        return self.client_request.guard(s, X, a, v)

    @handle_client_request.effect
    def _(self, s: StateView, X: Backend, a: int, v: int) -> Effect:
        return dict(self.client_request.effect(s, X, a, v))

    @action(server=SERVER)
    def check_quorum_resign(self, s: StateView, X: Backend, a: int) -> Bool:
        """CheckQuorumResign: a leader that hears from too few followers resigns (any time
        when liveness is not tested)."""
        return s.state[a] == LEADER

    @check_quorum_resign.effect
    def _(self, s: StateView, X: Backend, a: int) -> Effect:
        t = self.pick(X, s.role[a] == VOTER, self.to_resigned(s, X, a),
                      self.to_unattached(s, X, a, s.epoch[a], OBSERVER))
        return nested(self.apply_state(a, t))

    # -- follower actions --------------------------------------------------------------------------

    @action(server=SERVER)
    def observer_fetch_timeout(self, s: StateView, X: Backend, a: int) -> Bool:
        """ObserverFetchTimeout: an observer's fetch times out; it forgets the leader."""
        return s.role[a] == OBSERVER

    @observer_fetch_timeout.effect
    def _(self, s: StateView, X: Backend, a: int) -> Effect:
        return nested(merge(self.apply_state(a, self.to_unattached(s, X, a, s.epoch[a], s.role[a])),
                            self.reset_fetch_state(a)))

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
                            self.discard(s, X, BEGIN_QUORUM, peer, a, k), done))

    @action(server=SERVER, peer=SERVER, where=two)
    def send_fetch_request(self, s: StateView, X: Backend, a: int, peer: int) -> Bool:
        """SendFetchRequest: a follower fetches from its leader at the end of its log (kip853:
        an observer that knows no leader asks a voter that knows one; kip996: an unattached
        voter asks any server)."""
        follower = X.and_(s.leader[a] == peer, s.state[a] == FOLLOWER)
        if self.kip996:  # ShouldSendFetch
            unattached = X.and_(self.is_voter(s, X, a), s.state[a] == UNATTACHED)
            observer = X.and_(self.is_observer(s, X, a), s.state[a] == FOLLOWER, self.fetch_can_timeout(s, X, a))
            return X.or_(X.and_(s.pf[a] == 0, X.or_(follower, unattached)), observer)
        lost = X.and_(s.role[a] == OBSERVER, X.or_(s.state[a] == UNATTACHED, s.state[a] == VOTED),
                      self.connected(s, a, peer), s.role[peer] == VOTER, s.leader[peer] != NONE)
        return X.and_(s.pf[a] == 0, X.or_(follower, lost))

    @send_fetch_request.effect
    def _(self, s: StateView, X: Backend, a: int, peer: int) -> Effect:
        observer = X.ite(s.role[a] == OBSERVER, 1, 0)
        last = self.last_epoch(s, X, a)
        out: Flat = {("pf", a): 1, ("pf_dest", a): peer, ("pf_epoch", a): s.epoch[a],
                     ("pf_offset", a): s.log_len[a] + 1, ("pf_last_epoch", a): last, ("pf_observer", a): observer}
        return nested(merge(out, self.send(s, X, FETCH, a, peer, [1, s.epoch[a], s.log_len[a] + 1, last, observer])))

    @action(server=SERVER, peer=SERVER, slot=slots(FETCH_RESPONSE), where=two)
    def handle_fetch_response(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Bool:
        """HandleFetchResponse: a server takes the response to its pending fetch: it appends
        the entry, truncates to the diverging epoch, or learns of a new epoch or leader."""
        (result, error, leader, epoch, hwm, de, dend, ecmd, eepoch, evalue, cepoch, coffset, clast,
         cobserver) = self.slot(s, FETCH_RESPONSE, peer, a, k)
        pending = X.and_(s.pf[a] == 1, s.pf_dest[a] == peer, s.pf_epoch[a] == cepoch, s.pf_offset[a] == coffset,
                         s.pf_last_epoch[a] == clast, s.pf_observer[a] == cobserver)
        return X.and_(result != 0, s.state[a] != DEAD, pending)

    def fetched_log(self, s: StateView, X: Backend, a: int, keep: Int, append: Bool,
                    entry: tuple[Int, Int, Int]) -> Flat:
        """HandleFetchResponse's new_log: the first `keep` entries, then the fetched entry when
        `append` (keep is then the whole log)."""
        out: Flat = {("log_len", a): X.ite(append, s.log_len[a] + 1, keep)}
        for o in self.O:
            here = X.and_(append, s.log_len[a] == o)
            for name, value in zip(("log_cmd", "log_epoch", "log_value"), entry):
                old = getattr(s, name)[a][o]
                out[(name, a, o)] = X.ite(here, value, X.ite(o < keep, old, 0))
        return out

    @handle_fetch_response.effect
    def _(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Effect:
        (result, error, leader, epoch, hwm, de, dend, ecmd, eepoch, evalue, *_) = self.slot(s, FETCH_RESPONSE,
                                                                                           peer, a, k)
        new_state, handled = self.common_response(s, X, a, leader, epoch, error)
        append = X.and_(result == OK, ecmd != 0)
        keep = X.ite(result == DIVERGING, self.highest_common_offset(s, X, a, dend - 1, de), s.log_len[a])
        new_log = self.fetched_log(s, X, a, keep, append, (ecmd, eepoch, evalue))
        # MaybeSwitchConfigurations with the InitClusterCommand the only configuration entry
        committed = X.ite(hwm >= 1, 1, 0)
        switch_cfg: Flat = {("cfg_id", a): 1, ("cfg_committed", a): committed}
        for t in self.S:
            switch_cfg[("cfg_members", a, t)] = 1 if t < self.settings["init_cluster_size"] else 0
        members = [t < self.settings["init_cluster_size"] for t in self.S]
        voter = self.is_voter(s, X, a) if self.kip996 else s.role[a] == VOTER
        observer = X.not_(voter) if self.kip996 else s.role[a] == OBSERVER
        role_flip_out = X.and_(voter, X.not_(members[a]))
        role_flip_in = X.and_(observer, members[a])
        flip = X.or_(role_flip_out, role_flip_in)
        switch: Flat = merge(
            switch_cfg, {("leader", a): new_state[2], ("epoch", a): new_state[1],
                         ("role", a): X.ite(role_flip_out, OBSERVER, X.ite(role_flip_in, VOTER, s.role[a])),
                         ("state", a): X.ite(flip, FOLLOWER, new_state[0])},
            {("votes_recv", a, t): X.ite(flip, 0, new_state[3][t]) for t in self.S},
            {("feo", a, t): X.ite(members[t], X.ite(s.feo[a][t] != NONE, s.feo[a][t], 0), NONE) for t in self.S},
            new_log, {("hwm", a): X.ite(result == OK, hwm, s.hwm[a])})
        apply = self.apply_state(a, new_state)
        # kip853 applies the fetched data only as a follower; kip996 whenever not handled
        apply_only = handled if self.kip996 else X.or_(handled, s.state[a] != FOLLOWER)
        body = when(s, X, apply_only, apply, switch)
        done: Flat = {("pf", a): 0, ("pf_dest", a): NONE, ("pf_epoch", a): 0, ("pf_offset", a): 0,
                      ("pf_last_epoch", a): 0, ("pf_observer", a): 0, ("lfr", a): 1, ("lfr_peer", a): peer,
                      ("lfr_error", a): error}
        if self.kip996:  # has_fetch_success
            done[("fetch_success", a)] = X.ite(error == NIL_ERROR, 1, s.fetch_success[a])
        return nested(merge(body, done, self.discard(s, X, FETCH_RESPONSE, peer, a, k)))

    # -- send/receive: the leader ------------------------------------------------------------------

    def fetch_request(self, s: StateView, a: int, peer: int, k: int) -> list[Int]:
        return self.slot(s, FETCH, peer, a, k)

    def fetch_error(self, s: StateView, X: Backend, a: int, epoch: Int) -> Int:
        return X.ite(s.state[a] != LEADER, NOT_LEADER,
                     X.ite(epoch < s.epoch[a], FENCED_LEADER_EPOCH,
                           X.ite(epoch > s.epoch[a], UNKNOWN_LEADER, NIL_ERROR)))

    def reply_fetch(self, s: StateView, X: Backend, a: int, peer: int, k: int, fields: Sequence[Int]) -> Flat:
        """Reply(m, response): the request in slot k goes, the response (with the request as
        its correlation) comes."""
        _, epoch, offset, last, observer = self.fetch_request(s, a, peer, k)
        msg = [*fields, epoch, offset, last, observer]
        return merge(self.discard(s, X, FETCH, peer, a, k), self.send(s, X, FETCH_RESPONSE, a, peer, msg))

    @action(server=SERVER, peer=SERVER, slot=slots(FETCH), where=two)
    def reject_fetch_request(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Bool:
        """RejectFetchRequest: a server that is not the leader, or not of the fetch's epoch,
        rejects it (NotLeader, FencedLeaderEpoch, UnknownLeader)."""
        _, epoch, *_ = self.fetch_request(s, a, peer, k)
        return X.and_(s.fq[peer][a][k] == 1, s.state[a] != DEAD, self.fetch_error(s, X, a, epoch) != NIL_ERROR,
                      self.connected(s, peer, a))

    @reject_fetch_request.effect
    def _(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Effect:
        _, epoch, *_ = self.fetch_request(s, a, peer, k)
        fields = [NOT_OK, self.fetch_error(s, X, a, epoch), s.leader[a], s.epoch[a], s.hwm[a], 0, 0, 0, 0, 0]
        return nested(self.reply_fetch(s, X, a, peer, k, fields))

    def equal_epoch_leader(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Bool:
        return X.and_(s.fq[peer][a][k] == 1, s.state[a] != DEAD, s.fq_epoch[peer][a][k] == s.epoch[a],
                      s.state[a] == LEADER, self.connected(s, peer, a))

    @action(server=SERVER, peer=SERVER, slot=slots(FETCH), where=two)
    def diverging_fetch_request(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Bool:
        """DivergingFetchRequest: the leader answers a fetch whose position is not on its log
        with the end offset of the highest epoch it has at or below the fetch's."""
        _, _, offset, last, _ = self.fetch_request(s, a, peer, k)
        return X.and_(self.equal_epoch_leader(s, X, a, peer, k),
                      X.not_(self.valid_fetch_position(s, X, a, offset, last)))

    @diverging_fetch_request.effect
    def _(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Effect:
        _, _, offset, last, _ = self.fetch_request(s, a, peer, k)
        end, at = self.end_offset_for_epoch(s, X, a, last)
        fields = [DIVERGING, NIL_ERROR, s.leader[a], s.epoch[a], s.hwm[a], at, end + 1, 0, 0, 0]
        return nested(self.reply_fetch(s, X, a, peer, k, fields))

    def entry_at(self, s: StateView, X: Backend, a: int, offset: Int) -> list[Int]:
        """entries: <<log[a][offset]>> (command, epoch, value), or no entry past the end."""
        out: list[Int] = [0, 0, 0]
        for o in self.O:
            here = X.and_(offset == o + 1, self.has(s, a, o))
            out = [X.ite(here, x, y) for x, y in zip((s.log_cmd[a][o], s.log_epoch[a][o], s.log_value[a][o]), out)]
        return out

    def new_high_watermark(self, s: StateView, X: Backend, a: int, end: Sequence[Int]) -> Int:
        """NewHighwaterMark(a, end): the highest offset a majority of the members has (a
        counts itself when a member), if it is of the current epoch; else the old one."""
        members = s.cfg_members[a]
        size = self.card(X, members)
        best: Int = 0
        for o in self.O:
            agree = X.count([X.and_(members[t] == 1, end[t] >= o + 1) if t != a else members[t] == 1
                             for t in self.S])
            best = X.ite(X.and_(o < s.log_len[a], 2 * agree > size), o + 1, best)
        epoch_at: Int = 0
        for o in self.O:
            epoch_at = X.ite(best == o + 1, s.log_epoch[a][o], epoch_at)
        return X.ite(X.and_(best > 0, epoch_at == s.epoch[a]), best, s.hwm[a])

    @action(server=SERVER, peer=SERVER, slot=slots(FETCH), where=two)
    def accept_fetch_request_from_voter(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Bool:
        """AcceptFetchRequestFromVoter: the leader answers a member's fetch with the next entry,
        records the member's end offset and advances the high watermark, acknowledging the
        values it commits."""
        _, _, offset, last, observer = self.fetch_request(s, a, peer, k)
        return X.and_(self.equal_epoch_leader(s, X, a, peer, k), s.cfg_members[a][peer] == 1, observer == 0,
                      self.valid_fetch_position(s, X, a, offset, last))

    @accept_fetch_request_from_voter.effect
    def _(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Effect:
        return self.voter_fetch(s, X, a, peer, k)

    @action(server=SERVER, peer=SERVER, slot=slots(FETCH), where=two)
    def accept_fetch_request(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Bool:
        """AcceptFetchRequest (kip996): the leader answers a member's fetch as
        AcceptFetchRequestFromVoter does (every member is a voter of its configuration)."""
        _, _, offset, last, _ = self.fetch_request(s, a, peer, k)
        return X.and_(self.equal_epoch_leader(s, X, a, peer, k), s.cfg_members[a][peer] == 1,
                      self.valid_fetch_position(s, X, a, offset, last))

    @accept_fetch_request.effect
    def _(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Effect:
        return self.voter_fetch(s, X, a, peer, k)

    def voter_fetch(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Effect:
        """HandleVoterFetch: the member's end offset, the HWM, the acknowledgements, the reply."""
        _, _, offset, _, _ = self.fetch_request(s, a, peer, k)
        end = [X.ite(s.feo[a][t] != NONE, offset - 1, NONE) if t == peer else s.feo[a][t] for t in self.S]
        new_hwm = self.new_high_watermark(s, X, a, end)
        up = new_hwm > s.hwm[a]
        out: Flat = {("hwm", a): X.ite(up, new_hwm, s.hwm[a]), ("cfg_committed", a): X.ite(up, X.ite(new_hwm >= 1, 1, 0),
                                                                       s.cfg_committed[a])}
        # the new configuration (when the HWM moves) is the InitClusterCommand's: its members
        for t in self.S:
            member = t < self.settings["init_cluster_size"]
            out[("feo", a, t)] = X.ite(up, X.ite(end[t] != NONE, end[t], 0) if member else NONE, end[t])
        for v in self.V:
            committed = X.any([X.and_(s.hwm[a] < o + 1, o + 1 <= new_hwm, s.log_cmd[a][o] == APPEND,
                                      s.log_value[a][o] == v) for o in self.O])
            ack = X.and_(up, s.pending_ack[a][v] == 1, committed)
            out[("pos_acked", v)] = X.ite(ack, 1, s.pos_acked[v])
            out[("pending_ack", a, v)] = X.ite(ack, 0, s.pending_ack[a][v])
        fields = [OK, NIL_ERROR, s.leader[a], s.epoch[a], X.min_(new_hwm, offset), 0, 0,
                  *self.entry_at(s, X, a, offset)]
        return nested(merge(out, self.reply_fetch(s, X, a, peer, k, fields)))

    @action(server=SERVER, peer=SERVER, slot=slots(FETCH), where=two)
    def accept_fetch_request_from_observer(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Bool:
        """AcceptFetchRequestFromObserver: the leader answers an observer's fetch with the next
        entry; nothing of its own changes."""
        _, _, offset, last, observer = self.fetch_request(s, a, peer, k)
        return X.and_(self.equal_epoch_leader(s, X, a, peer, k), observer == 1,
                      self.valid_fetch_position(s, X, a, offset, last))

    @accept_fetch_request_from_observer.effect
    def _(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Effect:
        _, _, offset, _, _ = self.fetch_request(s, a, peer, k)
        fields = [OK, NIL_ERROR, s.leader[a], s.epoch[a], X.min_(offset, s.hwm[a]), 0, 0,
                  *self.entry_at(s, X, a, offset)]
        return nested(self.reply_fetch(s, X, a, peer, k, fields))

