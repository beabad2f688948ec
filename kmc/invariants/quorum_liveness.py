"""The `quorum` model's liveness properties (kraft_kip_853_properties and
kraft_kip_996_properties, with --test-liveness): ValuesEventuallyAcked (one property per value),
EventuallyLeaderElected and, in kip996, NotStuckInProspective (one property per server), under
each specification's `Fairness` (LivenessSpec). ReconfigurationNotStuck quantifies over the
reconfigurations, which --test-liveness leaves out (as kip853's shipped model_liveness.cfg
does): it is then TRUE and not declared."""

from __future__ import annotations

from kmc.model.core import Backend, Bool, StateView
from kmc.model.quorum import Quorum
from kmc.model.quorum_state import LEADER, PROSPECTIVE, SERVER, VALUE, VOTER
from kmc.model.temporal import Fairness, Property, weak

# Fairness: \A s \in AllServers: WF_vars of four actions of s, and \A peer: WF_vars of ten
# actions of (s, peer); kmc's `server` is the specification's s (the message's dest)
SPEC_FAIRNESS: tuple[Fairness, ...] = (
    *(weak(a, "server") for a in ("check_quorum_resign", "observer_fetch_timeout", "send_request_vote",
                                  "become_leader")),
    *(weak(a, "server", "peer") for a in (
        "handle_vote_request", "handle_vote_response", "reject_fetch_request", "diverging_fetch_request",
        "accept_fetch_request_from_voter", "accept_fetch_request_from_observer", "accept_begin_quorum_request",
        "resend_begin_quorum_epoch_request", "send_fetch_request", "handle_fetch_response")),
)
# kip996's Fairness: six actions of s, nine of (s, peer)
SPEC_FAIRNESS_996: tuple[Fairness, ...] = (
    *(weak(a, "server") for a in ("check_quorum_resign", "voter_fetch_timeout", "voter_election_timeout",
                                  "resigned_election_timeout", "conclude_pre_vote", "become_leader")),
    *(weak(a, "server", "peer") for a in (
        "handle_vote_request", "handle_vote_response", "reject_fetch_request", "diverging_fetch_request",
        "accept_fetch_request", "resend_begin_quorum_epoch_request", "accept_begin_quorum_request",
        "send_fetch_request", "handle_fetch_response")),
)


def functional_leader_exists(m: Quorum, s: StateView, X: Backend) -> Bool:
    """FunctionalLeaderExists: a leader that a majority of its configuration's count of voters
    follow (their leader is it and it is a member of their configuration)."""
    def functional(a: int) -> Bool:
        followers = X.count([X.and_(s.role[b] == VOTER, s.leader[b] == a, s.cfg_members[b][a] == 1) for b in m.S])
        return X.and_(s.state[a] == LEADER, 2 * followers > m.card(X, s.cfg_members[a]))
    return X.any([functional(a) for a in m.S])


def eventually_leader_elected(m: Quorum, fair: tuple[Fairness, ...]) -> Property:
    return Property("eventually-leader-elected", "leads_to", lambda s, X: (
        X.not_(functional_leader_exists(m, s, X)), functional_leader_exists(m, s, X)),
        "EventuallyLeaderElected: ~FunctionalLeaderExists ~> FunctionalLeaderExists (a leader followed by a "
        "majority of its voters)", fair, default=True)


def values_eventually_acked(m: Quorum, v: int, fair: tuple[Fairness, ...]) -> Property:
    name = VALUE.show(v)
    return Property(f"values-eventually-acked-{name}", "leads_to", lambda s, X: (
        s.sent[v] == 1, X.or_(X.and_(s.neg_acked[v] == 1, s.pos_acked[v] == 0),
                              X.and_(s.pos_acked[v] == 1, s.neg_acked[v] == 0))),
        f"ValuesEventuallyAcked for {name}: sent ~> positively or negatively acknowledged (not both)", fair,
        default=True)


def not_stuck_in_prospective(m: Quorum, a: int, fair: tuple[Fairness, ...]) -> Property:
    name = SERVER.show(a)

    def predicate(s: StateView, X: Backend) -> tuple[Bool, Bool]:
        prospective = s.state[a] == PROSPECTIVE
        reachable = X.any([X.and_(s.cfg_members[a][t] == 1, s.state[t] != PROSPECTIVE, m.connected(s, a, t))
                           for t in m.S if t != a])
        return prospective, X.or_(X.not_(prospective), X.not_(reachable))
    return Property(f"not-stuck-in-prospective-{name}", "leads_to", predicate,
                    f"NotStuckInProspective for {name}: Prospective ~> not Prospective, or no member but it that is "
                    "not Prospective is connected to it", fair, default=True)


def election_held_back(m: Quorum, s: StateView, X: Backend) -> Bool:
    """Some server would stand for election but for --max-epoch, the one place the bound changes
    what the specification allows: kip853, a voter would time out (SendRequestVote's guard);
    kip996, a prospective voter would conclude its pre-vote (ConcludePreVote's guard)."""
    if m.kip996:
        return X.any([X.and_(s.epoch[a] >= m.max_epoch, m.pre_vote_concludes(s, X, a)) for a in m.S])
    return X.any([X.and_(s.epoch[a] == m.max_epoch, s.role[a] == VOTER, s.state[a] != LEADER,
                         s.cfg_members[a][a] == 1, m.election_timeout(s, X, a)) for a in m.S])


def within_epochs(p: Property, m: Quorum) -> Property:
    """The property with "or an election is held back by --max-epoch" as a good state (as
    fetch's leader-elected counts the epochs used up): the specification's epochs are unbounded
    when it tests liveness, kmc's stop at --max-epoch, and a behaviour stuck only because they
    did is not the protocol's. A violation then never meets such a state after its P-state, so
    the bound disables no step there: it is a violation of the specification's property
    without the bound too."""
    def predicate(s: StateView, X: Backend) -> tuple[Bool, Bool]:
        before, after = p.parts(s, X)
        return before, X.or_(after, election_held_back(m, s, X))
    return Property(p.name + "-within-epochs", p.form, predicate,
                    p.doc + ", or an election held back by --max-epoch", p.fairness)


def properties(m: Quorum) -> list[Property]:
    """With --test-liveness, the properties model_liveness.cfg lists (ValuesEventuallyAcked as
    one property per value, NotStuckInProspective as one per server), checked by default, and
    each "-within-epochs" (not by default); none otherwise. Fairness of an action the
    configuration has no instance of (a fix switched off) is dropped."""
    if not m.test_liveness:
        return []
    present = {i.action.name for i in m.instances()}
    fair = tuple(f for f in (SPEC_FAIRNESS_996 if m.kip996 else SPEC_FAIRNESS) if f.action in present)
    spec = [*(values_eventually_acked(m, v, fair) for v in m.V), eventually_leader_elected(m, fair),
            *(not_stuck_in_prospective(m, a, fair) for a in m.S if m.kip996)]
    return [*spec, *(within_epochs(p, m) for p in spec)]

