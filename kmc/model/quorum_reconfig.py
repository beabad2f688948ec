"""The `quorum` model's reconfiguration (KIP-853): a new server starting as an observer, and a
leader adding or removing a voter, at the level of Vanlightly/kafka-tlaplus kraft/kip_853 and
kraft/kip_996 (the same three actions; kip996 has no role variable, and its AddVoter's
BeginQuorumEpoch request has no `resend` field).

A configuration is carried in the log as a command (InitClusterCommand, AddVoterCommand,
RemoveVoterCommand, each with the configuration's id and members); a server uses the most
recent one in its log, committed or not, and switches back when a truncation removes it
(quorum_fetch.py). A leader accepts one reconfiguration at a time: its configuration must be
committed and it must have committed an entry of its own epoch. With --test-liveness it
also keeps a majority connected to it (AddVoterLivenessCondition, RemoveVoterLivenessCondition).
"""

from __future__ import annotations

from kmc.model.core import NONE, Backend, Bool, Effect, Int, StateView, action
from kmc.model.effects import Flat, merge, nested
from kmc.model.quorum_fetch import QuorumFetch
from kmc.model.quorum_state import (
    ADD_VOTER, BEGIN_QUORUM, FETCH, HOST, LEADER, NO_RESEND, OBSERVER, REMOVE_VOTER, RESEND_FALSE, SERVER, VOTER,
)


