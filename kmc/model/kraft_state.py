"""The `kraft` model's state and the specification's operators (v3_5_functions, kip_966_functions).

The state is exactly what the specification's VIEW keeps (con_vars, broker_vars, part_vars,
the in-flight messages, inv_vars), laid out as bounded int fields, plus the auxiliary
variables the actions read (the limit counters, the next incarnation id, aux_flo). Sets of
brokers are 0/1 flags; a log is per-offset epoch and value; the metadata log is per-offset
records of which a broker keeps a prefix (its length); messages are slots keyed by what makes
an in-flight message unique: a fetch by (follower, leader), an AlterPartition request or
response by (leader, partition epoch), a registration by incarnation id. docs/kraft.md maps
every field to the specification's variable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from kmc.errors import BadInput
from kmc.model.core import NONE, Backend, Bool, Domain, Field, Int, Model, Option, Schema, State, StateView
from kmc.model.effects import Flat, cases, merge, row, when

MODES = {
    "v3.5": "Kafka 3.5's KRaft replication (kafka_replication_v3_5), with the last-replica-standing issue",
    "v3.5-avoid-lrs": "v3.5 with AvoidLastReplicaStanding = TRUE: no unclean shutdown of the last ISR member",
    "kip966": "KIP-966 eligible leader replicas (kafka_replication_kip_966): ELR and last-known ELR",
}

# broker_state.status
OFFLINE_CLEAN, OFFLINE_DIRTY, STARTING, RUNNING = 0, 1, 2, 3
STATUS = ("OFFLINE_CLEAN", "OFFLINE_DIRTY", "STARTING", "RUNNING")
# con_broker_reg.status
FENCED, UNFENCED = 0, 1
# partition_status
NIL_ROLE, LEADER, FOLLOWER = 0, 1, 2
ROLE = ("Nil", "Leader", "Follower")
# the kind of the fetch message in flight between a follower and a leader
NO_MESSAGE, FETCH_REQUEST, FETCH_RESPONSE = 0, 1, 2
# error codes (Nil: none)
NIL_ERROR, NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH, FENCED_LEADER_EPOCH, INELIGIBLE_REPLICA = 0, 1, 2, 3, 4
ERROR = ("Nil", "NotLeaderOrFollower", "UnknownLeaderEpoch", "FencedLeaderEpoch", "IneligibleReplica")


def broker_name(b: int) -> str:
    """Brokers as the specification numbers them: b1, b2, ... (or none)."""
    return "none" if b == NONE else f"b{b + 1}"


BROKER = Domain(lambda m: m.B, broker_name)
CANDIDATE = Domain(lambda m: (NONE, *m.B), broker_name)  # a leader the controller may elect, or none


@dataclass(frozen=True)
class PartitionMetadata:
    """A partition state as a replica applies it (ReplicaPartitionMetadata): lifted values."""

    replicas: Sequence[Int]
    isr: Sequence[Int]
    maximal_isr: Sequence[Int]
    leader: Int
    leader_epoch: Int
    partition_epoch: Int


class KraftState(Model):
    """Options, schema, initial state and the specification's operators (no actions)."""

    summary = "KRaft-era replication of one partition (TLA+ spec Vanlightly/kafka-tlaplus)"
    modes = MODES
    options = (
        Option("mode", "v3.5", "protocol variant", choices=tuple(MODES)),
        Option("brokers", 2, "BrokerCount", min=1, max=3),
        Option("replication_factor", 2, "InitReplicationFactor", min=1, max=3),
        Option("init_isr_size", 2, "InitIsrSize: replicas outside it start out of sync and fenced", min=1, max=3),
        Option("min_insync_replicas", 1, "MinISR (min.insync.replicas)", min=1, max=3),
        Option("values", 1, "|Values|: the records producers may write", min=1, max=2),
        Option("clean_shutdown_limit", 0, "CleanShutdownLimit (kip966: NoDataLossShutdownLimit)", min=0, max=1),
        Option("unclean_shutdown_limit", 0, "UncleanShutdownLimit (kip966: DataLossShutdownLimit)", min=0, max=1),
        Option("fence_broker_limit", 0, "FenceBrokerLimit", min=0, max=1),
        Option("leader_shrink_isr_limit", 0, "LeaderShrinkIsrLimit", min=0, max=1),
        Option("reassignment_limit", 0, "ReassignmentLimit (only 0: reassignment is not modelled)", min=0, max=0),
    )

    def _validate(self) -> None:
        s = self.settings
        if s["replication_factor"] > s["brokers"]:
            raise BadInput(f"--replication-factor ({s['replication_factor']}) must be at most --brokers ({s['brokers']})")
        if s["init_isr_size"] > s["replication_factor"]:
            raise BadInput(f"--init-isr-size ({s['init_isr_size']}) must be at most --replication-factor "
                           f"({s['replication_factor']})")
        if s["min_insync_replicas"] > s["init_isr_size"]:
            raise BadInput(f"--min-insync-replicas ({s['min_insync_replicas']}) must be at most --init-isr-size "
                           f"({s['init_isr_size']})")

    # -- layout ------------------------------------------------------------------------

    def _build(self) -> None:
        s = self.settings
        self.kip966 = self.mode == "kip966"
        self.avoid_lrs = self.mode == "v3.5-avoid-lrs"
        n = s["brokers"]
        self.B = range(n)
        self.V = range(s["values"])
        self.min_isr: int = s["min_insync_replicas"]
        self.replicas = [1 if b < s["replication_factor"] else 0 for b in self.B]  # CHOOSE: brokers 1..RF
        self.init_isr = [1 if b < s["init_isr_size"] else 0 for b in self.B]
        restarts = s["clean_shutdown_limit"] + s["unclean_shutdown_limit"]
        perturbations = restarts + s["fence_broker_limit"]
        out_of_sync = s["replication_factor"] - s["init_isr_size"]
        # every perturbation adds at most one partition change, and healing (unfence, register,
        # expand the ISR) at most three more; a shrink removes up to RF - 1 members at once; one
        # slot more than ever needed, so that tests can check the bound never binds
        self.md_capacity = 2 + 4 * perturbations + 2 * out_of_sync + s["leader_shrink_isr_limit"] * n
        self.md = range(self.md_capacity)
        self.max_epoch = self.md_capacity + 1  # leader and partition epochs start at 1 or 2, +1 per record
        self.epochs = range(self.max_epoch + 1)
        self.incarnations = range(n + 1, n + restarts + 1)  # ids BrokerStart may assign
        self.max_broker_epoch = n + restarts
        v = len(self.V)
        offsets = v + 1  # LEO and HWM are exclusive and 1-based: 1..|Values|+1
        E, BE = self.max_epoch, self.max_broker_epoch
        per_b, per_bb = (0,), (0, 1)
        last = n - 1

        def f(name: str, lo: int, hi: int, shape: tuple[int, ...] = (), doc: str = "",
              axes: tuple[int, ...] = (), holds: bool = False) -> Field:
            return Field(name, lo=lo, hi=hi, shape=shape, doc=doc, replica_axes=axes, holds_replica=holds)

        k, p = len(self.incarnations), E + 1
        self.schema = Schema([
            # controller (con_vars)
            f("reg_status", 0, 1, (n,), "con_broker_reg[b].status (1 UNFENCED: b in con_unfenced)", per_b),
            f("reg_epoch", 0, BE, (n,), "con_broker_reg[b].broker_epoch", per_b),
            f("reg_incarnation", 0, n + k, (n,), "con_broker_reg[b].incarnation_id", per_b),
            f("con_isr", 0, 1, (n,), "con_partition_metadata.isr", per_b),
            f("con_elr", 0, 1, (n,), "con_partition_metadata.elr (kip966)", per_b),
            f("con_last_known_elr", 0, 1, (n,), "con_partition_metadata.last_known_elr (kip966)", per_b),
            f("con_leader", NONE, last, (), "con_partition_metadata.leader", holds=True),
            f("con_leader_epoch", 0, E, (), "con_partition_metadata.leader_epoch"),
            f("con_partition_epoch", 0, E, (), "con_partition_metadata.partition_epoch"),
            f("md_len", 1, self.md_capacity, (), "Len(con_metadata_log)"),
            f("md_isr", 0, 1, (self.md_capacity, n), "con_metadata_log[o].isr", (1,)),
            f("md_elr", 0, 1, (self.md_capacity, n), "con_metadata_log[o].elr (kip966)", (1,)),
            f("md_last_known_elr", 0, 1, (self.md_capacity, n), "con_metadata_log[o].last_known_elr", (1,)),
            f("md_leader", NONE, last, (self.md_capacity,), "con_metadata_log[o].leader", holds=True),
            f("md_leader_epoch", 0, E, (self.md_capacity,), "con_metadata_log[o].leader_epoch"),
            f("md_partition_epoch", 0, E, (self.md_capacity,), "con_metadata_log[o].partition_epoch"),
            # brokers (broker_vars)
            f("status", 0, RUNNING, (n,), "broker_state[b].status", per_b),
            f("broker_epoch", 0, BE, (n,), "broker_state[b].broker_epoch", per_b),
            f("incarnation", 0, n + k, (n,), "broker_state[b].incarnation_id", per_b),
            f("registered", 0, 1, (n,), "broker_state[b].registered", per_b),
            f("fetch_offset", NONE, offsets, (n, n), "broker_fetchers[b][l].partition.fetch_offset (-1: Nil)", per_bb),
            f("fetch_last_epoch", 0, E, (n, n), "broker_fetchers[b][l].partition.last_fetched_epoch", per_bb),
            f("fetch_delayed", 0, 1, (n, n), "broker_fetchers[b][l].partition.delayed", per_bb),
            f("fetch_pending", 0, 1, (n, n), "broker_fetchers[b][l].pending_response", per_bb),
            f("md_applied", 0, self.md_capacity, (n,), "Len(broker_metadata_log[b]) (a prefix of the controller's)",
              per_b),
            # partition replicas (part_vars)
            f("role", 0, FOLLOWER, (n,), "partition_status[b]: 0 Nil, 1 Leader, 2 Follower", per_b),
            f("pm_replicas", 0, 1, (n, n), "partition_metadata[b].replicas", per_bb),
            f("pm_isr", 0, 1, (n, n), "partition_metadata[b].isr", per_bb),
            f("pm_maximal_isr", 0, 1, (n, n), "partition_metadata[b].maximal_isr", per_bb),
            f("pm_leader", NONE, last, (n,), "partition_metadata[b].leader", per_b, True),
            f("pm_leader_epoch", 0, E, (n,), "partition_metadata[b].leader_epoch", per_b),
            f("pm_partition_epoch", 0, E, (n,), "partition_metadata[b].partition_epoch", per_b),
            f("log_epoch", NONE, E, (n, v), "partition_data[b].log[o].epoch", per_b),
            f("log_value", NONE, v - 1, (n, v), "partition_data[b].log[o].value", per_b),
            f("leo", 1, offsets, (n,), "partition_data[b].leo", per_b),
            f("hwm", 1, offsets, (n,), "partition_data[b].hwm", per_b),
            f("leso", NONE, offsets, (n,), "partition_leso[b] (-1: Nil)", per_b),
            f("rs_leo", NONE, offsets, (n, n), "partition_replica_state[b][f].leo (-1: Nil)", per_bb),
            f("rs_broker_epoch", 0, BE, (n, n), "partition_replica_state[b][f].broker_epoch", per_bb),
            f("ap_epoch", 0, E + 1, (n,), "partition_pending_ap[b].epoch", per_b),
            f("ap_isr", 0, 1, (n, n), "partition_pending_ap[b].request.isr (all 0: Nil)", per_bb),
            f("ap_isr_epochs", 0, BE, (n, n), "partition_pending_ap[b].request.isr_and_epochs", per_bb),
            f("ap_leader_epoch", 0, E, (n,), "partition_pending_ap[b].request.leader_epoch", per_b),
            f("ap_broker_epoch", 0, BE, (n,), "partition_pending_ap[b].request.broker_epoch", per_b),
            # messages in flight (NetworkView)
            f("reg_request", NONE, last, (k,), "RegisterBrokerRequest of incarnation i: its broker", holds=True),
            f("reg_request_epoch", 0, BE, (k,), "RegisterBrokerRequest.broker_epoch (kip966)"),
            f("reg_response", NONE, last, (k,), "RegisterBrokerResponse of incarnation i: its broker", holds=True),
            f("reg_response_epoch", 0, BE, (k,), "RegisterBrokerResponse.broker_epoch"),
            f("reg_response_offset", 0, self.md_capacity, (k,), "RegisterBrokerResponse.metadata_offset"),
            f("apq", 0, 1, (n, p), "an AlterPartitionRequest from b with partition_epoch p", per_b),
            f("apq_isr", 0, 1, (n, p, n), "its isr", (0, 2)),
            f("apq_isr_epochs", 0, BE, (n, p, n), "its isr_and_epochs", (0, 2)),
            f("apq_leader_epoch", 0, E, (n, p), "its leader_epoch", per_b),
            f("apq_broker_epoch", 0, BE, (n, p), "its broker_epoch", per_b),
            f("aps", 0, 1, (n, p), "an AlterPartitionResponse to b for its request with partition_epoch p", per_b),
            f("aps_error", 0, INELIGIBLE_REPLICA, (n, p), "its error (0: Nil)", per_b),
            f("aps_isr", 0, 1, (n, p, n), "its isr", (0, 2)),
            f("aps_leader", NONE, last, (n, p), "its leader", per_b, True),
            f("aps_leader_epoch", 0, E, (n, p), "its leader_epoch", per_b),
            f("aps_partition_epoch", 0, E, (n, p), "its partition_epoch", per_b),
            f("aps_req_isr", 0, 1, (n, p, n), "its request's isr", (0, 2)),
            f("aps_req_isr_epochs", 0, BE, (n, p, n), "its request's isr_and_epochs", (0, 2)),
            f("aps_req_leader_epoch", 0, E, (n, p), "its request's leader_epoch", per_b),
            f("aps_req_broker_epoch", 0, BE, (n, p), "its request's broker_epoch", per_b),
            f("fm", NO_MESSAGE, FETCH_RESPONSE, (n, n), "fetch message from follower f to leader l: 1 request, "
              "2 response (to f)", per_bb),
            f("fm_broker_epoch", 0, BE, (n, n), "FetchRequest.broker_epoch", per_bb),
            f("fm_leader_epoch", 0, E, (n, n), "partition.leader_epoch", per_bb),
            f("fm_fetch_offset", 0, offsets, (n, n), "partition.fetch_offset", per_bb),
            f("fm_last_epoch", 0, E, (n, n), "FetchRequest partition.last_fetched_epoch", per_bb),
            f("fm_error", 0, INELIGIBLE_REPLICA, (n, n), "FetchResponse partition.error", per_bb),
            f("fm_diverging_epoch", NONE, E, (n, n), "FetchResponse diverging_epoch.epoch (-1: Nil)", per_bb),
            f("fm_diverging_offset", NONE, offsets, (n, n), "FetchResponse diverging_epoch.offset", per_bb),
            f("fm_hwm", 0, offsets, (n, n), "FetchResponse partition.hwm", per_bb),
            f("fm_record_epoch", NONE, E, (n, n), "FetchResponse record epoch (-1: no record)", per_bb),
            f("fm_record_value", NONE, v - 1, (n, n), "FetchResponse record value", per_bb),
            # invariant variables (inv_vars)
            f("sent", 0, 1, (v,), "inv_sent"),
            f("pos_acked", 0, 1, (v,), "inv_pos_acked"),
            f("neg_acked", 0, 1, (v,), "inv_neg_acked"),
            f("true_hwm", 1, offsets, (), "inv_true_hwm"),
            f("consumed_epoch", NONE, E, (v,), "inv_consumed[o].epoch (length inv_true_hwm - 1)"),
            f("consumed_value", NONE, v - 1, (v,), "inv_consumed[o].value"),
            # auxiliary variables the actions read (not in the VIEW)
            f("flo", NONE, offsets, (n,), "aux_flo[b] (-1: IntMax)", per_b),
            f("next_incarnation", n + 1, n + k + 1, (), "aux_ctrs.incarn_ctr"),
            f("clean_shutdowns", 0, s["clean_shutdown_limit"], (), "aux_ctrs.clean_shutdown_ctr"),
            f("unclean_shutdowns", 0, s["unclean_shutdown_limit"], (), "aux_ctrs.unclean_shutdown_ctr"),
            f("fences", 0, s["fence_broker_limit"], (), "aux_ctrs.fence_broker_ctr"),
            f("shrinks", 0, s["leader_shrink_isr_limit"], (), "aux_ctrs.leader_shrink_isr_ctr"),
        ])

    def initial_states(self) -> list[State]:
        """Init: broker 1 leads in leader epoch 1; the replicas outside the initial ISR start
        fenced, with a stale metadata log and partition epoch 1."""
        n, v, L = len(self.B), len(self.V), self.md_capacity
        k, p = len(self.incarnations), self.max_epoch + 1
        in_sync = self.init_isr
        stale = [r - i for r, i in zip(self.replicas, in_sync)]
        part_epoch = 1 if in_sync == self.replicas else 2
        zeros, nones = [0] * n, [NONE] * n

        def square(value: int) -> list[list[int]]:
            return [[value] * n for _ in self.B]

        def per_slot(value: int) -> list[list[int]]:
            return [[value] * p for _ in self.B]

        def per_slot_b(value: int) -> list[list[list[int]]]:
            return [[[value] * n for _ in range(p)] for _ in self.B]

        md_isr = [list(in_sync) if o == 0 else list(zeros) for o in self.md]
        follower_offset = [[1 if (b != 0 and l == 0) else NONE for l in self.B] for b in self.B]
        return [self.schema.state(
            reg_status=[1 - x for x in stale], reg_epoch=[b + 1 for b in self.B],
            reg_incarnation=[b + 1 for b in self.B],
            con_isr=list(in_sync), con_elr=zeros, con_last_known_elr=zeros, con_leader=0, con_leader_epoch=1,
            con_partition_epoch=part_epoch, md_len=1, md_isr=md_isr, md_elr=[list(zeros) for _ in self.md],
            md_last_known_elr=[list(zeros) for _ in self.md], md_leader=[0] + [NONE] * (L - 1),
            md_leader_epoch=[1] + [0] * (L - 1), md_partition_epoch=[part_epoch] + [0] * (L - 1),
            status=[RUNNING] * n, broker_epoch=[b + 1 for b in self.B], incarnation=[b + 1 for b in self.B],
            registered=[1] * n, fetch_offset=follower_offset, fetch_last_epoch=square(0),
            fetch_delayed=square(0), fetch_pending=square(0), md_applied=[1 - x for x in stale],
            role=[LEADER if b == 0 else (FOLLOWER if self.replicas[b] else NIL_ROLE) for b in self.B],
            pm_replicas=[list(self.replicas) if self.replicas[b] else list(zeros) for b in self.B],
            pm_isr=[list(self.replicas if stale[b] else in_sync) if self.replicas[b] else list(zeros)
                    for b in self.B],
            pm_maximal_isr=[list(self.replicas if stale[b] else in_sync) if self.replicas[b] else list(zeros)
                            for b in self.B],
            pm_leader=[0 if self.replicas[b] else NONE for b in self.B],
            pm_leader_epoch=[1 if self.replicas[b] else 0 for b in self.B],
            pm_partition_epoch=[(1 if stale[b] else part_epoch) if self.replicas[b] else 0 for b in self.B],
            log_epoch=[[NONE] * v for _ in self.B], log_value=[[NONE] * v for _ in self.B],
            leo=[1] * n, hwm=[1] * n, leso=[1 if b == 0 else NONE for b in self.B],
            rs_leo=square(NONE), rs_broker_epoch=square(0),
            ap_epoch=zeros, ap_isr=square(0), ap_isr_epochs=square(0), ap_leader_epoch=zeros,
            ap_broker_epoch=zeros,
            reg_request=[NONE] * k, reg_request_epoch=[0] * k, reg_response=[NONE] * k,
            reg_response_epoch=[0] * k, reg_response_offset=[0] * k,
            apq=per_slot(0), apq_isr=per_slot_b(0), apq_isr_epochs=per_slot_b(0), apq_leader_epoch=per_slot(0),
            apq_broker_epoch=per_slot(0), aps=per_slot(0), aps_error=per_slot(0), aps_isr=per_slot_b(0),
            aps_leader=per_slot(NONE), aps_leader_epoch=per_slot(0), aps_partition_epoch=per_slot(0),
            aps_req_isr=per_slot_b(0), aps_req_isr_epochs=per_slot_b(0), aps_req_leader_epoch=per_slot(0),
            aps_req_broker_epoch=per_slot(0),
            fm=square(NO_MESSAGE), fm_broker_epoch=square(0), fm_leader_epoch=square(0),
            fm_fetch_offset=square(0), fm_last_epoch=square(0), fm_error=square(0),
            fm_diverging_epoch=square(NONE), fm_diverging_offset=square(0), fm_hwm=square(0),
            fm_record_epoch=square(NONE), fm_record_value=square(NONE),
            sent=[0] * v, pos_acked=[0] * v, neg_acked=[0] * v, true_hwm=1,
            consumed_epoch=[NONE] * v, consumed_value=[NONE] * v,
            flo=nones, next_incarnation=n + 1, clean_shutdowns=0, unclean_shutdowns=0, fences=0, shrinks=0,
        )]

    # -- helpers ---------------------------------------------------------------------------

    def card(self, X: Backend, flags: Sequence[Int]) -> Int:
        """Cardinality of a set of brokers."""
        return X.count([x == 1 for x in flags])

    def same_set(self, X: Backend, a: Sequence[Int], b: Sequence[Int]) -> Bool:
        return X.all([x == y for x, y in zip(a, b)])

    def unfenced(self, s: StateView) -> list[Int]:
        """con_unfenced: the brokers the controller has UNFENCED."""
        return list(s.reg_status)

    def last_log_epoch(self, s: StateView, X: Backend, b: int) -> Int:
        """IF LogOf(b) = <<>> THEN 0 ELSE Last(LogOf(b)).epoch"""
        value: Int = 0
        for o in self.V:
            value = X.ite(s.leo[b] == o + 2, s.log_epoch[b][o], value)
        return value

    def has_entry(self, s: StateView, X: Backend, b: int, o: int) -> Bool:
        """offset o + 1 is in LogOffsets(b)."""
        return o + 1 < s.leo[b]

    # -- CommitOffset*, SendAcksFor, MaybeAdvanceHighWatermark -----------------------------

    def commit_offset(self, s: StateView, X: Backend, b: int, maximal_isr: Sequence[Int], leo: Int,
                      rs_leo: Sequence[Int]) -> Int:
        """GetCommitOffset: the highest offset below leo that every member of the maximal ISR
        (the leader counts itself) has fetched past; 0 when none (or the leader's log is empty)."""
        bound: Int = leo - 1
        for f in self.B:
            if f != b:
                fetched = X.ite(rs_leo[f] == NONE, 0, rs_leo[f] - 1)
                bound = X.ite(maximal_isr[f] == 1, X.min_(bound, fetched), bound)
        return X.ite(s.leo[b] == 1, 0, X.max_(bound, 0))

    def send_acks_for(self, s: StateView, X: Backend, b: int, lower: Int, higher: Int, positive: bool) -> Flat:
        """SendAcksFor: acknowledge (positively or not) the unacknowledged values b holds at
        offsets lower..higher at or above its floor leader offset."""
        out: Flat = {}
        target = "pos_acked" if positive else "neg_acked"
        for v in self.V:
            held = X.any([X.and_(lower <= o + 1, o + 1 <= higher, self.has_entry(s, X, b, o),
                                 s.log_value[b][o] == v, s.flo[b] != NONE, o + 1 >= s.flo[b]) for o in self.V])
            ack = X.and_(s.sent[v] == 1, s.pos_acked[v] == 0, s.neg_acked[v] == 0, held)
            out[(target, v)] = X.ite(ack, 1, getattr(s, target)[v])
        return out

    def update_hwm_invariant_vars(self, s: StateView, X: Backend, b: int, old_hwm: Int, new_hwm: Int,
                                  positive: bool) -> Flat:
        """UpdateHwmInvariantVars: acknowledgements, the true HWM and what consumers read."""
        higher = new_hwm - 1 if positive else s.leo[b] - 1
        acks = self.send_acks_for(s, X, b, old_hwm, higher, positive)
        out: Flat = {("true_hwm",): X.max_(s.true_hwm, new_hwm)}
        for o in self.V:
            read = X.and_(s.true_hwm <= o + 1, o + 1 <= new_hwm - 1)
            out[("consumed_epoch", o)] = X.ite(read, s.log_epoch[b][o], s.consumed_epoch[o])
            out[("consumed_value", o)] = X.ite(read, s.log_value[b][o], s.consumed_value[o])
        return merge(acks, out)

    def can_advance_hwm(self, X: Backend, isr: Sequence[Int], old_hwm: Int, new_hwm: Int) -> Bool:
        """v3.5: the HWM only moves up; kip966 (CanAdvanceHwm): and only with ISR >= MinISR."""
        if self.kip966:
            return X.and_(new_hwm > old_hwm, self.card(X, isr) >= self.min_isr)
        return new_hwm > old_hwm

    def maybe_advance_high_watermark(self, s: StateView, X: Backend, b: int, isr: Sequence[Int], old_hwm: Int,
                                     new_hwm: Int, positive: Bool) -> Flat:
        """MaybeAdvanceHighWatermark (`positive` may be state-dependent: both acks are built)."""
        pos = merge({("hwm", b): new_hwm}, self.update_hwm_invariant_vars(s, X, b, old_hwm, new_hwm, True))
        neg = merge({("hwm", b): new_hwm}, self.update_hwm_invariant_vars(s, X, b, old_hwm, new_hwm, False))
        advance = self.can_advance_hwm(X, isr, old_hwm, new_hwm)
        if isinstance(positive, bool):
            return when(s, X, advance, pos if positive else neg)
        return cases(s, X, [(X.and_(advance, positive), pos), (advance, neg)])

    def maybe_update_hwm_and_ack_on_partition_change(self, s: StateView, X: Backend, b: int,
                                                     md: PartitionMetadata) -> Flat:
        """MaybeUpdateHwmAndAckOnPartitionChange: the HWM over the new maximal ISR; a positive
        acknowledgement if that ISR still has MinISR members, else a negative one."""
        new_hwm = self.commit_offset(s, X, b, md.maximal_isr, s.leo[b], s.rs_leo[b]) + 1
        positive = self.card(X, md.maximal_isr) >= self.min_isr
        return self.maybe_advance_high_watermark(s, X, b, md.isr, s.hwm[b], new_hwm, positive)

    def fail_pending_writes(self, s: StateView, X: Backend, b: int) -> Flat:
        """FailPendingWrites: negatively acknowledge what lies above the HWM."""
        return self.send_acks_for(s, X, b, s.hwm[b], s.leo[b] - 1, False)

    def maybe_fail_pending_writes(self, s: StateView, X: Backend, b: int, md: PartitionMetadata) -> Flat:
        """MaybeFailPendingWrites: when the ISR fell below MinISR or b lost leadership."""
        fail = X.and_(s.hwm[b] < s.leo[b], X.or_(self.card(X, md.isr) < self.min_isr, md.leader != b))
        return when(s, X, fail, self.fail_pending_writes(s, X, b))

    # -- resets -----------------------------------------------------------------------------

    def reset_pending_alter_partition(self, b: int) -> Flat:
        return merge({("ap_epoch", b): 0, ("ap_leader_epoch", b): 0, ("ap_broker_epoch", b): 0},
                     row("ap_isr", b, [0] * len(self.B)), row("ap_isr_epochs", b, [0] * len(self.B)))

    def reset_follower_state(self, b: int, keep: Sequence[Bool] | None = None, s: Any = None,
                             X: Any = None) -> Flat:
        """ResetAllFollowerState, or with `keep` ResetFollowerStateOfAllButISR."""
        out: Flat = {}
        for f in self.B:
            if keep is None:
                out[("rs_leo", b, f)], out[("rs_broker_epoch", b, f)] = NONE, 0
            else:
                out[("rs_leo", b, f)] = X.ite(keep[f], s.rs_leo[b][f], NONE)
                out[("rs_broker_epoch", b, f)] = X.ite(keep[f], s.rs_broker_epoch[b][f], 0)
        return out

    def reset_pending_acks(self, b: int) -> Flat:
        return {("flo", b): NONE}

    def remove_partition_from_fetchers(self, b: int) -> Flat:
        out: Flat = {}
        for l in self.B:
            out[("fetch_offset", b, l)], out[("fetch_last_epoch", b, l)], out[("fetch_delayed", b, l)] = NONE, 0, 0
        return out

    def set_partition_metadata(self, b: int, md: PartitionMetadata) -> Flat:
        return merge(row("pm_replicas", b, md.replicas), row("pm_isr", b, md.isr),
                     row("pm_maximal_isr", b, md.maximal_isr),
                     {("pm_leader", b): md.leader, ("pm_leader_epoch", b): md.leader_epoch,
                      ("pm_partition_epoch", b): md.partition_epoch})

    def blank_metadata(self) -> PartitionMetadata:
        zeros = [0] * len(self.B)
        return PartitionMetadata(zeros, zeros, zeros, NONE, 0, 0)

    def pending_alter_partition_response(self, s: StateView, b: int) -> Bool:
        """PendingAlterPartitionResponse: a response with a higher partition epoch is awaited."""
        return s.ap_epoch[b] > s.pm_partition_epoch[b]

    # -- LastOffsetForEpoch ----------------------------------------------------------------

    def last_offset_for_epoch(self, s: StateView, X: Backend, b: int, req_epoch: Int,
                              is_leader: bool) -> tuple[Int, Int]:
        """LastOffsetForEpoch: (the highest epoch <= req_epoch in b's log, the start offset of
        the next higher epoch, exclusive); the leader counts its current epoch as higher."""
        empty = s.leo[b] == 1
        exact = X.or_(empty, req_epoch == self.last_log_epoch(s, X, b))
        if is_leader:
            exact = X.or_(exact, s.pm_leader_epoch[b] == req_epoch)
        higher: Int = X.ite(s.pm_leader_epoch[b] > req_epoch, s.leo[b], NONE) if is_leader else NONE
        for o in reversed(self.V):  # the first offset holding an epoch above req_epoch
            higher = X.ite(X.and_(self.has_entry(s, X, b, o), s.log_epoch[b][o] > req_epoch), o + 1, higher)
        floor: Int = req_epoch
        for o in self.V:  # epochs grow along the log: the last one <= req_epoch
            floor = X.ite(X.and_(self.has_entry(s, X, b, o), s.log_epoch[b][o] <= req_epoch), s.log_epoch[b][o],
                          floor)
        return X.ite(exact, req_epoch, floor), X.ite(exact, s.leo[b], higher)

    # -- DropFetchSessions -------------------------------------------------------------------

    def drop_fetch_sessions(self, s: StateView, X: Backend, b: int) -> Flat:
        """DropFetchSessions: in-flight fetches to or from b vanish; b's fetchers are blank and
        fetchers waiting on b give up (delayed)."""
        out: Flat = {}
        for x in self.B:
            for y in self.B:
                if b in (x, y):
                    out[("fm", x, y)] = NO_MESSAGE
                    out.update(self.no_fetch_fields(x, y))
        for f in self.B:
            for l in self.B:
                if f == b:
                    out.update({("fetch_offset", f, l): NONE, ("fetch_last_epoch", f, l): 0,
                                ("fetch_delayed", f, l): 0, ("fetch_pending", f, l): 0})
                elif l == b:
                    waiting = s.fetch_pending[f][b] == 1
                    added = s.fetch_offset[f][b] != NONE
                    out[("fetch_pending", f, l)] = X.ite(waiting, 0, s.fetch_pending[f][b])
                    out[("fetch_delayed", f, l)] = X.ite(X.and_(waiting, added), 1, s.fetch_delayed[f][b])
        return out

    def no_fetch_fields(self, f: int, l: int) -> Flat:
        """The fields of an empty fetch slot."""
        return {("fm_broker_epoch", f, l): 0, ("fm_leader_epoch", f, l): 0, ("fm_fetch_offset", f, l): 0,
                ("fm_last_epoch", f, l): 0, ("fm_error", f, l): 0, ("fm_diverging_epoch", f, l): NONE,
                ("fm_diverging_offset", f, l): 0, ("fm_hwm", f, l): 0, ("fm_record_epoch", f, l): NONE,
                ("fm_record_value", f, l): NONE}
