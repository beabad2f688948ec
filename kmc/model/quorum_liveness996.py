"""What kip996's actions require when the specification tests liveness (`TestLiveness = TRUE`,
kmc's --test-liveness; kraft_kip_996_liveness): fetches that help progress, and network changes
and crashes that leave some voter able to win an election.

A follower cut off from its leader, whose pre-votes the leader's connected followers refused
(they name the leader), stops fetching from it (LIVENESS_InPrevoteCycle) instead of going round
fetch timeout, pre-vote, follower for ever; the refused pre-votes are the one part of
net_messages_processed this reads (`pv_refused`). The specification also counts every pre-vote
(aux_ctrs.prevote_ctr, read by no action) so that such rounds never repeat a state; kmc does
not keep that count (tests/reference/tlc-quorum.md, "Liveness (kip996)", gives TLC's edit).
"""

from __future__ import annotations

from typing import Sequence

from kmc.model.core import Backend, Bool, Int, StateView
from kmc.model.effects import Flat
from kmc.model.quorum_state import DEAD, LEADER, NOT_LEADER
from kmc.model.quorum_transitions import QuorumTransitions


class QuorumPreVoteLiveness(QuorumTransitions):
    """The LIVENESS_* conditions of kraft_kip_996_liveness that the modelled actions read."""

    def elections_can_progress(self, s: StateView, X: Backend, pairs: Sequence[Bool | bool]) -> Bool:
        """LIVENESS_ElectionsCanProgress(connected), the connected pairs given per pair index:
        some live voter is connected to at least half of the other members (HasMajorityConnectionToMembers:
        members not ahead of it and alive)."""
        def majority(a: int) -> Bool:
            peers = X.count([X.and_(s.cfg_members[a][t] == 1, s.epoch[a] >= s.epoch[t], s.state[t] != DEAD,
                                    *([] if pair is True else [pair]))
                             for t in self.S if t != a for pair in [pairs[self.pair_index(a, t)]] if pair is not False])
            return 2 * peers + 1 >= self.card(X, s.cfg_members[a])  # >= Cardinality(members) \div 2
        return X.any([X.and_(self.started(s, a), self.is_voter(s, X, a), majority(a)) for a in self.S])

    def crash_allowed(self, s: StateView, X: Backend, a: int) -> Bool:
        """CrashAllowed(a): elections can progress over the connected pairs without a."""
        return self.elections_can_progress(s, X, [False if a in p else s.connected[i] == 1
                                                  for i, p in enumerate(self.pairs)])

    def helps_make_progress(self, s: StateView, X: Backend, a: int, peer: int) -> Bool:
        """LIVENESS_HelpsMakeProgress(a, peer, Len(log[a]) + 1): the logs, HWMs or epochs differ,
        peer does not lead, or it leads knowing no end offset of a's or a stale one."""
        same_log = X.and_(s.log_len[a] == s.log_len[peer], X.all([
            X.implies(self.has(s, a, o), X.all([x == y for x, y in zip(self.entry(s, a, o), self.entry(s, peer, o))]))
            for o in self.O]))
        return X.or_(X.not_(same_log), s.hwm[a] != s.hwm[peer], s.epoch[a] != s.epoch[peer], s.state[peer] != LEADER,
                     s.feo[peer][a] < s.log_len[a] + 1)  # -1 (not in the domain) is below any offset

    def in_pre_vote_cycle(self, s: StateView, X: Backend, a: int, ldr: int) -> Bool:
        """LIVENESS_InPrevoteCycle(a, ldr): a voter cut from ldr processed a refused pre-vote of
        its epoch naming ldr from a server connected to ldr."""
        epochs = range(self.schema.by_name["epoch"].hi + 1)
        refused = X.any([X.and_(s.pv_refused[src][a][ldr][e] == 1, s.epoch[a] == e, self.connected(s, src, ldr))
                         for src in self.S if src not in (a, ldr) for e in epochs])
        return X.and_(self.is_voter(s, X, a), X.not_(self.connected(s, a, ldr)), refused)

    def valid_peer(self, s: StateView, X: Backend, a: int, peer: int) -> Bool:
        """LIVENESS_ValidPeer(a, peer): a connected voter that knows a leader."""
        return X.and_(self.is_voter(s, X, peer), s.leader[peer] >= 0, self.connected(s, a, peer))

    def not_same_peer_again(self, s: StateView, X: Backend, a: int, peer: int) -> Bool:
        """LIVENESS_MaybeNotSamePeerAgain(a, peer): not the peer whose last answer was NotLeader."""
        return X.implies(X.and_(s.lfr[a] == 1, s.lfr_error[a] == NOT_LEADER), s.lfr_peer[a] != peer)

    def pre_vote_refused(self, s: StateView, X: Backend, src: int, dst: int, refused: Bool, leader: Int,
                         epoch: Int) -> Flat:
        """When `refused`, the pre-vote response src -> dst naming `leader`, of `epoch`, joins
        net_messages_processed (kept only with --test-liveness)."""
        if not self.test_liveness:
            return {}
        out: Flat = {}
        for ldr in self.S:
            for e in range(self.schema.by_name["epoch"].hi + 1):
                out[("pv_refused", src, dst, ldr, e)] = X.ite(X.and_(refused, leader == ldr, epoch == e), 1,
                                                              s.pv_refused[src][dst][ldr][e])
        return out