class QuorumReconfig(QuorumFetch):
    """StartNewServer, AcceptAddVoterRequest, AcceptRemoveVoterRequest."""

    @action(server=SERVER, host=HOST, leader=SERVER)
    def start_new_server(self, s: StateView, X: Backend, a: int, host: int, leader: int) -> Bool:
        """StartNewServer: the next server starts on `host` with a blank disk, as an observer
        with the configuration of a server that leads, and sends that leader a fetch (at most
        --max-spawned-servers servers ever start)."""
        return X.and_(s.started == a, self.started(s, leader), s.state[leader] == LEADER)

    @start_new_server.effect
    def _(self, s: StateView, X: Backend, a: int, host: int, leader: int) -> Effect:
        out: Flat = {("started",): s.started + 1, ("host", a): host, ("role", a): OBSERVER,
                     ("cfg_id", a): s.cfg_id[leader], ("cfg_committed", a): s.cfg_committed[leader]}
        for t in self.S:
            out[("cfg_members", a, t)] = s.cfg_members[leader][t]
        return nested(merge(out, self.send(s, X, FETCH, a, leader, [1, 0, 0, 0, 1])))

    def committed_in_epoch(self, s: StateView, X: Backend, a: int) -> Bool:
        """LeaderHasCommittedOffsetsInCurrentEpoch(a)."""
        return X.any([X.and_(self.has(s, a, o), s.log_epoch[a][o] == s.epoch[a], s.hwm[a] >= o + 1)
                      for o in self.O])

    def reconfigurable(self, s: StateView, X: Backend, a: int) -> Bool:
        """The checks AddVoterCheck and RemoveVoterCheck share: a leader with its configuration
        committed and an entry of its epoch committed."""
        return X.and_(self.started(s, a), s.state[a] == LEADER, s.cfg_committed[a] == 1,
                      self.committed_in_epoch(s, X, a))

    def reconfigured(self, s: StateView, X: Backend, a: int, cmd: int, changed: int, joins: bool) -> Flat:
        """The leader appends the command of a configuration with `changed` added (joins) or
        removed, switches to it at once (uncommitted) and tracks the new members' offsets."""
        inside: list[Bool | bool] = [joins if t == changed else s.cfg_members[a][t] == 1 for t in self.S]
        cfg_id: Int = s.cfg_id[a] + 1
        out: Flat = merge(self.appended(s, X, a, [cmd, s.epoch[a], 0, cfg_id, self.mask(X, inside), changed]),
                          {("cfg_id", a): cfg_id, ("cfg_committed", a): X.ite(s.hwm[a] >= s.log_len[a] + 1, 1, 0)})
        for t in self.S:  # UpdateFollowerEndOffsetMap(a, the new members)
            out[("cfg_members", a, t)] = X.ite(inside[t], 1, 0)
            out[("feo", a, t)] = X.ite(inside[t], X.ite(s.feo[a][t] != NONE, s.feo[a][t], 0), NONE)
        return out

    def linked(self, s: StateView, a: int, t: int) -> Bool | bool:
        """Connected(a, t) of the mode's network module: kip996's is FALSE for a = t."""
        return False if self.kip996 and a == t else self.connected(s, a, t)

    def add_voter_liveness_condition(self, s: StateView, X: Backend, a: int, add: int) -> Bool | bool:
        """AddVoterLivenessCondition(a, add) (kip996: LIVENESS_AddVoterLivenessCondition): with
        --test-liveness, a, the other members connected to it and add if connected to it are
        more than half of the new configuration."""
        if not self.test_liveness:
            return True
        connected = X.count([X.and_(s.cfg_members[a][t] == 1, self.connected(s, a, t)) for t in self.S if t != a])
        joining = X.ite(self.linked(s, a, add), 1, 0)
        # (ConnectedServers(a, members) + add_connected) > (Cardinality(members) + 1) \div 2
        return 2 * (connected + 1 + joining) > self.card(X, s.cfg_members[a]) + 1

    def remove_voter_liveness_condition(self, s: StateView, X: Backend, a: int, remove: int) -> Bool | bool:
        """RemoveVoterLivenessCondition(a, remove) (kip996: LIVENESS_RemoveVoterLivenessCondition):
        with --test-liveness, the voters of a's configuration but `remove` connected to a are
        more than half of it."""
        if not self.test_liveness:
            return True
        def voter(t: int) -> Bool:
            return self.is_voter(s, X, t) if self.kip996 else s.role[t] == VOTER  # kip996: IsVoter(t)
        voters = X.count([X.and_(s.cfg_members[a][t] == 1, voter(t), self.linked(s, a, t))
                          for t in self.S if t != remove])
        return 2 * voters > self.card(X, s.cfg_members[a])  # > Cardinality(members) \div 2

    @action(server=SERVER, add_server=SERVER)
    def accept_add_voter_request(self, s: StateView, X: Backend, a: int, add: int) -> Bool:
        """AcceptAddVoterRequest: a leader adds a started server that is not a member
        (AddVoterCheck) below --max-cluster-size, and tells it with BeginQuorumEpoch (at
        most --max-add-reconfigs times)."""
        return X.and_(s.add_reconfigs < self.settings["max_add_reconfigs"], self.started(s, add),
                      self.reconfigurable(s, X, a), s.cfg_members[a][add] == 0,
                      self.add_voter_liveness_condition(s, X, a, add),
                      self.card(X, s.cfg_members[a]) < self.settings["max_cluster_size"])

    @accept_add_voter_request.effect
    def _(self, s: StateView, X: Backend, a: int, add: int) -> Effect:
        resend = NO_RESEND if self.kip996 else RESEND_FALSE
        return nested(merge(self.reconfigured(s, X, a, ADD_VOTER, add, True),
                            self.send(s, X, BEGIN_QUORUM, a, add, [1, s.epoch[a], resend]),
                            {("add_reconfigs",): s.add_reconfigs + 1}))

    @action(server=SERVER, remove_server=SERVER)
    def accept_remove_voter_request(self, s: StateView, X: Backend, a: int, remove: int) -> Bool:
        """AcceptRemoveVoterRequest: a leader removes a member (RemoveVoterCheck) above
        --min-cluster-size; a leader removing itself becomes an observer and leads until the
        command commits (at most --max-remove-reconfigs times)."""
        return X.and_(s.remove_reconfigs < self.settings["max_remove_reconfigs"], self.started(s, remove),
                      self.reconfigurable(s, X, a), s.cfg_members[a][remove] == 1,
                      self.remove_voter_liveness_condition(s, X, a, remove),
                      self.card(X, s.cfg_members[a]) > self.settings["min_cluster_size"])

    @accept_remove_voter_request.effect
    def _(self, s: StateView, X: Backend, a: int, remove: int) -> Effect:
        out = merge(self.reconfigured(s, X, a, REMOVE_VOTER, remove, False),
                    {("remove_reconfigs",): s.remove_reconfigs + 1})
        if remove == a:
            out[("role", a)] = OBSERVER
        return nested(out)
