"""The `quorum` model's options, state layout, initial state, and its operators on sets and logs.

The state is what the specification's VIEW keeps (server variables, votes, follower end
offsets, logs, high watermarks, the invariant variables, the messages in flight and the
connectivity), laid out as bounded int fields, plus the limit counters the actions read
(aux_ctrs and net_connectivity_ctr, which the VIEW drops: tests/reference/tlc-quorum.md gives
TLC's figures with them kept). Servers are 0-based (the specification's 1..n); a set of
servers is 0/1 flags; a log is per-offset command, epoch and value; a function whose domain
can shrink (flwr_end_offset) holds -1 outside its domain.

Messages are per kind and (source, destination) pair a few slots (quorum_messages.py keeps
them a set). docs/quorum.md maps every field to the specification's variable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from kmc.errors import BadInput
from kmc.model.core import NONE, Backend, Bool, Domain, Field, Int, Model, Option, Schema, State, StateView
from kmc.model.effects import Flat

MODES = {
    "kip853": "KRaft with KIP-853 dynamic voters (Vanlightly/kafka-tlaplus kraft/kip_853)",
    "kip996": "KIP-853 with KIP-996 pre-vote: the Prospective state (Vanlightly/kafka-tlaplus kraft/kip_996)",
}

# state[s]
UNATTACHED, FOLLOWER, CANDIDATE, LEADER, VOTED, RESIGNED, DEAD, ILLEGAL, PROSPECTIVE = range(9)
STATE = ("Unattached", "Follower", "Candidate", "Leader", "Voted", "Resigned", "DeadNoState", "IllegalState",
         "Prospective")
# role[s]
NIL_ROLE, VOTER, OBSERVER = 0, 1, 2
ROLE = ("Nil", "Voter", "Observer")
# error codes (Nil: none)
NIL_ERROR, FENCED_LEADER_EPOCH, NOT_LEADER, UNKNOWN_LEADER, INVALID_REQUEST = 0, 1, 2, 3, 4
ERROR = ("Nil", "FencedLeaderEpoch", "NotLeader", "UnknownLeader", "InvalidRequest")
# FetchResponse.result (0: the slot is empty)
NOT_OK, DIVERGING, OK = 1, 2, 3
RESULT = ("-", "NotOk", "Diverging", "Ok")
# log entry commands (0: no entry)
LEADER_CHANGE, APPEND, INIT_CLUSTER, ADD_VOTER, REMOVE_VOTER = 1, 2, 3, 4, 5
COMMAND = ("-", "LeaderChangeRecord", "AppendCommand", "InitClusterCommand", "AddVoterCommand", "RemoveVoterCommand")
CONFIG_COMMANDS = (INIT_CLUSTER, ADD_VOTER, REMOVE_VOTER)
# a log entry's parts: command, epoch, the AppendCommand's value, and a configuration
# command's value (id, members as a bit mask, the server added or removed); an entry of
# another kind holds the blank value
ENTRY = ("cmd", "epoch", "value", "cfg_id", "members", "server")
BLANK_ENTRY = (0, 0, 0, 0, 0, NONE)


def server_name(s: int) -> str:
    """Servers as the specification numbers them: 1, 2, ... (or Nil)."""
    return "Nil" if s == NONE else f"s{s + 1}"


SERVER = Domain(lambda m: m.S, server_name)
VALUE = Domain(lambda m: m.V, lambda v: f"v{v + 1}")
HOST = Domain(lambda m: range(m.settings["hosts"]), lambda h: f"h{h + 1}")


@dataclass(frozen=True)
class Kind:
    """A message type: its slot fields' names (the first says whether the slot holds a
    message: nonzero) in the order that sorts a pair's slots."""

    name: str
    fields: tuple[str, ...]


