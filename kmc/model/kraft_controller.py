"""The `kraft` model's controller: partition changes, elections and the controller's actions.

The KRaft controller is abstracted as in the specification: one state machine that holds
the broker registrations, the partition state and the metadata log (PartitionChangeRecords),
without the Raft quorum underneath. Every partition change appends a record
(ApplyPartitionChange); brokers apply records in order (kraft.py, receive_metadata_update).
When a change elects a leader the specification picks any candidate (\\E candidate): here that
choice is the action's `leader` parameter, `none` when no election happens.
"""

from __future__ import annotations

from typing import Sequence

from kmc.model.core import NONE, Backend, Bool, Domain, Effect, Int, StateView, action
from kmc.model.effects import Flat, cases, merge, nested, when
from kmc.model.kraft_state import (
    BROKER, CANDIDATE, FENCED, FENCED_LEADER_EPOCH, INELIGIBLE_REPLICA, NIL_ERROR, RUNNING, UNFENCED, KraftState,
)

PARTITION_EPOCH = Domain(lambda m: m.epochs)


class KraftController(KraftState):
    """Controller-side operators and actions."""

    # -- ApplyPartitionChange ----------------------------------------------------------------

    def apply_partition_change(self, s: StateView, X: Backend, isr: Sequence[Int], leader: Int, leader_epoch: Int,
                               partition_epoch: Int, elr: Sequence[Int] | None = None) -> Flat:
        """ApplyPartitionChange: the controller's partition state and a PartitionChangeRecord
        appended to the metadata log (kip966: with the ELR and the last-known ELR)."""
        elr = list(elr) if elr is not None else list(s.con_elr)
        if self.kip966:
            keep = self.card(X, isr) >= self.min_isr
            lost = [X.and_(self.replicas[b] == 1, s.con_elr[b] == 1, elr[b] == 0) for b in self.B]
            last_known = [X.ite(X.or_(keep, X.and_(s.con_last_known_elr[b] == 0, X.not_(lost[b]))), 0, 1)
                          for b in self.B]
        else:
            last_known = list(s.con_last_known_elr)
        out: Flat = {("con_leader",): leader, ("con_leader_epoch",): leader_epoch,
                     ("con_partition_epoch",): partition_epoch, ("md_len",): s.md_len + 1}
        for b in self.B:
            out[("con_isr", b)] = isr[b]
            out[("con_elr", b)] = elr[b]
            out[("con_last_known_elr", b)] = last_known[b]
        for o in self.md:
            here = s.md_len == o
            out[("md_leader", o)] = X.ite(here, leader, s.md_leader[o])
            out[("md_leader_epoch", o)] = X.ite(here, leader_epoch, s.md_leader_epoch[o])
            out[("md_partition_epoch", o)] = X.ite(here, partition_epoch, s.md_partition_epoch[o])
            for b in self.B:
                out[("md_isr", o, b)] = X.ite(here, isr[b], s.md_isr[o][b])
                out[("md_elr", o, b)] = X.ite(here, elr[b], s.md_elr[o][b])
                out[("md_last_known_elr", o, b)] = X.ite(here, last_known[b], s.md_last_known_elr[o][b])
        return out

    def room_for_a_record(self, s: StateView) -> Bool:
        """The metadata log's bound (md_capacity) is not reached (tests check it never binds)."""
        return s.md_len < self.md_capacity

    # -- MaybeUpdatePartitionOnBrokerChange ---------------------------------------------------

    def maybe_update_partition_on_broker_change(self, s: StateView, X: Backend, new_isr: Sequence[Int],
                                                new_unfenced: Sequence[Int], cand: int,
                                                new_elr: Sequence[Int] | None = None, effect: bool = True
                                                ) -> tuple[Bool, Flat]:
        """MaybeUpdatePartitionOnBrokerChange: (whether `cand` is the election's choice, the
        effect; with `effect` False, for a guard, no effect is built). v3.5: keep the leader if it
        stays in the ISR and unfenced, else elect an unfenced ISR member, else no leader. kip966:
        elect from the ISR, else from the unfenced ELR (which joins the ISR), else no leader."""
        leader, le, pe = s.con_leader, s.con_leader_epoch, s.con_partition_epoch
        in_isr = X.at(new_isr, leader) == 1
        isr: list[Int] = list(new_isr)
        elr: list[Int] | None = None  # v3.5: ApplyPartitionChange keeps the controller's (empty) ELR
        if not self.kip966:
            some = X.exists(self.B, lambda c: X.and_(new_isr[c] == 1, new_unfenced[c] == 1))
            no_change = X.or_(X.and_(leader == NONE, X.not_(some)),
                              X.and_(leader != NONE, in_isr, X.at(new_unfenced, leader) == 1))
            same = self.same_set(X, new_isr, s.con_isr)
            elect = X.and_(X.not_(no_change), some)
            choice = X.ite(elect, X.and_(cand != NONE, new_isr[cand] == 1, new_unfenced[cand] == 1)
                           if cand != NONE else False, cand == NONE)
            elected = X.ite(some, cand, NONE)
        else:
            assert new_elr is not None
            isr_size = self.card(X, new_isr)
            some_elr = X.exists(self.B, lambda c: X.and_(new_elr[c] == 1, new_unfenced[c] == 1))
            no_change = X.or_(X.and_(leader == NONE, isr_size == 0, X.not_(some_elr)),
                              X.and_(leader != NONE, in_isr))
            same = X.and_(self.same_set(X, new_isr, s.con_isr), self.same_set(X, new_elr, s.con_elr))
            from_isr = X.and_(X.not_(no_change), isr_size > 0)
            from_elr = X.and_(X.not_(no_change), isr_size == 0, some_elr)
            elr = list(new_elr)
            if cand == NONE:
                choice = X.not_(X.or_(from_isr, from_elr))
            else:
                choice = X.or_(X.and_(from_isr, new_isr[cand] == 1),
                               X.and_(from_elr, new_elr[cand] == 1, new_unfenced[cand] == 1))
                # an ELR member elected joins the ISR and leaves the ELR
                isr[cand] = X.ite(from_elr, 1, new_isr[cand])
                elr[cand] = X.ite(from_elr, 0, new_elr[cand])
            elected = X.ite(X.or_(isr_size > 0, some_elr), cand, NONE)
        allowed = X.and_(choice, self.room_for_a_record(s))
        if not effect:
            return allowed, {}
        # the spec's CASE: no change and the same ISR (and ELR) -> no record; no change -> the
        # leader stays (a new partition epoch); else the election's leader, or none. Every arm
        # that appends calls ApplyPartitionChange: its arguments are chosen first, then it is
        # applied once (the same effect, in a third of the selections).
        record = self.apply_partition_change(s, X, isr, X.ite(no_change, leader, elected),
                                             X.ite(no_change, le, le + 1), pe + 1, elr)
        return allowed, when(s, X, X.not_(X.and_(no_change, same)), record)

    def update_elr(self, s: StateView, X: Backend, proposed_isr: Sequence[Int]) -> list[Int]:
        """UpdateElrOnIsrOrReplicaChange (kip966): empty when the proposed ISR has MinISR
        members, else the ELR plus the members the ISR loses."""
        big = self.card(X, proposed_isr) >= self.min_isr
        return [X.ite(big, 0, X.ite(X.or_(s.con_elr[b] == 1, X.and_(s.con_isr[b] == 1, proposed_isr[b] == 0)),
                                    self.replicas[b], 0)) for b in self.B]

    def handle_broker_fenced(self, s: StateView, X: Backend, b: int, cand: int, effect: bool = True
                             ) -> tuple[Bool, Flat]:
        """HandleBrokerFenced: b leaves the unfenced set and the ISR (v3.5: unless it is the
        ISR's last member; kip966: even then)."""
        unfenced = [0 if x == b else s.reg_status[x] for x in self.B]
        if self.kip966:
            isr = [0 if x == b else s.con_isr[x] for x in self.B]
            return self.maybe_update_partition_on_broker_change(s, X, isr, unfenced, cand,
                                                                self.update_elr(s, X, isr), effect)
        alone = self.card(X, s.con_isr) == 1
        isr = [X.ite(alone, s.con_isr[x], 0) if x == b else s.con_isr[x] for x in self.B]
        return self.maybe_update_partition_on_broker_change(s, X, isr, unfenced, cand, effect=effect)

    def handle_broker_unfenced(self, s: StateView, X: Backend, b: int, cand: int, effect: bool = True
                               ) -> tuple[Bool, Flat]:
        """HandleBrokerUnfenced: b joins the unfenced set; with no leader the controller may
        now elect one (v3.5 from the ISR, kip966 from the ISR or ELR)."""
        unfenced = [1 if x == b else s.reg_status[x] for x in self.B]
        choice, eff = self.maybe_update_partition_on_broker_change(s, X, list(s.con_isr), unfenced, cand,
                                                                   list(s.con_elr), effect)
        no_leader = s.con_leader == NONE
        return X.ite(no_leader, choice, cand == NONE), when(s, X, no_leader, eff) if effect else {}

    def process_unclean_broker(self, s: StateView, X: Backend, b: int, cand: int, effect: bool = True
                               ) -> tuple[Bool, Flat]:
        """ProcessUncleanBroker (kip966): a broker that registers without its broker epoch lost
        its log: it leaves the ISR and the ELR."""
        unfenced = [1 if x == b else s.reg_status[x] for x in self.B]
        isr = [0 if x == b else s.con_isr[x] for x in self.B]
        elr = [0 if x == b else s.con_elr[x] for x in self.B]
        return self.maybe_update_partition_on_broker_change(s, X, isr, unfenced, cand, elr, effect)

    # -- actions -------------------------------------------------------------------------------

    @action(broker=BROKER, incarnation=Domain(lambda m: range(len(m.incarnations)),
                                              lambda i: f"#{i}"), leader=CANDIDATE)
    def receive_broker_reg_request(self, s: StateView, X: Backend, b: int, i: int, cand: int) -> Bool:
        """ReceiveBrokerRegRequest: the controller registers a starting broker (fenced, or the
        same incarnation) with a new broker epoch and unfences it (kip966: a request without a
        broker epoch means the broker lost its log)."""
        return X.and_(s.reg_request[i] == b,
                      X.or_(s.reg_status[b] == FENCED, s.reg_incarnation[b] == self.incarnations[i]),
                      self._reg_request_change(s, X, b, i, cand, effect=False)[0])

    def _reg_request_change(self, s: StateView, X: Backend, b: int, i: int, cand: int, effect: bool = True
                            ) -> tuple[Bool, Flat]:
        if not self.kip966:
            return self.handle_broker_unfenced(s, X, b, cand, effect)
        c1, e1 = self.process_unclean_broker(s, X, b, cand, effect)
        c2, e2 = self.handle_broker_unfenced(s, X, b, cand, effect)
        unclean = s.reg_request_epoch[i] == 0
        return X.ite(unclean, c1, c2), cases(s, X, [(unclean, e1)], e2) if effect else {}

    @receive_broker_reg_request.effect
    def _(self, s: StateView, X: Backend, b: int, i: int, cand: int) -> Effect:
        epoch = X.max_(*s.reg_epoch) + 1  # aux_broker_epoch + 1: the last assigned epoch is the highest
        return nested(merge(
            self._reg_request_change(s, X, b, i, cand)[1],
            {("reg_status", b): UNFENCED, ("reg_epoch", b): epoch, ("reg_incarnation", b): self.incarnations[i],
             ("reg_request", i): NONE, ("reg_request_epoch", i): 0, ("reg_response", i): b,
             ("reg_response_epoch", i): epoch, ("reg_response_offset", i): s.md_len}))

    @action(broker=BROKER, leader=CANDIDATE)
    def unfence_broker(self, s: StateView, X: Backend, b: int, cand: int) -> Bool:
        """UnfenceBroker: the controller unfences a running broker (a heartbeat arrived)."""
        return X.and_(s.reg_status[b] == FENCED, s.status[b] == RUNNING,
                      self.handle_broker_unfenced(s, X, b, cand, effect=False)[0])

    @unfence_broker.effect
    def _(self, s: StateView, X: Backend, b: int, cand: int) -> Effect:
        return nested(merge(self.handle_broker_unfenced(s, X, b, cand)[1], {("reg_status", b): UNFENCED}))

    @action(broker=BROKER, leader=CANDIDATE)
    def fence_broker(self, s: StateView, X: Backend, b: int, cand: int) -> Bool:
        """FenceBroker: the controller fences an unfenced broker (its heartbeats stopped),
        taking it out of leadership and the ISR (at most --fence-broker-limit times)."""
        return X.and_(s.fences < self.settings["fence_broker_limit"], s.reg_status[b] == UNFENCED,
                      self.handle_broker_fenced(s, X, b, cand, effect=False)[0])

    @fence_broker.effect
    def _(self, s: StateView, X: Backend, b: int, cand: int) -> Effect:
        return nested(merge(self.handle_broker_fenced(s, X, b, cand)[1],
                            {("reg_status", b): FENCED, ("fences",): s.fences + 1}))

    @action(broker=BROKER, partition_epoch=PARTITION_EPOCH)
    def receive_alter_partition_request(self, s: StateView, X: Backend, b: int, p: int) -> Bool:
        """ReceiveAlterPartitionRequest: the controller takes the leader's proposed ISR when
        the request comes from the leader, in its broker and partition epochs, and every new
        member is unfenced in the epoch the leader saw; else it rejects it."""
        return X.and_(s.apq[b][p] == 1, X.or_(self.validate_alter_partition(s, X, b, p) != NIL_ERROR,
                                               self.room_for_a_record(s)))

    def validate_alter_partition(self, s: StateView, X: Backend, b: int, p: int) -> Int:
        """ValidateAlterPartitionRequest: Nil, IneligibleReplica or FencedLeaderEpoch."""
        current = X.and_(s.con_leader == b, s.apq_broker_epoch[b][p] == s.reg_epoch[b], s.con_partition_epoch == p)
        eligible = X.forall(self.B, lambda x: X.implies(s.apq_isr[b][p][x] == 1, X.and_(
            s.reg_status[x] == UNFENCED,
            X.or_(s.apq_isr_epochs[b][p][x] == 0, s.reg_epoch[x] == s.apq_isr_epochs[b][p][x]))))
        return X.ite(current, X.ite(eligible, NIL_ERROR, INELIGIBLE_REPLICA), FENCED_LEADER_EPOCH)

    @receive_alter_partition_request.effect
    def _(self, s: StateView, X: Backend, b: int, p: int) -> Effect:
        error = self.validate_alter_partition(s, X, b, p)
        isr = list(s.apq_isr[b][p])
        elr = self.update_elr(s, X, isr) if self.kip966 else None
        # the leader proposes itself, so the controller keeps it (no reassignment completes)
        change = self.apply_partition_change(s, X, isr, s.con_leader, s.con_leader_epoch,
                                             s.con_partition_epoch + 1, elr)
        ok = error == NIL_ERROR
        response: Flat = {("apq", b, p): 0, ("apq_leader_epoch", b, p): 0, ("apq_broker_epoch", b, p): 0,
                          ("aps", b, p): 1, ("aps_error", b, p): error,
                          ("aps_leader", b, p): X.ite(ok, s.con_leader, NONE),
                          ("aps_leader_epoch", b, p): X.ite(ok, s.con_leader_epoch, 0),
                          ("aps_partition_epoch", b, p): X.ite(ok, s.con_partition_epoch + 1, 0),
                          ("aps_req_leader_epoch", b, p): s.apq_leader_epoch[b][p],
                          ("aps_req_broker_epoch", b, p): s.apq_broker_epoch[b][p]}
        for x in self.B:
            response[("apq_isr", b, p, x)] = 0
            response[("apq_isr_epochs", b, p, x)] = 0
            response[("aps_isr", b, p, x)] = X.ite(ok, isr[x], 0)
            response[("aps_req_isr", b, p, x)] = s.apq_isr[b][p][x]
            response[("aps_req_isr_epochs", b, p, x)] = s.apq_isr_epochs[b][p][x]
        return nested(merge(when(s, X, ok, change), response))
