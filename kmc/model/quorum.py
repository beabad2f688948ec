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
kind from `peer` to `server`). This file holds the actions of one server (and the network's);
the handling of messages is in quorum_votes.py (elections) and quorum_fetch.py (replication),
reconfiguration in quorum_reconfig.py, the guards when liveness is tested (--test-liveness) in
quorum_liveness.py (kip853) and quorum_liveness996.py (kip996); the state in quorum_state.py, the network in
quorum_messages.py, the shared transitions in quorum_transitions.py, the way states print in
quorum_view.py; docs/quorum.md maps every field, action and invariant to the specification and
gives the parity with TLC, safety and liveness. --no-check-quorum (kip853),
--no-resend-begin-quorum-epoch (both modes) and --no-follower-rejects-pre-vote (kip996) take out
the fixes the specifications' history names; --no-dropped-begin-quorum-epoch-processed gives kip853
kip996's Drop, under which the resend's absence shows (quorum_messages.py).
"""

from __future__ import annotations

from typing import Sequence

from kmc.model.core import (
    NONE, Action, Backend, Bool, Domain, Effect, Int, Lane, Lanes, Message, State, StateView, action,
)
from kmc.model.effects import Flat, merge, nested, when
from kmc.model.quorum_state import (
    APPEND, BEGIN_QUORUM, CANDIDATE, DEAD, LEADER, LEADER_CHANGE, NIL_ROLE, OBSERVER, PROSPECTIVE,
    REQUEST_VOTE, SERVER, UNATTACHED, VALUE, VOTER, Transition,
)
from kmc.model.quorum_liveness import QuorumLiveness
from kmc.model.quorum_view import describe_state


DISCONNECTED = Domain(lambda m: range(2 ** len(m.pairs)), lambda mask: f"{{{mask:b}}}")

ASKS_VOTES = ("send_request_vote", "voter_fetch_timeout", "voter_election_timeout", "conclude_pre_vote")  # (pre-)votes
ANSWERS_FETCH = ("reject_fetch_request", "diverging_fetch_request", "accept_fetch_request_from_voter",
                 "accept_fetch_request_from_observer", "accept_fetch_request")  # a leader's answers to a Fetch


class Quorum(QuorumLiveness):
    name = "quorum"
    lanes = Lanes(
        Lane("servers", SERVER), Lane("network"),
        local={"change_network_connectivity": "network", "restart_with_state": "server", "crash_lose_state": "server",
               "send_request_vote": "server", "become_leader": "server", "client_request": "server",
               "handle_client_request": "server", "check_quorum_resign": "server", "observer_fetch_timeout": "server",
               "voter_fetch_timeout": "server", "voter_election_timeout": "server",
               "resigned_election_timeout": "server", "conclude_pre_vote": "server",
               "start_new_server": "server", "accept_add_voter_request": "server",
               "accept_remove_voter_request": "server"},
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
        # the fix switches take out the action they name; kip853's ResendBeginQuorumEpochRequest
        # is enabled only when liveness is tested, kip996's always
        resend = [self.resend_begin_quorum_epoch_request] if self.settings["resend_begin_quorum_epoch"] and \
            (self.test_liveness or self.kip996) else []
        if self.kip996:
            return [self.start_new_server, self.change_connectivity, self.restart_with_state, self.crash_lose_state,
                    self.accept_add_voter_request, self.accept_remove_voter_request, self.voter_fetch_timeout,
                    self.voter_election_timeout, self.resigned_election_timeout, self.conclude_pre_vote,
                    self.become_leader, self.handle_client_request, self.check_quorum_resign_prevote,
                    self.handle_pre_vote_request, self.handle_pre_vote_response, self.accept_begin_quorum_request,
                    self.send_fetch_request, self.handle_fetch_response, *resend, self.reject_fetch_request,
                    self.diverging_fetch_request, self.accept_fetch_request]
        check_quorum = [self.check_quorum_resign] if self.settings["check_quorum"] else []
        return [self.start_new_server, self.change_network_connectivity, self.restart_with_state,
                self.crash_lose_state, self.accept_add_voter_request, self.accept_remove_voter_request,
                self.send_request_vote, self.become_leader, self.client_request, *check_quorum,
                self.observer_fetch_timeout, self.handle_vote_request, self.handle_vote_response,
                self.accept_begin_quorum_request, self.send_fetch_request, self.handle_fetch_response, *resend,
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
        limit = X.and_(s.restarts < self.settings["max_restarts"], self.started(s, a), s.state[a] != DEAD)
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
        if self.kip996:  # MaxPermCrashes; DisconnectServer has no limit; CrashAllowed
            allowed = [self.crash_allowed(s, X, a)] if self.test_liveness else []
            return X.and_(s.crashes < self.settings["max_crashes"], self.is_voter(s, X, a), *allowed)
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
        timeout; with --test-liveness only for a cause), becomes a candidate in the next epoch
        and asks the other members for their votes (while its epoch is below --max-epoch)."""
        return X.and_(s.role[a] == VOTER, s.state[a] != LEADER, s.cfg_members[a][a] == 1,
                      self.election_timeout(s, X, a), s.epoch[a] < self.max_epoch)

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
                    self.appended(s, X, a, [LEADER_CHANGE, s.epoch[a], 0]),
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
        return nested(merge(self.appended(s, X, a, [APPEND, s.epoch[a], v]),
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
        when liveness is not tested; --no-check-quorum: never)."""
        if self.test_liveness:
            return X.and_(s.state[a] == LEADER, self.too_few_connected(s, X, a))
        return s.state[a] == LEADER

    @check_quorum_resign.effect
    def _(self, s: StateView, X: Backend, a: int) -> Effect:
        t = self.pick(X, s.role[a] == VOTER, self.to_resigned(s, X, a),
                      self.to_unattached(s, X, a, s.epoch[a], OBSERVER))
        return nested(self.apply_state(a, t))

    # -- follower actions --------------------------------------------------------------------------

    @action(server=SERVER)
    def observer_fetch_timeout(self, s: StateView, X: Backend, a: int) -> Bool:
        """ObserverFetchTimeout: an observer's fetch times out (with --test-liveness only when
        it failed or was lost); it forgets the leader."""
        if self.test_liveness:
            return X.and_(s.role[a] == OBSERVER, self.fetch_can_timeout(s, X, a))
        return s.role[a] == OBSERVER

    @observer_fetch_timeout.effect
    def _(self, s: StateView, X: Backend, a: int) -> Effect:
        return nested(merge(self.apply_state(a, self.to_unattached(s, X, a, s.epoch[a], s.role[a])),
                            self.reset_fetch_state(a)))
