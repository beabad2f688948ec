"""KRaft-era replication of one partition, at the level of the public TLA+ specification
Vanlightly/kafka-tlaplus (kafka_data_replication/kraft/v3.5 and kip-966).

Brokers register with the KRaft controller and get broker epochs; the controller fences and
unfences them, elects leaders and changes the ISR, appending a PartitionChangeRecord to the
metadata log for every change; brokers apply those records in order. Leaders take writes,
answer fetches (with diverging-epoch truncation) and advance the high watermark over their
maximal ISR; they change the ISR through AlterPartition requests fenced by partition epoch.
Brokers shut down cleanly, or uncleanly, losing their log. Modes:

- v3.5:           Kafka 3.5 (kafka_replication_v3_5), which has the last-replica-standing issue
- v3.5-avoid-lrs: the same with AvoidLastReplicaStanding = TRUE
- kip966:         KIP-966's eligible leader replicas (kafka_replication_kip_966)

Each action is one of the specification's actions, under its name in snake_case; the
specification's inner choices (which message, which metadata offset, which timed-out
followers, which leader the controller elects) are the action's parameters. Controller
actions are in kraft_controller.py, the state and the shared operators in kraft_state.py,
the way states print in kraft_view.py. docs/kraft.md maps every field, action and invariant
to the specification and gives the parity with TLC.
"""

from __future__ import annotations

from typing import Sequence

from kmc.model.core import (
    NONE, Action, Backend, Bool, Domain, Effect, Int, Lane, Lanes, Message, State, StateView, action, distinct,
)
from kmc.model.kraft_controller import PARTITION_EPOCH, KraftController
from kmc.model.effects import Flat, cases, merge, nested, row, when
from kmc.model.kraft_state import (
    BROKER, CANDIDATE, FENCED, FETCH_REQUEST, FETCH_RESPONSE, FENCED_LEADER_EPOCH, FOLLOWER, LEADER, NIL_ERROR,
    NIL_ROLE, NO_MESSAGE, NOT_LEADER_OR_FOLLOWER, OFFLINE_CLEAN, OFFLINE_DIRTY, RUNNING, STARTING,
    UNKNOWN_LEADER_EPOCH, PartitionMetadata,
)
from kmc.model.kraft_view import describe_state

INCARNATION = Domain(lambda m: range(len(m.incarnations)), lambda i: f"#{i}")
METADATA_OFFSET = Domain(lambda m: m.md, lambda o: str(o + 1))
TIMED_OUT = Domain(lambda m: range(2 ** len(m.B)),
                   lambda mask: "{" + ",".join(f"b{b + 1}" for b in range(8) if mask >> b & 1) + "}")
VALUE = Domain(lambda m: m.V, lambda v: "ABCDEFGH"[v])
CLEAN = Domain(lambda m: (0, 1), lambda c: "clean" if c else "unclean")