REQUEST_VOTE = Kind("rvq", ("rvq", "rvq_epoch", "rvq_last_epoch", "rvq_last_offset", "rvq_pre_vote"))
VOTE_RESPONSE = Kind("rvs", ("rvs", "rvs_epoch", "rvs_leader", "rvs_granted", "rvs_error", "rvs_pre_vote"))
BEGIN_QUORUM = Kind("bqe", ("bqe", "bqe_epoch", "bqe_resend"))
# kip996's BeginQuorumEpochRequest.resend: FALSE, TRUE, or no such field (the request its
# AcceptAddVoterRequest sends, another message than BecomeLeader's); kip853's have none and hold 0
RESEND_FALSE, RESEND_TRUE, NO_RESEND = 0, 1, 2
FETCH = Kind("fq", ("fq", "fq_epoch", "fq_offset", "fq_last_epoch", "fq_observer"))
FETCH_RESPONSE = Kind("fs", ("fs", "fs_error", "fs_leader", "fs_epoch", "fs_hwm", "fs_div_epoch", "fs_div_end",
                             "fs_entry_cmd", "fs_entry_epoch", "fs_entry_value", "fs_entry_cfg_id",
                             "fs_entry_members", "fs_entry_server", "fs_corr_epoch", "fs_corr_offset",
                             "fs_corr_last_epoch", "fs_corr_observer"))
KINDS = (REQUEST_VOTE, VOTE_RESPONSE, BEGIN_QUORUM, FETCH, FETCH_RESPONSE)


def holds_server(name: str) -> bool:
    """A message field whose value is a server (Nil, -1, in an empty slot)."""
    return name.endswith(("_leader", "_server"))

# a transition record: (state, epoch, leader, votes_recv flags, voted_for)
Transition = tuple[Int, Int, Int, list[Int], Int]


