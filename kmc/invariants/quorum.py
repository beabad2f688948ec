"""What must hold of the `quorum` model: the safety properties of the specifications
(kraft_kip_853_properties, kraft_kip_996_properties), under their names in kebab case."""

from __future__ import annotations

from kmc.invariants.common import type_ok
from kmc.invariants.pairing import for_model
from kmc.invariants.quorum_liveness import properties  # noqa: F401  the model's liveness properties
from dataclasses import replace

from kmc.model.core import Backend, Bool, Invariant, StateView, invariant
from kmc.model.quorum import Quorum
from kmc.model.quorum_state import CANDIDATE, FOLLOWER, ILLEGAL, LEADER, OBSERVER, PROSPECTIVE, RESIGNED, UNATTACHED, VOTED, VOTER

def rename(inv: Invariant, name: str, spec_name: str) -> Invariant:
    """A kip853 property under its kip996 name (the same formula)."""
    return replace(inv, name=name, doc=f"{spec_name}: " + inv.doc.split(": ", 1)[-1])


# A server that has not started holds blank values no property quantified over StartedServers
# tells apart from a started one's (no leader, epoch 0, role Nil, empty log, HWM 0).


def holds_value(m: Quorum, s: StateView, X: Backend, a: int, v: int) -> Bool:
    """ValueInServerLog(a, v): an AppendCommand of v is in a's log."""
    return X.exists(m.O, lambda o: X.and_(m.has(s, a, o), s.log_cmd[a][o] == 2, s.log_value[a][o] == v))


@invariant("no-illegal-state")
def no_illegal_state(m: Quorum, s: StateView, X: Backend) -> Bool:
    """NoIllegalState: no server entered the IllegalState a transition check sets"""
    return X.forall(m.S, lambda a: s.state[a] != ILLEGAL)


@invariant("no-log-divergence")
def no_log_divergence(m: Quorum, s: StateView, X: Backend) -> Bool:
    """NoLogDivergence: two servers' logs agree on every offset up to the lower of their high
    watermarks"""
    def agree(a: int, b: int) -> Bool:
        low = X.min_(s.hwm[a], s.hwm[b])
        return X.forall(m.O, lambda o: X.implies(o + 1 <= low, X.all([
            x == y for x, y in zip(m.entry(s, a, o), m.entry(s, b, o))])))
    return X.all([agree(a, b) for a in m.S for b in m.S if a < b])


@invariant("states-match-roles")
def states_match_roles(m: Quorum, s: StateView, X: Backend) -> Bool:
    """StatesMatchRoles: an observer is Leader, Follower, Unattached or Voted; an unattached
    server knows no leader"""
    observer_states = (LEADER, FOLLOWER, UNATTACHED, VOTED)
    return X.forall(m.S, lambda a: X.and_(
        X.implies(s.role[a] == OBSERVER, X.or_(*[s.state[a] == x for x in observer_states])),
        X.implies(s.state[a] == UNATTACHED, s.leader[a] == -1)))


@invariant("never-two-leaders-in-same-epoch")
def never_two_leaders_in_same_epoch(m: Quorum, s: StateView, X: Backend) -> Bool:
    """NeverTwoLeadersInSameEpoch: two servers of the same epoch never know different leaders"""
    return X.all([X.not_(X.and_(s.leader[a] != -1, s.leader[b] != -1, s.leader[a] != s.leader[b],
                                s.epoch[a] == s.epoch[b])) for a in m.S for b in m.S if a < b])


def is_current_leader(m: Quorum, s: StateView, X: Backend, a: int) -> Bool:
    """IsCurrentLeader(a): a leader no other server has a higher epoch than"""
    return X.and_(s.state[a] == LEADER, X.all([X.not_(s.epoch[b] > s.epoch[a]) for b in m.S if b != a]))


@invariant("leader-has-all-acked-values")
def leader_has_all_acked_values(m: Quorum, s: StateView, X: Backend) -> Bool:
    """LeaderHasAllAckedValues: a current leader holds every positively acknowledged value"""
    return X.forall(m.V, lambda v: X.implies(s.pos_acked[v] == 1, X.forall(m.S, lambda a: X.not_(X.and_(
        is_current_leader(m, s, X, a), X.not_(holds_value(m, s, X, a, v)))))))


@invariant("acked-value-not-lost")
def acked_value_not_lost(m: Quorum, s: StateView, X: Backend) -> Bool:
    """AckedValueNotLost: every positively acknowledged value is in some voter's log"""
    return X.forall(m.V, lambda v: X.implies(s.pos_acked[v] == 1, X.exists(m.S, lambda a: X.and_(
        s.role[a] == VOTER, holds_value(m, s, X, a, v)))))


@invariant("durability")
def durability(m: Quorum, s: StateView, X: Backend) -> Bool:
    """Durability (kip996): every positively acknowledged value is in some voter's log"""
    return X.forall(m.V, lambda v: X.implies(s.pos_acked[v] == 1, X.exists(m.S, lambda a: X.and_(
        m.is_voter(s, X, a), holds_value(m, s, X, a, v)))))


@invariant("valid-roles-and-states")
def valid_roles_and_states(m: Quorum, s: StateView, X: Backend) -> Bool:
    """ValidRolesAndStates (kip996): an observer leads, follows, is unattached or resigned;
    an unattached server knows no leader; only a leader has pending writes; only a prospective
    or a candidate has votes"""
    observer_states = (LEADER, FOLLOWER, UNATTACHED, RESIGNED)
    return X.forall(m.S, lambda a: X.and_(
        X.implies(m.is_observer(s, X, a), X.or_(*[s.state[a] == x for x in observer_states])),
        X.implies(s.state[a] == UNATTACHED, s.leader[a] == -1),
        X.implies(s.state[a] != LEADER, X.all([p == 0 for p in s.pending_ack[a]])),
        X.implies(X.any([x == 1 for x in s.votes_recv[a]]),
                  X.or_(s.state[a] == PROSPECTIVE, s.state[a] == CANDIDATE))))


@for_model(Quorum)
def invariants(m: Quorum) -> list[Invariant]:
    """The shipped cfg's INVARIANT list, in its order (kip996: the same properties under their
    kip996 names, Durability and ValidRolesAndStates of its own)."""
    if m.kip996:
        return [rename(no_log_divergence(m), "log-matching", "LogMatching"),
                rename(leader_has_all_acked_values(m), "leader-completeness", "LeaderCompleteness"),
                rename(never_two_leaders_in_same_epoch(m), "election-safety", "ElectionSafety"),
                durability(m), no_illegal_state(m), valid_roles_and_states(m), type_ok(m.schema)]
    return [leader_has_all_acked_values(m), acked_value_not_lost(m), no_log_divergence(m),
            never_two_leaders_in_same_epoch(m), no_illegal_state(m), states_match_roles(m), type_ok(m.schema)]