class Kraft(KraftController):
    name = "kraft"
    lanes = Lanes(
        Lane("controller"), Lane("broker", BROKER),
        local={"write_record_to_leader": "broker", "unclean_shutdown": "broker", "clean_shutdown": "broker",
               "data_loss_shutdown": "broker", "no_data_loss_shutdown": "broker",
               "fence_broker": "controller", "unfence_broker": "controller"},
        messages=[
            Message("BrokerRegistration", "broker", "controller",
                    sent_by="broker_start", received_by="receive_broker_reg_request"),
            Message("BrokerRegistrationResponse", "controller", "broker",
                    sent_by="receive_broker_reg_request", received_by="receive_broker_reg_response"),
            Message("MetadataRecord", "controller", "broker", received_by="receive_metadata_update"),
            Message("AlterPartition", "broker", "controller",
                    sent_by="send_alter_partition_request", received_by="receive_alter_partition_request"),
            Message("AlterPartitionResponse", "controller", "broker",
                    sent_by="receive_alter_partition_request", received_by="receive_alter_partition_response"),
            Message("Fetch", "follower", "leader", sent_by="send_fetch_request", received_by="receive_fetch_request"),
            Message("FetchResponse", "leader", "follower",
                    sent_by="receive_fetch_request", received_by="receive_fetch_response"),
        ],
    )

    def actions(self) -> Sequence[Action]:
        """Next, in the specification's order of disjuncts."""
        shutdowns = ([self.data_loss_shutdown, self.no_data_loss_shutdown] if self.kip966
                     else [self.unclean_shutdown, self.clean_shutdown])
        return [self.broker_start, self.receive_broker_reg_response, self.receive_metadata_update,
                self.send_alter_partition_request, self.receive_alter_partition_response, self.send_fetch_request,
                self.receive_fetch_request, self.receive_fetch_response, self.write_record_to_leader, *shutdowns,
                self.receive_broker_reg_request, self.receive_alter_partition_request, self.fence_broker,
                self.unfence_broker]

    def describe(self, state: State) -> dict[str, str]:
        return describe_state(self, state)

    # -- broker lifecycle ----------------------------------------------------------------------

    @action(broker=BROKER, incarnation=INCARNATION)
    def broker_start(self, s: StateView, X: Backend, b: int, i: int) -> Bool:
        """BrokerStart: a stopped broker starts (STARTING) and asks the controller to register
        it under a new incarnation id (kip966: with the broker epoch it saved on a clean stop)."""
        return X.and_(s.status[b] <= OFFLINE_DIRTY, s.next_incarnation == self.incarnations[i])

    @broker_start.effect
    def _(self, s: StateView, X: Backend, b: int, i: int) -> Effect:
        epoch = s.broker_epoch[b] if self.kip966 else 0
        return nested({("status", b): STARTING, ("broker_epoch", b): epoch, ("incarnation", b): self.incarnations[i],
                       ("registered", b): 0, ("role", b): NIL_ROLE, ("reg_request", i): b,
                       ("reg_request_epoch", i): epoch, ("next_incarnation",): s.next_incarnation + 1})

    @action(broker=BROKER, incarnation=INCARNATION)
    def receive_broker_reg_response(self, s: StateView, X: Backend, b: int, i: int) -> Bool:
        """ReceiveBrokerRegResponse: a starting broker learns its broker epoch and runs; it
        catches up with the metadata log but one record, which will set up its replica."""
        return X.and_(s.reg_response[i] == b, s.status[b] == STARTING, s.registered[b] == 0,
                      s.incarnation[b] == self.incarnations[i])

    @receive_broker_reg_response.effect
    def _(self, s: StateView, X: Backend, b: int, i: int) -> Effect:
        return nested(merge(
            {("status", b): RUNNING, ("broker_epoch", b): s.reg_response_epoch[i], ("registered", b): 1,
             ("md_applied", b): X.max_(s.reg_response_offset[i] - 1, 0), ("reg_response", i): NONE,
             ("reg_response_epoch", i): 0, ("reg_response_offset", i): 0},
            self.set_partition_metadata(b, self.blank_metadata())))

    def shutdown(self, s: StateView, X: Backend, b: int, cand: int, dirty: bool, epoch: Int) -> Flat:
        """UncleanShutdown and CleanShutdown (kip966: DataLossShutdown, NoDataLossShutdown):
        the broker stops, its fetch sessions drop, a leader fails its pending writes, and the
        controller fences it; an unclean stop also loses the log."""
        out = merge(
            {("status", b): OFFLINE_DIRTY if dirty else OFFLINE_CLEAN, ("broker_epoch", b): epoch,
             ("incarnation", b): 0, ("registered", b): 0},
            self.drop_fetch_sessions(s, X, b), {("role", b): NIL_ROLE},
            self.reset_follower_state(b), self.reset_pending_alter_partition(b),
            when(s, X, X.and_(s.role[b] == LEADER, s.hwm[b] < s.leo[b]), self.fail_pending_writes(s, X, b)),
            self.handle_broker_fenced(s, X, b, cand)[1], {("reg_status", b): FENCED}, self.reset_pending_acks(b))
        if dirty:
            out.update({("leo", b): 1, ("hwm", b): 1, ("leso", b): NONE})
            out.update(row("log_epoch", b, [NONE] * len(self.V)))
            out.update(row("log_value", b, [NONE] * len(self.V)))
            out[("unclean_shutdowns",)] = s.unclean_shutdowns + 1
        else:
            out[("clean_shutdowns",)] = s.clean_shutdowns + 1
        return out

    def may_shut_down(self, s: StateView, X: Backend, b: int, cand: int, dirty: bool) -> Bool:
        limit, count = ((self.settings["unclean_shutdown_limit"], s.unclean_shutdowns) if dirty
                        else (self.settings["clean_shutdown_limit"], s.clean_shutdowns))
        ok = X.and_(count < limit, s.status[b] >= STARTING,
                    self.handle_broker_fenced(s, X, b, cand, effect=False)[0])
        if dirty and self.avoid_lrs:  # AvoidLastReplicaStanding
            ok = X.and_(ok, X.not_(X.and_(s.con_isr[b] == 1, self.card(X, s.con_isr) == 1)))
        return ok

    @action(broker=BROKER, leader=CANDIDATE)
    def unclean_shutdown(self, s: StateView, X: Backend, b: int, cand: int) -> Bool:
        """UncleanShutdown: the broker crashes and loses its partition log (at most
        --unclean-shutdown-limit times); the controller fences it."""
        return self.may_shut_down(s, X, b, cand, True)

    @unclean_shutdown.effect
    def _(self, s: StateView, X: Backend, b: int, cand: int) -> Effect:
        return nested(self.shutdown(s, X, b, cand, True, 0))

    @action(broker=BROKER, leader=CANDIDATE)
    def clean_shutdown(self, s: StateView, X: Backend, b: int, cand: int) -> Bool:
        """CleanShutdown: the broker stops and keeps its log (at most --clean-shutdown-limit
        times); the controller fences it."""
        return self.may_shut_down(s, X, b, cand, False)

    @clean_shutdown.effect
    def _(self, s: StateView, X: Backend, b: int, cand: int) -> Effect:
        return nested(self.shutdown(s, X, b, cand, False, 0))

    @action(broker=BROKER, leader=CANDIDATE)
    def data_loss_shutdown(self, s: StateView, X: Backend, b: int, cand: int) -> Bool:
        """DataLossShutdown (KIP-966): the broker crashes and loses its partition log (at most
        --unclean-shutdown-limit times); the controller fences it."""
        return self.may_shut_down(s, X, b, cand, True)

    @data_loss_shutdown.effect
    def _(self, s: StateView, X: Backend, b: int, cand: int) -> Effect:
        return nested(self.shutdown(s, X, b, cand, True, 0))

    @action(broker=BROKER, shutdown=CLEAN, leader=CANDIDATE)
    def no_data_loss_shutdown(self, s: StateView, X: Backend, b: int, clean: int, cand: int) -> Bool:
        """NoDataLossShutdown (KIP-966): the broker stops keeping its log; a clean stop saves its
        broker epoch to disk, an unclean one does not (at most --clean-shutdown-limit times)."""
        return self.may_shut_down(s, X, b, cand, False)

    @no_data_loss_shutdown.effect
    def _(self, s: StateView, X: Backend, b: int, clean: int, cand: int) -> Effect:
        return nested(self.shutdown(s, X, b, cand, False, s.broker_epoch[b] if clean else 0))

    # -- metadata log ----------------------------------------------------------------------------

    @action(broker=BROKER, offset=METADATA_OFFSET)
    def receive_metadata_update(self, s: StateView, X: Backend, b: int, o: int) -> Bool:
        """ReceiveMetadataUpdate: a broker applies the metadata log up to offset o, when that
        record concerns its replica: it stays or becomes leader or follower, or waits for a
        leader; a leader advances its HWM or fails writes when the ISR falls below MinISR."""
        if not self.replicas[b]:
            return False  # without reassignment no record concerns a broker outside the replica set
        return X.and_(s.status[b] >= STARTING, s.registered[b] == 1, self.partition_needs_action(s, X, b, o))

    def partition_needs_action(self, s: StateView, X: Backend, b: int, o: int) -> Bool:
        """o \\in UnreplicatedOffsets(b) /\\ PartitionNeedsAction(b, o): the metadata record at
        offset o is not yet applied by b and concerns its replica (leaders react to every
        change, followers to leader epoch bumps)."""
        assert self.replicas[b], "without reassignment no record concerns a broker outside the replica set"
        needs_action = X.or_(s.role[b] == LEADER,
                             X.and_(s.pm_replicas[b][b] == 1, s.md_leader_epoch[o] > s.pm_leader_epoch[b]),
                             s.pm_replicas[b][b] == 0)
        return X.and_(s.md_applied[b] <= o, o < s.md_len, needs_action)

    @receive_metadata_update.effect
    def _(self, s: StateView, X: Backend, b: int, o: int) -> Effect:
        isr = list(s.md_isr[o])
        new = PartitionMetadata(self.replicas, isr, isr, s.md_leader[o], s.md_leader_epoch[o],
                                s.md_partition_epoch[o])
        chosen = new.leader == b
        same_epoch = s.pm_leader_epoch[b] == new.leader_epoch
        is_new_leader = X.and_(s.role[b] != LEADER, chosen)
        change = cases(s, X, [
            (X.and_(s.pm_leader[b] == b, chosen, same_epoch), self.remain_leader(s, X, b, new)),
            (chosen, cases(s, X, [(is_new_leader, self.become_leader_in_new_epoch(s, X, b, new, True))],
                           self.become_leader_in_new_epoch(s, X, b, new, False))),
            (X.and_(new.leader != NONE, same_epoch, s.pm_leader[b] != b), {}),  # RemainFollower
            (new.leader != NONE, self.become_follower_in_new_epoch(s, X, b, new)),
        ], self.wait_for_leader_change(s, X, b, new))
        newer = new.partition_epoch > s.pm_partition_epoch[b]
        return nested(merge(when(s, X, newer, merge(self.set_partition_metadata(b, new), change)),
                            {("md_applied", b): o + 1}))

    def remain_leader(self, s: StateView, X: Backend, b: int, new: PartitionMetadata) -> Flat:
        """RemainLeader: maybe advance the HWM; the partition epoch answers a pending request."""
        return merge(self.maybe_update_hwm_and_ack_on_partition_change(s, X, b, new),
                     when(s, X, new.partition_epoch >= s.ap_epoch[b], self.reset_pending_alter_partition(b)))

    def become_leader_in_new_epoch(self, s: StateView, X: Backend, b: int, new: PartitionMetadata,
                                   is_new_leader: bool) -> Flat:
        """BecomeLeaderInNewEpoch: record the leader epoch start offset, forget followers (all
        of them if newly leader, else those outside the ISR), stop fetching."""
        followers = (self.reset_follower_state(b) if is_new_leader
                     else self.reset_follower_state(b, [new.isr[f] == 1 for f in self.B], s, X))
        return merge({("role", b): LEADER}, self.maybe_update_hwm_and_ack_on_partition_change(s, X, b, new),
                     {("leso", b): s.leo[b]}, followers, self.reset_pending_alter_partition(b),
                     self.remove_partition_from_fetchers(b))

    def ensure_leadership_renounced(self, s: StateView, X: Backend, b: int, new: PartitionMetadata) -> Flat:
        return merge(self.maybe_fail_pending_writes(s, X, b, new), self.reset_follower_state(b),
                     self.reset_pending_alter_partition(b), self.reset_pending_acks(b))

    def become_follower_in_new_epoch(self, s: StateView, X: Backend, b: int, new: PartitionMetadata) -> Flat:
        """BecomeFollowerInNewEpoch: fetch from the new leader from the log end (truncation,
        if any, comes with the first fetch response)."""
        return merge({("role", b): FOLLOWER}, self.add_partition_to_fetcher(s, X, b, new.leader, new.leader_epoch),
                     {("leso", b): NONE}, self.ensure_leadership_renounced(s, X, b, new))

    def wait_for_leader_change(self, s: StateView, X: Backend, b: int, new: PartitionMetadata) -> Flat:
        """WaitForLeaderChange: no leader; stop fetching and wait."""
        return merge({("role", b): NIL_ROLE}, self.remove_partition_from_fetchers(b), {("leso", b): NONE},
                     self.ensure_leadership_renounced(s, X, b, new))

    def add_partition_to_fetcher(self, s: StateView, X: Backend, b: int, leader: Int, leader_epoch: Int) -> Flat:
        """AddPartitionToFetcher: in a new leader epoch (or when not yet added) the partition
        moves to the leader's fetcher, from the log end and the last epoch in the log."""
        add = X.or_(leader_epoch > s.pm_leader_epoch[b], X.at(s.fetch_offset[b], leader) == NONE)
        out: Flat = {}
        last = self.last_log_epoch(s, X, b)
        for p in self.B:
            here = leader == p
            out[("fetch_offset", b, p)] = X.ite(here, s.leo[b], NONE)
            out[("fetch_last_epoch", b, p)] = X.ite(here, last, 0)
            out[("fetch_delayed", b, p)] = 0
        return when(s, X, add, out)

    # -- AlterPartition --------------------------------------------------------------------------

    def proposed_isr(self, s: StateView, X: Backend, b: int, timed_out: int) -> list[Int]:
        """ProposeNewISR: the leader, the ISR members not timed out, and the followers that
        fetched in this leader epoch up to the HWM and the leader epoch start offset."""
        out: list[Int] = []
        for f in self.B:
            if f == b:
                out.append(s.pm_replicas[b][f])
                continue
            leo = s.rs_leo[b][f]
            caught_up = X.or_(
                X.and_(s.pm_isr[b][f] == 1, not (timed_out >> f & 1)),
                X.and_(s.pm_isr[b][f] == 0, leo != NONE, leo >= s.hwm[b], leo >= s.leso[b]))
            out.append(X.ite(X.and_(s.pm_replicas[b][f] == 1, caught_up), 1, 0))
        return out

    def isr_and_epochs(self, s: StateView, X: Backend, b: int, proposed: Sequence[Int]) -> list[Int]:
        """IsrAndEpochs: the broker epochs of the leader and of added members, 0 for the rest."""
        return [X.ite(proposed[f] == 1, s.broker_epoch[b] if f == b else X.ite(s.pm_isr[b][f] == 1, 0,
                                                                               s.rs_broker_epoch[b][f]), 0)
                for f in self.B]

    @action(broker=BROKER, timed_out=TIMED_OUT)
    def send_alter_partition_request(self, s: StateView, X: Backend, b: int, timed_out: int) -> Bool:
        """SendAlterPartitionRequest: the leader proposes a new ISR (shrinking it by timed-out
        followers, at most --leader-shrink-isr-limit times) and applies the union eagerly as
        its maximal ISR."""
        if timed_out >> b & 1:
            return False
        proposed = self.proposed_isr(s, X, b, timed_out)
        pe = s.pm_partition_epoch[b]
        epochs = self.isr_and_epochs(s, X, b, proposed)
        in_flight = X.any([X.and_(pe == p, s.apq[b][p] == 1, s.apq_leader_epoch[b][p] == s.pm_leader_epoch[b],
                                  s.apq_broker_epoch[b][p] == s.broker_epoch[b],
                                  X.all([s.apq_isr[b][p][f] == proposed[f] for f in self.B]),
                                  X.all([s.apq_isr_epochs[b][p][f] == epochs[f] for f in self.B]))
                           for p in self.epochs])
        valid = X.and_(s.con_leader == b, s.broker_epoch[b] == s.reg_epoch[b], pe == s.con_partition_epoch,
                       X.forall(self.B, lambda f: X.implies(proposed[f] == 1, X.and_(
                           s.reg_status[f] == 1, X.or_(epochs[f] == 0, s.reg_epoch[f] == epochs[f])))))
        subset = X.all([s.pm_isr[b][f] == 1 for f in self.B if timed_out >> f & 1])
        shrink_ok = True if timed_out == 0 else X.and_(s.shrinks < self.settings["leader_shrink_isr_limit"], subset)
        return X.and_(s.status[b] == RUNNING, X.not_(self.pending_alter_partition_response(s, b)),
                      s.role[b] == LEADER, shrink_ok, X.not_(self.same_set(X, proposed, s.pm_isr[b])),
                      X.or_(X.not_(in_flight), valid))  # __AvoidCycle over the messages in flight

    @send_alter_partition_request.effect
    def _(self, s: StateView, X: Backend, b: int, timed_out: int) -> Effect:
        proposed = self.proposed_isr(s, X, b, timed_out)
        epochs = self.isr_and_epochs(s, X, b, proposed)
        pe = s.pm_partition_epoch[b]
        out: Flat = {("ap_epoch", b): pe + 1, ("ap_leader_epoch", b): s.pm_leader_epoch[b],
                     ("ap_broker_epoch", b): s.broker_epoch[b]}
        shrinks = X.any([X.and_(s.pm_isr[b][f] == 1, proposed[f] == 0) for f in self.B])
        out[("shrinks",)] = X.ite(shrinks, s.shrinks + 1, s.shrinks)
        for f in self.B:
            out[("pm_maximal_isr", b, f)] = X.ite(X.or_(proposed[f] == 1, s.pm_isr[b][f] == 1), 1, 0)
            out[("ap_isr", b, f)] = proposed[f]
            out[("ap_isr_epochs", b, f)] = epochs[f]
        for p in self.epochs:
            here = pe == p
            out[("apq", b, p)] = X.ite(here, 1, s.apq[b][p])
            out[("apq_leader_epoch", b, p)] = X.ite(here, s.pm_leader_epoch[b], s.apq_leader_epoch[b][p])
            out[("apq_broker_epoch", b, p)] = X.ite(here, s.broker_epoch[b], s.apq_broker_epoch[b][p])
            for f in self.B:
                out[("apq_isr", b, p, f)] = X.ite(here, proposed[f], s.apq_isr[b][p][f])
                out[("apq_isr_epochs", b, p, f)] = X.ite(here, epochs[f], s.apq_isr_epochs[b][p][f])
        return nested(out)

    @action(broker=BROKER, partition_epoch=PARTITION_EPOCH)
    def receive_alter_partition_response(self, s: StateView, X: Backend, b: int, p: int) -> Bool:
        """ReceiveAlterPartitionResponse: the leader takes the answer to its pending request:
        on success the new ISR (unless a metadata update got there first), on an error it
        rolls its maximal ISR back."""
        same_request = X.and_(s.ap_epoch[b] == p + 1, s.ap_leader_epoch[b] == s.aps_req_leader_epoch[b][p],
                              s.ap_broker_epoch[b] == s.aps_req_broker_epoch[b][p],
                              X.all([s.ap_isr[b][f] == s.aps_req_isr[b][p][f] for f in self.B]),
                              X.all([s.ap_isr_epochs[b][f] == s.aps_req_isr_epochs[b][p][f] for f in self.B]))
        fresh = X.implies(s.aps_error[b][p] == NIL_ERROR,
                          X.and_(s.aps_partition_epoch[b][p] > s.pm_partition_epoch[b],
                                 s.aps_leader_epoch[b][p] == s.pm_leader_epoch[b]))
        return X.and_(s.aps[b][p] == 1, s.status[b] == RUNNING, s.role[b] == LEADER,
                      self.pending_alter_partition_response(s, b), same_request, fresh)

    @receive_alter_partition_response.effect
    def _(self, s: StateView, X: Backend, b: int, p: int) -> Effect:
        isr = list(s.aps_isr[b][p])
        done = PartitionMetadata(self.replicas, isr, isr, s.aps_leader[b][p], s.aps_leader_epoch[b][p],
                                 s.aps_partition_epoch[b][p])
        back = PartitionMetadata(list(s.pm_replicas[b]), list(s.pm_isr[b]), list(s.pm_isr[b]), s.pm_leader[b],
                                 s.pm_leader_epoch[b], s.pm_partition_epoch[b])
        ok = s.aps_error[b][p] == NIL_ERROR
        commit = cases(s, X, [(ok, self.commit_partition_change(s, X, b, done))],
                       self.commit_partition_change(s, X, b, back))
        gone: Flat = {("aps", b, p): 0, ("aps_error", b, p): 0, ("aps_leader", b, p): NONE,
                      ("aps_leader_epoch", b, p): 0, ("aps_partition_epoch", b, p): 0,
                      ("aps_req_leader_epoch", b, p): 0, ("aps_req_broker_epoch", b, p): 0}
        for f in self.B:
            gone.update({("aps_isr", b, p, f): 0, ("aps_req_isr", b, p, f): 0, ("aps_req_isr_epochs", b, p, f): 0})
        return nested(merge(commit, self.reset_pending_alter_partition(b), gone))

    def commit_partition_change(self, s: StateView, X: Backend, b: int, md: PartitionMetadata) -> Flat:
        """CommitPartitionChange: apply the partition state, then maybe move the HWM."""
        return merge(self.set_partition_metadata(b, md), self.maybe_update_hwm_and_ack_on_partition_change(s, X, b, md))

    # -- fetching --------------------------------------------------------------------------------

    @action(follower=BROKER, leader=BROKER, where=distinct)
    def send_fetch_request(self, s: StateView, X: Backend, f: int, l: int) -> Bool:
        """SendFetchRequest: a follower with the partition on its fetcher for the leader asks
        for records from its fetch offset, with the last epoch it fetched (not when converged)."""
        converged = X.and_(s.leo[l] == s.leo[f], s.hwm[l] == s.hwm[f], s.rs_leo[l][f] == s.leo[f],
                           s.rs_broker_epoch[l][f] == s.broker_epoch[f])
        return X.and_(s.status[f] == RUNNING, s.fetch_offset[f][l] != NONE, s.fetch_pending[f][l] == 0,
                      s.pm_leader[f] == l, X.not_(converged))

    @send_fetch_request.effect
    def _(self, s: StateView, X: Backend, f: int, l: int) -> Effect:
        return nested({("fm", f, l): FETCH_REQUEST, ("fm_broker_epoch", f, l): s.broker_epoch[f],
                       ("fm_leader_epoch", f, l): s.pm_leader_epoch[f], ("fm_fetch_offset", f, l): s.fetch_offset[f][l],
                       ("fm_last_epoch", f, l): s.fetch_last_epoch[f][l], ("fetch_pending", f, l): 1,
                       ("fetch_delayed", f, l): 0})

    @action(leader=BROKER, follower=BROKER, where=distinct)
    def receive_fetch_request(self, s: StateView, X: Backend, l: int, f: int) -> Bool:
        """ReceiveFetchRequest: the leader answers a fetch: an error if it does not lead in the
        request's epoch, a diverging epoch if the follower's log diverged, else the next record
        and its HWM, which the follower's fetch offset may advance."""
        return X.and_(s.fm[f][l] == FETCH_REQUEST, s.status[l] == RUNNING)

    @receive_fetch_request.effect
    def _(self, s: StateView, X: Backend, l: int, f: int) -> Effect:
        le, fo, lfe = s.fm_leader_epoch[f][l], s.fm_fetch_offset[f][l], s.fm_last_epoch[f][l]
        mine = s.pm_leader_epoch[l]
        response: Flat = {**self.no_fetch_fields(f, l), ("fm", f, l): FETCH_RESPONSE, ("fm_leader_epoch", f, l): mine,
                          ("fm_fetch_offset", f, l): fo, ("fm_hwm", f, l): s.hwm[l]}
        error = merge(response, {("fm_error", f, l): X.ite(mine < le, UNKNOWN_LEADER_EPOCH,
                                                          X.ite(mine > le, FENCED_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER))})
        epoch, offset = self.last_offset_for_epoch(s, X, l, lfe, True)
        diverging = merge(response, {("fm_diverging_epoch", f, l): epoch, ("fm_diverging_offset", f, l): offset})
        rs_leo = [fo if x == f else s.rs_leo[l][x] for x in self.B]
        old = s.hwm[l]
        commit = self.commit_offset(s, X, l, s.pm_maximal_isr[l], s.leo[l], rs_leo) + 1
        new = X.ite(self.can_advance_hwm(X, s.pm_isr[l], old, commit), commit, old) if self.kip966 else commit
        has_record = fo < s.leo[l]
        ok = merge({("rs_leo", l, f): fo, ("rs_broker_epoch", l, f): s.fm_broker_epoch[f][l]},
                   self.maybe_advance_high_watermark(s, X, l, s.pm_isr[l], old, new, True), response,
                   {("fm_hwm", f, l): X.ite(new > old, new, old),
                    ("fm_record_epoch", f, l): X.ite(has_record, X.at(s.log_epoch[l], fo - 1), NONE),
                    ("fm_record_value", f, l): X.ite(has_record, X.at(s.log_value[l], fo - 1), NONE)})
        return nested(cases(s, X, [
            (X.or_(s.role[l] != LEADER, mine != le), error),
            (X.or_(epoch < lfe, offset < fo), diverging),
        ], ok))

    @action(follower=BROKER, leader=BROKER, where=distinct)
    def receive_fetch_response(self, s: StateView, X: Backend, f: int, l: int) -> Bool:
        """ReceiveFetchResponse: the follower ignores a stale response, backs off on an error,
        truncates on a diverging epoch, else appends the record and takes the leader's HWM
        (when within its log)."""
        return X.and_(s.fm[f][l] == FETCH_RESPONSE, s.status[f] == RUNNING, s.fetch_pending[f][l] == 1)

    @receive_fetch_response.effect
    def _(self, s: StateView, X: Backend, f: int, l: int) -> Effect:
        gone = merge({("fm", f, l): NO_MESSAGE}, self.no_fetch_fields(f, l))
        fo = s.fetch_offset[f][l]
        stale = X.or_(fo == NONE, fo != s.fm_fetch_offset[f][l], s.pm_leader_epoch[f] != s.fm_leader_epoch[f][l])
        de, doff = s.fm_diverging_epoch[f][l], s.fm_diverging_offset[f][l]
        local_epoch, local_offset = self.last_offset_for_epoch(s, X, f, de, False)
        to = X.ite(local_epoch != de, local_offset, X.min_(local_offset, doff))  # FindTruncatePoint
        new_leo = X.ite(to > 1, to, 1)
        truncate: Flat = {("leo", f): new_leo, ("fetch_offset", f, l): new_leo,
                          ("fetch_last_epoch", f, l): X.ite(to > 1, X.at(s.log_epoch[f], to - 2), 0)}
        for o in self.V:
            keep = o + 1 < to
            truncate[("log_epoch", f, o)] = X.ite(keep, s.log_epoch[f][o], NONE)
            truncate[("log_value", f, o)] = X.ite(keep, s.log_value[f][o], NONE)
        rec_epoch, rec_value = s.fm_record_epoch[f][l], s.fm_record_value[f][l]
        has_record = rec_epoch != NONE
        appended = X.ite(has_record, s.leo[f] + 1, s.leo[f])
        append: Flat = {("leo", f): appended, ("fetch_offset", f, l): appended,
                        ("hwm", f): X.ite(s.fm_hwm[f][l] <= appended, s.fm_hwm[f][l], s.hwm[f]),
                        ("fetch_last_epoch", f, l): X.ite(has_record, rec_epoch, s.fetch_last_epoch[f][l])}
        for o in self.V:
            here = X.and_(has_record, s.leo[f] == o + 1)
            append[("log_epoch", f, o)] = X.ite(here, rec_epoch, s.log_epoch[f][o])
            append[("log_value", f, o)] = X.ite(here, rec_value, s.log_value[f][o])
        return nested(merge(cases(s, X, [
            (stale, {}),
            (s.fm_error[f][l] != NIL_ERROR, {("fetch_delayed", f, l): 1}),
            (de != NONE, merge(truncate, {("fetch_delayed", f, l): 0})),
        ], merge(append, {("fetch_delayed", f, l): 0})), {("fetch_pending", f, l): 0}, gone))

    # -- producing ------------------------------------------------------------------------------

    @action(broker=BROKER, value=VALUE)
    def write_record_to_leader(self, s: StateView, X: Backend, b: int, v: int) -> Bool:
        """WriteRecordToLeader: a leader whose maximal ISR has MinISR members appends a
        producer's value (acks=all) in its leader epoch."""
        return X.and_(s.sent[v] == 0, s.status[b] == RUNNING, s.role[b] == LEADER,
                      self.card(X, s.pm_maximal_isr[b]) >= self.min_isr)

    @write_record_to_leader.effect
    def _(self, s: StateView, X: Backend, b: int, v: int) -> Effect:
        leo = s.leo[b]
        old = s.hwm[b]
        commit = self.commit_offset(s, X, b, s.pm_maximal_isr[b], leo + 1, s.rs_leo[b]) + 1
        new = X.ite(self.can_advance_hwm(X, s.pm_isr[b], old, commit), commit, old) if self.kip966 else commit
        out: Flat = {("leo", b): leo + 1, ("hwm", b): X.ite(new > old, new, old), ("sent", v): 1,
                     ("flo", b): X.ite(s.flo[b] == NONE, leo, s.flo[b])}
        for o in self.V:
            here = leo == o + 1
            out[("log_epoch", b, o)] = X.ite(here, s.pm_leader_epoch[b], s.log_epoch[b][o])
            out[("log_value", b, o)] = X.ite(here, v, s.log_value[b][o])
        return nested(merge(when(s, X, new > old, self.update_hwm_invariant_vars(s, X, b, old, new, True)), out))