class QuorumState(Model):
    """Options, schema, initial state and the specification's operators (no actions)."""

    summary = "KRaft's Raft quorum with dynamic voters and pre-vote (TLA+ spec Vanlightly/kafka-tlaplus kraft)"
    modes = MODES
    options = (
        Option("mode", "kip853", "protocol variant", choices=tuple(MODES)),
        Option("hosts", 2, "|Hosts|", min=1, max=5),
        Option("init_cluster_size", 2, "InitClusterSize", min=1, max=5),
        Option("min_cluster_size", 2, "MinClusterSize", min=1, max=5),
        Option("max_cluster_size", 2, "MaxClusterSize", min=1, max=5),
        Option("max_epoch", 2, "MaxEpoch", min=1, max=4),
        Option("values", 1, "|Value|: the values clients may write", min=1, max=3),
        Option("max_values_per_epoch", 1, "MaxValuesPerEpoch", min=0, max=2),
        Option("max_restarts", 0, "MaxRestarts: restarts keeping state", min=0, max=2),
        Option("max_crashes", 0, "MaxCrashes (kip996: MaxPermCrashes): crashes losing state", min=0, max=1),
        Option("max_add_reconfigs", 0, "MaxAddReconfigs", min=0, max=2),
        Option("max_remove_reconfigs", 0, "MaxRemoveReconfigs", min=0, max=2),
        Option("max_spawned_servers", 2, "MaxSpawnedServers: servers ever started, at least --init-cluster-size",
               min=1, max=5),
        Option("max_connectivity_changes", 0, "MaxConnectivityChanges", min=0, max=2),
        Option("max_disconnected_pairs", 0, "MaxDisconnectedPairs (kip853 only)", min=0, max=3),
        Option("max_disruptive_election_triggers", 0, "MaxDisruptiveElectionTriggers (kip996 only): timeouts "
               "and resignations with no cause", min=0, max=2),
        Option("test_liveness", False, "TestLiveness: timeouts and resignations only with a cause (kip853), "
               "BeginQuorumEpoch resent, fetches and network changes that help progress (kip996); --max-epoch "
               "still bounds elections"),
        Option("check_quorum", True, "kip853: a leader resigns when too few members fetch from it (CheckQuorumResign; "
               "--no-check-quorum: never)"),
        Option("resend_begin_quorum_epoch", True, "a leader resends a lost BeginQuorumEpoch "
               "(ResendBeginQuorumEpochRequest: kip853 with --test-liveness, kip996 always; "
               "--no-resend-begin-quorum-epoch: never)"),
        Option("dropped_begin_quorum_epoch_processed", True, "kip853 with --test-liveness: Drop records the "
               "BeginQuorumEpoch requests a cut removes as processed (net_messages_processed), so the resend never "
               "repeats them; --no-dropped-begin-quorum-epoch-processed: Drop leaves them unrecorded, as kip_996's "
               "Drop does, the edit under which --no-resend-begin-quorum-epoch has a counterexample"),
        Option("follower_rejects_pre_vote", True, "kip996: a follower that has fetched from its leader in its epoch "
               "refuses pre-votes (GrantPreVote; --no-follower-rejects-pre-vote: it grants them as others do)"),
    )

    def _validate(self) -> None:
        s = self.settings
        if not s["min_cluster_size"] <= s["init_cluster_size"] <= s["max_cluster_size"]:
            raise BadInput(f"need --min-cluster-size ({s['min_cluster_size']}) <= --init-cluster-size "
                           f"({s['init_cluster_size']}) <= --max-cluster-size ({s['max_cluster_size']})")
        if s["hosts"] < s["init_cluster_size"]:
            raise BadInput(f"--hosts ({s['hosts']}) must be at least --init-cluster-size ({s['init_cluster_size']})")
        only = ("max_disruptive_election_triggers", "kip996") if s["mode"] == "kip853" else \
            ("max_disconnected_pairs", "kip853")
        if s[only[0]] != 0:
            raise BadInput(f"--{only[0].replace('_', '-')} is a constant of mode {only[1]} only (got {s[only[0]]} "
                           f"with --mode {s['mode']})")
        self._validate_liveness()
        if s["max_spawned_servers"] < s["init_cluster_size"]:
            raise BadInput(f"--max-spawned-servers ({s['max_spawned_servers']}) must be at least "
                           f"--init-cluster-size ({s['init_cluster_size']})")

    def _validate_liveness(self) -> None:
        """The fix switches of each mode, and kip853's Drop."""
        s = self.settings
        for name, mode in (("check_quorum", "kip853"), ("follower_rejects_pre_vote", "kip996")):
            if not s[name] and s["mode"] != mode:
                raise BadInput(f"--no-{name.replace('_', '-')} is modelled for --mode {mode} only "
                               f"(got --mode {s['mode']})")
        if not s["resend_begin_quorum_epoch"] and s["mode"] == "kip853" and not s["test_liveness"]:
            raise BadInput("--no-resend-begin-quorum-epoch needs --test-liveness in --mode kip853 (the resend is "
                           "an action there only when liveness is tested)")
        if not s["dropped_begin_quorum_epoch_processed"]:
            if s["mode"] != "kip853":
                raise BadInput("--no-dropped-begin-quorum-epoch-processed is modelled for --mode kip853 only (got "
                               f"--mode {s['mode']}, whose Drop never records a dropped request as processed)")
            if not s["test_liveness"]:
                raise BadInput("--no-dropped-begin-quorum-epoch-processed needs --test-liveness in --mode kip853 "
                               "(only the resend reads the dropped requests, and it is an action there only when liveness is tested)")

    # -- layout ------------------------------------------------------------------------

    def _build(self) -> None:
        s = self.settings
        n = s["max_spawned_servers"]
        self.S = range(n)
        self.V = range(s["values"])
        self.kip996 = self.mode == "kip996"
        self.test_liveness: bool = s["test_liveness"]
        self.max_epoch: int = s["max_epoch"]
        # kip996: a resigned leader of MaxEpoch times out to Unattached in the epoch above
        E = self.max_epoch + 1 if self.kip996 else self.max_epoch
        self.values_per_epoch: int = s["max_values_per_epoch"]
        reconfigs = s["max_add_reconfigs"] + s["max_remove_reconfigs"]
        # a log: the InitClusterCommand, a LeaderChangeRecord per epoch after the first, the
        # values, the reconfiguration commands
        self.log_capacity = self.max_epoch + min(len(self.V), self.max_epoch * self.values_per_epoch) + reconfigs
        L = self.log_capacity
        self.O = range(L)
        self.pairs = [(a, b) for a in self.S for b in self.S if a < b]
        # slots per kind and ordered pair: one more than any configuration here fills (a test
        # checks that the last slot stays empty, so no message is ever lost to the bound)
        fetches = E + 1 + s["max_restarts"]  # a restart forgets the pending fetch: one more may be sent
        # requests of several epochs may be in flight at once (a stale BeginQuorumEpoch stays)
        votes = self.max_epoch + s["max_restarts"] + s["max_disruptive_election_triggers"] + (1 if self.kip996 else 0)
        # AcceptAddVoterRequest sends a BeginQuorumEpoch; a new or removed server is an
        # observer, whose fetch may time out at any time: its requests and their stale answers
        # pile up (run q853-o holds up to 5 requests and 7 answers on one pair)
        observers = n - s["init_cluster_size"] + s["max_remove_reconfigs"]
        self.capacity = {"rvq": votes, "rvs": votes, "bqe": self.max_epoch + 1 + s["max_add_reconfigs"],
                         "fq": fetches + 4 * observers, "fs": fetches + 6 * observers}
        ids = 1 + reconfigs  # configuration ids: the InitClusterCommand's 1, one more per reconfiguration
        per_s, per_ss = (0,), (0, 1)
        last = n - 1
        v = len(self.V)

        def f(name: str, lo: int, hi: int, shape: tuple[int, ...] = (), doc: str = "",
              axes: tuple[int, ...] = (), holds: bool = False) -> Field:
            return Field(name, lo=lo, hi=hi, shape=shape, doc=doc, replica_axes=axes, holds_replica=holds)

        fields = [
            # serverVars
            f("host", 0, s["hosts"] - 1, (n,), "server_ids[s].host", per_s),
            f("cfg_id", 0, ids, (n,), "config[s].id", per_s),
            f("cfg_members", 0, 1, (n, n), "config[s].members", per_ss),
            f("cfg_committed", 0, 1, (n,), "config[s].committed", per_s),
            f("epoch", 0, E, (n,), "current_epoch[s]", per_s),
            f("role", 0, OBSERVER, (n,), "role[s]: 0 Nil, 1 Voter, 2 Observer", per_s),
            f("state", 0, PROSPECTIVE, (n,), "state[s]", per_s),
            f("voted_for", NONE, last, (n,), "voted_for[s] (-1: Nil)", per_s, True),
            f("leader", NONE, last, (n,), "leader[s] (-1: Nil)", per_s, True),
            f("pf", 0, 1, (n,), "fetch_state[s].pending_fetch # Nil", per_s),
            f("pf_dest", NONE, last, (n,), "pending_fetch.dest", per_s, True),
            f("pf_epoch", 0, E, (n,), "pending_fetch.epoch", per_s),
            f("pf_offset", 0, L + 1, (n,), "pending_fetch.fetch_offset", per_s),
            f("pf_last_epoch", 0, E, (n,), "pending_fetch.last_fetched_epoch", per_s),
            f("pf_observer", 0, 1, (n,), "pending_fetch.observer", per_s),
            f("lfr", 0, 1, (n,), "fetch_state[s].last_fetch_res # Nil", per_s),
            f("lfr_peer", NONE, last, (n,), "last_fetch_res.peer", per_s, True),
            f("lfr_error", 0, INVALID_REQUEST, (n,), "last_fetch_res.error", per_s),
            f("fetch_success", 0, 1, (n,), "fetch_state[s].has_fetch_success (kip996; 0 in kip853)", per_s),
            f("pending_ack", 0, 1, (n, v), "pending_ack[s]", per_s),
            # candidateVars, leaderVars
            f("votes_recv", 0, 1, (n, n), "votes_recv[s]", per_ss),
            f("feo", NONE, L, (n, n), "flwr_end_offset[s][t] (-1: t not in its domain)", per_ss),
            # logVars
            f("log_len", 0, L, (n,), "Len(log[s])", per_s),
            f("log_cmd", 0, REMOVE_VOTER, (n, L), "log[s][o].command (0: none)", per_s),
            f("log_epoch", 0, E, (n, L), "log[s][o].epoch", per_s),
            f("log_value", 0, v - 1, (n, L), "log[s][o].value: the value of an AppendCommand, else 0", per_s),
            f("log_cfg_id", 0, ids, (n, L), "log[s][o].value.id of a configuration command, else 0", per_s),
            f("log_members", 0, 2 ** n - 1, (n, L), "log[s][o].value.members of a configuration command (bit t: "
              "server t), else 0", per_s),
            f("log_server", NONE, last, (n, L), "log[s][o].value.new or .old of an Add/RemoveVoterCommand, else -1",
              per_s, True),
            f("hwm", 0, L, (n,), "hwm[s]", per_s),
            # invVars
            f("sent", 0, 1, (v,), "inv_sent"),
            f("pos_acked", 0, 1, (v,), "inv_pos_acked"),
            f("neg_acked", 0, 1, (v,), "inv_neg_acked"),
            # NetworkView: connectivity (pairs a < b in order) and the messages
            f("connected", 0, 1, (len(self.pairs),), "net_connectivity[{a, b}]"),
            # kip996's ResendBeginQuorumEpochRequest reads net_messages_processed: which epochs'
            # BeginQuorumEpoch requests a server processed
            f("bqe_done", 0, 1, (n, n, E + 1), "a BeginQuorumEpochRequest source -> dest of epoch e was processed",
              per_ss),
            # kip853's ResendBeginQuorumEpochRequest (TestLiveness) reads net_messages_processed:
            # whether a BeginQuorumEpoch request source -> dest was ever processed or dropped
            f("bqe_gone", 0, 1, (n, n), "a BeginQuorumEpochRequest source -> dest in net_messages_processed "
              "(kip853 with --test-liveness; else 0)", per_ss),
            # kip996's LIVENESS_InPrevoteCycle (TestLiveness) reads net_messages_processed: the
            # refused pre-votes, by the leader they named and their epoch
            f("pv_refused", 0, 1 if self.kip996 and self.test_liveness else 0, (n, n, n, E + 1),
              "a pre-vote RequestVoteResponse source -> dest, not granted, naming leader l, of epoch e, in "
              "net_messages_processed (kip996 with --test-liveness; else 0)", (0, 1, 2)),
        ]
        ranges = {
            "rvq": (0, 1), "rvq_epoch": (0, E), "rvq_last_epoch": (0, E), "rvq_last_offset": (0, L),
            "rvq_pre_vote": (0, 1),
            "rvs": (0, 1), "rvs_epoch": (0, E), "rvs_leader": (NONE, last), "rvs_granted": (0, 1),
            "rvs_error": (0, INVALID_REQUEST), "rvs_pre_vote": (0, 1),
            "bqe": (0, 1), "bqe_epoch": (0, E), "bqe_resend": (0, NO_RESEND),
            "fq": (0, 1), "fq_epoch": (0, E), "fq_offset": (0, L + 1), "fq_last_epoch": (0, E), "fq_observer": (0, 1),
            "fs": (0, OK), "fs_error": (0, UNKNOWN_LEADER), "fs_leader": (NONE, last), "fs_epoch": (0, E),
            "fs_hwm": (0, L + 1), "fs_div_epoch": (0, E), "fs_div_end": (0, L + 1), "fs_entry_cmd": (0, REMOVE_VOTER),
            "fs_entry_epoch": (0, E), "fs_entry_value": (0, v - 1), "fs_entry_cfg_id": (0, ids),
            "fs_entry_members": (0, 2 ** n - 1), "fs_entry_server": (NONE, last), "fs_corr_epoch": (0, E),
            "fs_corr_offset": (0, L + 1), "fs_corr_last_epoch": (0, E), "fs_corr_observer": (0, 1),
        }
        for kind in KINDS:
            k = self.capacity[kind.name]
            for name in kind.fields:
                lo, hi = ranges[name]
                holds = holds_server(name)
                fields.append(f(name, lo, hi, (n, n, k), f"{kind.name} messages source -> dest, slot", per_ss, holds))
        fields += [
            # the limit counters the actions read (not in the VIEW)
            f("restarts", 0, s["max_restarts"], (), "aux_ctrs.restart_ctr"),
            f("crashes", 0, s["max_crashes"], (), "aux_ctrs.crash_ctr"),
            f("connectivity_changes", 0, s["max_connectivity_changes"], (), "net_connectivity_ctr"),
            f("disruptions", 0, s["max_disruptive_election_triggers"], (), "aux_ctrs.disruptive_ctr (kip996)"),
            f("add_reconfigs", 0, s["max_add_reconfigs"], (), "aux_ctrs.add_reconfig_ctr"),
            f("remove_reconfigs", 0, s["max_remove_reconfigs"], (), "aux_ctrs.remove_reconfig_ctr"),
            f("started", s["init_cluster_size"], n, (), "Cardinality(StartedServers): servers 1..started have started"),
        ]
        self.schema = Schema(fields)

    def initial_states(self) -> list[State]:
        """Init: servers 1..InitClusterSize start, server 1 leads epoch 1, every log holds the
        InitClusterCommand, committed; the servers StartNewServer may start later hold blank
        values (no action reads them before it starts them)."""
        n, L, v = len(self.S), self.log_capacity, len(self.V)
        E = self.schema.by_name["epoch"].hi
        init = self.settings["init_cluster_size"]
        up = [a < init for a in self.S]

        def per(started: int, blank: int) -> list[int]:
            return [started if up[a] else blank for a in self.S]

        def slots(kind: Kind, value: int) -> list[list[list[int]]]:
            return [[[value] * self.capacity[kind.name] for _ in self.S] for _ in self.S]

        def log(first: int, rest: int = 0) -> list[list[int]]:
            return [[first if up[a] else rest] + [rest] * (L - 1) for a in self.S]

        members = sum(1 << t for t in range(init))
        values: dict[str, Any] = dict(
            host=[a if up[a] else 0 for a in self.S],
            cfg_id=per(1, 0), cfg_members=[[1 if up[a] and up[t] else 0 for t in self.S] for a in self.S],
            cfg_committed=per(1, 0), epoch=per(1, 0), role=per(VOTER, NIL_ROLE),
            state=[LEADER if a == 0 else FOLLOWER if up[a] else UNATTACHED for a in self.S], voted_for=[NONE] * n,
            leader=per(0, NONE), pf=[0] * n, pf_dest=[NONE] * n, pf_epoch=[0] * n, pf_offset=[0] * n,
            pf_last_epoch=[0] * n, pf_observer=[0] * n, lfr=[0] * n, lfr_peer=[NONE] * n, lfr_error=[0] * n,
            fetch_success=per(1 if self.kip996 else 0, 0),
            pending_ack=[[0] * v for _ in self.S], votes_recv=[[0] * n for _ in self.S],
            feo=[[1 if up[a] and up[t] else NONE for t in self.S] for a in self.S],
            log_len=per(1, 0), log_cmd=log(INIT_CLUSTER), log_epoch=log(1), log_value=log(0),
            log_cfg_id=log(1), log_members=log(members), log_server=log(NONE, NONE), hwm=per(1, 0),
            sent=[0] * v, pos_acked=[0] * v, neg_acked=[0] * v, connected=[1] * len(self.pairs),
            bqe_done=[[[0] * (E + 1) for _ in self.S] for _ in self.S], bqe_gone=[[0] * n for _ in self.S],
            pv_refused=[[[[0] * (E + 1) for _ in self.S] for _ in self.S] for _ in self.S],
            restarts=0, crashes=0, connectivity_changes=0, disruptions=0, add_reconfigs=0, remove_reconfigs=0,
            started=init,
        )
        for kind in KINDS:
            for name in kind.fields:
                values[name] = slots(kind, NONE if holds_server(name) else 0)
        return [self.schema.state(**values)]

    # -- sets, logs ------------------------------------------------------------------------

    def card(self, X: Backend, flags: Sequence[Int]) -> Int:
        """Cardinality of a set of servers (or values)."""
        return X.count([x == 1 for x in flags])

    def is_quorum(self, X: Backend, subset: Sequence[Bool], members: Sequence[Int]) -> Bool:
        """subset \\in Quorum(members): a subset of the members with more than half of them."""
        inside = X.all([X.implies(subset[t], members[t] == 1) for t in self.S])
        return X.and_(inside, 2 * X.count(list(subset)) > self.card(X, members))

    def last_epoch(self, s: StateView, X: Backend, a: int) -> Int:
        """LastEpoch(log[a])."""
        value: Int = 0
        for o in self.O:
            value = X.ite(s.log_len[a] == o + 1, s.log_epoch[a][o], value)
        return value

    def started(self, s: StateView, a: int) -> Bool:
        """a \\in StartedServers (servers start in order: 1..started)."""
        return s.started > a

    def has(self, s: StateView, a: int, o: int) -> Bool:
        """offset o + 1 \\in DOMAIN log[a]."""
        return o < s.log_len[a]

    def end_offset_for_epoch(self, s: StateView, X: Backend, a: int, epoch: Int) -> tuple[Int, Int]:
        """EndOffsetForEpoch: the highest offset of a's log with an epoch <= epoch, and that
        epoch; (0, 0) when none."""
        offset: Int = 0
        at: Int = 0
        for o in self.O:
            hit = X.and_(self.has(s, a, o), s.log_epoch[a][o] <= epoch)
            offset = X.ite(hit, o + 1, offset)
            at = X.ite(hit, s.log_epoch[a][o], at)
        return offset, at

    def valid_fetch_position(self, s: StateView, X: Backend, a: int, fetch_offset: Int, last_epoch: Int) -> Bool:
        """ValidFetchPosition: the follower's position is consistent with a's log."""
        end, at = self.end_offset_for_epoch(s, X, a, last_epoch)
        return X.or_(fetch_offset == 1, X.and_(fetch_offset <= end + 1, last_epoch == at))

    def highest_common_offset(self, s: StateView, X: Backend, a: int, end_offset: Int, epoch: Int) -> Int:
        """HighestCommonOffset(a, end_offset, epoch).offset: the highest entry of a's log at or
        below (end_offset, epoch), epoch first; 0 when none."""
        offset: Int = 0
        for o in self.O:
            below = X.or_(s.log_epoch[a][o] < epoch, X.and_(s.log_epoch[a][o] == epoch, o + 1 <= end_offset))
            offset = X.ite(X.and_(self.has(s, a, o), below), o + 1, offset)
        return offset

    def entry(self, s: StateView, a: int, o: int) -> list[Int]:
        """log[a][o + 1], its parts in ENTRY's order."""
        return [getattr(s, "log_" + part)[a][o] for part in ENTRY]

    def appended(self, s: StateView, X: Backend, a: int, entry: Sequence[Int]) -> Flat:
        """Append(log[a], entry) (entry's parts in ENTRY's order; a short one is padded
        with the blank value)."""
        full = list(entry) + list(BLANK_ENTRY[len(entry):])
        out: Flat = {("log_len", a): s.log_len[a] + 1}
        for o in self.O:
            here = s.log_len[a] == o
            for part, new, old in zip(ENTRY, full, self.entry(s, a, o)):
                out[("log_" + part, a, o)] = X.ite(here, new, old)
        return out

    def truncated(self, s: StateView, X: Backend, a: int, length: Int) -> Flat:
        """log[a] cut to its first `length` entries."""
        out: Flat = {("log_len", a): length}
        for o in self.O:
            keep = o < length
            for part, blank, old in zip(ENTRY, BLANK_ENTRY, self.entry(s, a, o)):
                out[("log_" + part, a, o)] = X.ite(keep, old, blank)
        return out

    # -- configurations ----------------------------------------------------------------------

    def member(self, X: Backend, mask: Int, t: int) -> Bool:
        """t \\in members, for members held as a bit mask."""
        return X.or_(*[mask == m for m in range(2 ** len(self.S)) if m >> t & 1])

    def mask(self, X: Backend, inside: Sequence[Bool]) -> Int:
        """A set of servers (t is in it when inside[t]) as a bit mask."""
        out: Int = X.ite(inside[0], 1, 0)
        for t in self.S[1:]:
            out = out + X.ite(inside[t], 1 << t, 0)
        return out

    def most_recent_config(self, X: Backend, length: Int, entries: Sequence[Sequence[Int]]) -> tuple[Int, Int, Int]:
        """MostRecentReconfigEntry of a log given as its length and its entries: the offset of
        its last configuration command, that command's id and members (all 0 for a log with none)."""
        offset: Int = 0
        cfg_id: Int = 0
        members: Int = 0
        for o in self.O:
            cmd = entries[o][0]
            hit = X.and_(o < length, X.or_(*[cmd == c for c in CONFIG_COMMANDS]))
            offset = X.ite(hit, o + 1, offset)
            cfg_id = X.ite(hit, entries[o][3], cfg_id)
            members = X.ite(hit, entries[o][4], members)
        return offset, cfg_id, members
