"""The `quorum` model's liveness properties (kraft_kip_853_properties and
kraft_kip_996_properties, with --test-liveness): ValuesEventuallyAcked (one property per value),
EventuallyLeaderElected, ReconfigurationNotStuck (one property per configuration id it
quantifies over, 1..MaxAddReconfigs + MaxRemoveReconfigs: none without a reconfiguration, where
it is TRUE) and, in kip996, NotStuckInProspective (one property per server), under each
specification's `Fairness` (LivenessSpec)."""

from __future__ import annotations

from kmc.model.core import Backend, Bool, StateView
from kmc.model.quorum import Quorum
from kmc.model.quorum_state import DEAD, LEADER, PROSPECTIVE, SERVER, VALUE, VOTER
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


def is_current_leader(m: Quorum, s: StateView, X: Backend, a: int) -> Bool:
    """IsCurrentLeader(a): a leads and no other started server has a higher epoch."""
    return X.and_(m.started(s, a), s.state[a] == LEADER,
                  X.not_(X.any([X.and_(m.started(s, t), s.epoch[t] > s.epoch[a]) for t in m.S if t != a])))


def config_all_or_nothing(m: Quorum, cfg_id: int, s: StateView, X: Backend) -> Bool:
    """ConfigAllOrNothing(cfg_id): a current leader whose log holds the configuration command of
    id cfg_id committed (ConfigInServerLogAndCommitted), or holds none (ConfigNotInServerLog), or
    each member of whose configuration is cut from it or dead. Both properties test the leader's
    own log (`s`, not the member `s1` the specification quantifies over), as written."""
    def good(a: int) -> Bool:
        command = [X.and_(m.has(s, a, o), s.log_cfg_id[a][o] == cfg_id) for o in m.O]
        committed = X.any([X.and_(c, s.hwm[a] >= o + 1) for o, c in enumerate(command)])
        cut = X.all([X.implies(s.cfg_members[a][t] == 1, X.or_(X.not_(m.linked(s, a, t)), s.state[t] == DEAD))
                     for t in m.S])
        return X.and_(is_current_leader(m, s, X, a), X.or_(committed, X.not_(X.any(command)), cut))
    return X.any([good(a) for a in m.S])


def reconfiguration_not_stuck(m: Quorum, cfg_id: int, fair: tuple[Fairness, ...]) -> Property:
    return Property(f"reconfiguration-not-stuck-config-{cfg_id}", "always_eventually",
                    lambda s, X: config_all_or_nothing(m, cfg_id, s, X),
                    f"ReconfigurationNotStuck for configuration id {cfg_id}: []<>ConfigAllOrNothing({cfg_id}) (a "
                    "current leader with the command committed, or without it, or cut from every live member)", fair,
                    default=True)


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
    did is not the protocol's. A violation then never meets such a state after its P-state
    (for []<>P: in its cycle), so the bound disables no step there: it is a violation of the
    specification's property without the bound too."""
    def predicate(s: StateView, X: Backend) -> Bool | tuple[Bool, Bool]:
        before, after = p.parts(s, X)
        if after is None:  # []<>P: []<>(P \/ held back)
            return X.or_(before, election_held_back(m, s, X))
        return before, X.or_(after, election_held_back(m, s, X))
    return Property(p.name + "-within-epochs", p.form, predicate,
                    p.doc + ", or an election held back by --max-epoch", p.fairness)


def properties(m: Quorum) -> list[Property]:
    """With --test-liveness, the properties model_liveness.cfg lists (ValuesEventuallyAcked as
    one property per value, ReconfigurationNotStuck as one per configuration id,
    NotStuckInProspective as one per server), checked by default, and
    each "-within-epochs" (not by default); none otherwise. Fairness of an action the
    configuration has no instance of (a fix switched off) is dropped."""
    if not m.test_liveness:
        return []
    present = {i.action.name for i in m.instances()}
    fair = tuple(f for f in (SPEC_FAIRNESS_996 if m.kip996 else SPEC_FAIRNESS) if f.action in present)
    reconfigs = m.settings["max_add_reconfigs"] + m.settings["max_remove_reconfigs"]
    spec = [*(values_eventually_acked(m, v, fair) for v in m.V),
            *(reconfiguration_not_stuck(m, i, fair) for i in range(1, reconfigs + 1)),
            eventually_leader_elected(m, fair),
            *(not_stuck_in_prospective(m, a, fair) for a in m.S if m.kip996)]
    return [*spec, *(within_epochs(p, m) for p in spec)]

