"""The `quorum` model's replication: a follower fetching from its leader, the leader
answering (the next entry, a diverging epoch, or an error) and moving its high watermark, the
follower taking the response (appending, truncating, switching configurations).
"""

from __future__ import annotations

from typing import Sequence

from kmc.model.core import NONE, Backend, Bool, Effect, Int, StateView, action
from kmc.model.effects import Flat, merge, nested, when
from kmc.model.quorum_state import (
    BLANK_ENTRY, ENTRY, REMOVE_VOTER, APPEND, DEAD, DIVERGING, FENCED_LEADER_EPOCH, FETCH, FETCH_RESPONSE, FOLLOWER, LEADER, NIL_ERROR, NOT_LEADER,
    NOT_OK, OBSERVER, OK, SERVER, UNATTACHED, UNKNOWN_LEADER, VOTED, VOTER,
)
from kmc.model.quorum_prevote import slots, two
from kmc.model.quorum_votes import QuorumVotes


class QuorumFetch(QuorumVotes):
    """SendFetchRequest, HandleFetchResponse, and the leader's answers to a fetch."""

    @action(server=SERVER, peer=SERVER, where=two)
    def send_fetch_request(self, s: StateView, X: Backend, a: int, peer: int) -> Bool:
        """SendFetchRequest: a follower fetches from its leader at the end of its log (kip853:
        an observer that knows no leader asks a voter that knows one; kip996: an unattached
        voter asks any server)."""
        follower = X.and_(s.leader[a] == peer, s.state[a] == FOLLOWER)
        if self.kip996:  # ShouldSendFetch, between started servers (with its LIVENESS_ conditions)
            live = self.test_liveness
            if live:
                follower = X.and_(follower, self.helps_make_progress(s, X, a, peer),
                                  X.not_(self.in_pre_vote_cycle(s, X, a, peer)))
            unattached = X.and_(self.is_voter(s, X, a), s.state[a] == UNATTACHED,
                                *([self.valid_peer(s, X, a, peer)] if live else []))
            observer = X.and_(self.is_observer(s, X, a), s.state[a] == FOLLOWER, self.fetch_can_timeout(s, X, a),
                              *([self.not_same_peer_again(s, X, a, peer)] if live else []))
            return X.and_(self.started(s, a), self.started(s, peer),
                          X.or_(X.and_(s.pf[a] == 0, X.or_(follower, unattached)), observer))
        lost = X.and_(s.role[a] == OBSERVER, X.or_(s.state[a] == UNATTACHED, s.state[a] == VOTED),
                      self.connected(s, a, peer), s.role[peer] == VOTER, s.leader[peer] != NONE)
        return X.and_(s.pf[a] == 0, X.or_(follower, lost))

    @send_fetch_request.effect
    def _(self, s: StateView, X: Backend, a: int, peer: int) -> Effect:
        # kip996's FetchRequest has no `observer` field (only StartNewServer's first one does)
        observer = 0 if self.kip996 else X.ite(s.role[a] == OBSERVER, 1, 0)
        last = self.last_epoch(s, X, a)
        out: Flat = {("pf", a): 1, ("pf_dest", a): peer, ("pf_epoch", a): s.epoch[a],
                     ("pf_offset", a): s.log_len[a] + 1, ("pf_last_epoch", a): last, ("pf_observer", a): observer}
        return nested(merge(out, self.send(s, X, FETCH, a, peer, [1, s.epoch[a], s.log_len[a] + 1, last, observer])))

    @action(server=SERVER, peer=SERVER, slot=slots(FETCH_RESPONSE), where=two)
    def handle_fetch_response(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Bool:
        """HandleFetchResponse: a server takes the response to its pending fetch: it appends
        the entry, truncates to the diverging epoch, or learns of a new epoch or leader."""
        *_, cepoch, coffset, clast, cobserver = self.slot(s, FETCH_RESPONSE, peer, a, k)
        result = s.fs[peer][a][k]
        pending = X.and_(s.pf[a] == 1, s.pf_dest[a] == peer, s.pf_epoch[a] == cepoch, s.pf_offset[a] == coffset,
                         s.pf_last_epoch[a] == clast, s.pf_observer[a] == cobserver)
        return X.and_(result != 0, s.state[a] != DEAD, pending)

    def fetched_log(self, s: StateView, X: Backend, a: int, keep: Int, append: Bool,
                    entry: Sequence[Int]) -> list[list[Int]]:
        """HandleFetchResponse's new_log, per offset its parts in ENTRY's order: the first
        `keep` entries, then the fetched entry when `append` (keep is then the whole log)."""
        out = []
        for o in self.O:
            here = X.and_(append, s.log_len[a] == o)
            out.append([X.ite(here, new, X.ite(o < keep, old, blank))
                        for new, old, blank in zip(entry, self.entry(s, a, o), BLANK_ENTRY)])
        return out

    @handle_fetch_response.effect
    def _(self, s: StateView, X: Backend, a: int, peer: int, k: int) -> Effect:
        (result, error, leader, epoch, hwm, de, dend, *fetched) = self.slot(s, FETCH_RESPONSE, peer, a, k)
        entry = fetched[:len(ENTRY)]
        new_state, handled = self.common_response(s, X, a, leader, epoch, error)
        append = X.and_(result == OK, entry[0] != 0)
        keep = X.ite(result == DIVERGING, self.highest_common_offset(s, X, a, dend - 1, de), s.log_len[a])
        new_len = X.ite(append, s.log_len[a] + 1, keep)
        new_log = self.fetched_log(s, X, a, keep, append, entry)
        written: Flat = {("log_len", a): new_len}
        for o in self.O:
            for part, value in zip(ENTRY, new_log[o]):
                written[("log_" + part, a, o)] = value
        # MaybeSwitchConfigurations: the new log's most recent configuration, committed when
        # the response's HWM covers it
        offset, cfg_id, mask = self.most_recent_config(X, new_len, new_log)
        members = [self.member(X, mask, t) for t in self.S]
        switch_cfg: Flat = {("cfg_id", a): cfg_id, ("cfg_committed", a): X.ite(hwm >= offset, 1, 0)}
        for t in self.S:
            switch_cfg[("cfg_members", a, t)] = X.ite(members[t], 1, 0)
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
            written, {("hwm", a): X.ite(result == OK, hwm, s.hwm[a])})
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
        fields = [NOT_OK, self.fetch_error(s, X, a, epoch), s.leader[a], s.epoch[a], s.hwm[a], 0, 0, *BLANK_ENTRY]
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
        fields = [DIVERGING, NIL_ERROR, s.leader[a], s.epoch[a], s.hwm[a], at, end + 1, *BLANK_ENTRY]
        return nested(self.reply_fetch(s, X, a, peer, k, fields))

    def entry_at(self, s: StateView, X: Backend, a: int, offset: Int) -> list[Int]:
        """entries: <<log[a][offset]>> (its parts in ENTRY's order), or no entry past the end."""
        out: list[Int] = list(BLANK_ENTRY)
        for o in self.O:
            here = X.and_(offset == o + 1, self.has(s, a, o))
            out = [X.ite(here, x, y) for x, y in zip(self.entry(s, a, o), out)]
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
        # IsRemovedFromCluster: the new HWM commits a RemoveVoterCommand that leaves the leader out
        leaves = X.and_(up, X.any([X.and_(self.has(s, a, o), s.hwm[a] < o + 1, o + 1 <= new_hwm,
                                          s.log_cmd[a][o] == REMOVE_VOTER,
                                          X.not_(self.member(X, s.log_members[a][o], a))) for o in self.O]))
        # the new configuration (when the HWM moves): the log's most recent one
        cfg_offset, cfg_id, mask = self.most_recent_config(X, s.log_len[a], [self.entry(s, a, o) for o in self.O])
        members = [self.member(X, mask, t) for t in self.S]
        out: Flat = {("cfg_id", a): X.ite(up, cfg_id, s.cfg_id[a]),
                     ("cfg_committed", a): X.ite(up, X.ite(new_hwm >= cfg_offset, 1, 0), s.cfg_committed[a]),
                     ("hwm", a): X.ite(leaves, 0, X.ite(up, new_hwm, s.hwm[a])),
                     ("role", a): X.ite(leaves, OBSERVER, s.role[a])}
        for t in self.S:
            out[("cfg_members", a, t)] = X.ite(up, X.ite(members[t], 1, 0), s.cfg_members[a][t])
            kept = X.ite(members[t], X.ite(end[t] != NONE, end[t], 0), NONE)
            out[("feo", a, t)] = X.ite(leaves, NONE, X.ite(up, kept, end[t]))
        # the leader leaves: it resigns as an unattached observer (kip996: AdvanceHwmAndResign, it
        # resigns and fails the writes this HWM does not commit)
        leave = self.to_resigned(s, X, a) if self.kip996 else self.to_unattached(s, X, a, s.epoch[a], OBSERVER)
        out.update(when(s, X, leaves, self.apply_state(a, leave)))
        for v in self.V:
            committed = X.any([X.and_(s.hwm[a] < o + 1, o + 1 <= new_hwm, s.log_cmd[a][o] == APPEND,
                                      s.log_value[a][o] == v) for o in self.O])
            ack = X.and_(up, s.pending_ack[a][v] == 1, committed)
            out[("pos_acked", v)] = X.ite(ack, 1, s.pos_acked[v])
            out[("pending_ack", a, v)] = X.ite(ack, 0, s.pending_ack[a][v])
            if self.kip996:
                failed = X.and_(leaves, s.pending_ack[a][v] == 1, X.not_(ack))
                out[("neg_acked", v)] = X.ite(failed, 1, s.neg_acked[v])
                out[("pending_ack", a, v)] = X.ite(leaves, 0, out[("pending_ack", a, v)])
        fields = [OK, NIL_ERROR, X.ite(leaves, NONE, s.leader[a]), s.epoch[a], X.min_(new_hwm, offset), 0, 0,
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
