"""kip996's reconfiguration (StartNewServer, AcceptAddVoterRequest, AcceptRemoveVoterRequest)
against TLC on Vanlightly/kafka-tlaplus @ 823615e, kraft/kip_996.

Independent source: TLC 2.20 with 1 worker (BFS), deadlock not checked, the VIEW that keeps the
counters and the processed BeginQuorumEpoch requests; the configurations and figures are in
tests/reference/tlc-quorum.md ("Reconfiguration (kip996)"), their .cfg files in
tests/reference/tlc/quorum/. TLC's "states generated" is not compared (as for the other kip996
runs: TLC takes each true disjunct of a guard as a step of its own, kmc takes the step once).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from kmc.api import Limits, SearchOptions, check
from kmc.engines.explicit import bfs
from kmc.engines.vector import engine as vector
from kmc.model.core import Backend, Bool, Invariant, StateView
from kmc.model.quorum import Quorum
from kmc.model.quorum_state import DEAD, NIL_ROLE, OBSERVER, VOTER
from kmc.traces.scenario import run_scenario
from tests.conftest import build
from tests.test_quorum import room_for_messages, violated
from tests.test_quorum_engines import model_and_invariants
from tests.test_vector_parity import outcome

SCENARIO = Path(__file__).parent.parent / "scenarios" / "quorum-kip996-add-voter.toml"
ONE_SERVER = dict(hosts=1, init_cluster_size=1, min_cluster_size=1)
RECONFIG = [  # (run, settings, TLC's distinct states, depth)
    ("q996-g", dict(min_cluster_size=1, max_remove_reconfigs=1), 163, 20),
    ("q996-h", dict(min_cluster_size=1, max_remove_reconfigs=1, max_epoch=1, max_values_per_epoch=0), 51, 15),
    ("q996-i", dict(ONE_SERVER, max_cluster_size=1, max_spawned_servers=2, max_epoch=1, max_values_per_epoch=0),
     3, 3),
    ("q996-j", dict(ONE_SERVER, max_cluster_size=2, max_spawned_servers=2, max_add_reconfigs=1, max_epoch=1,
                    max_values_per_epoch=0), 33, 16),
    ("q996-k", dict(ONE_SERVER, max_cluster_size=2, max_spawned_servers=2, max_add_reconfigs=1), 147, 20),
    ("q996-p", dict(min_cluster_size=1, max_remove_reconfigs=1, max_epoch=1, max_values_per_epoch=0, max_restarts=1),
     4659, 22),
    ("q996-r", dict(min_cluster_size=1, max_remove_reconfigs=1, max_epoch=1, max_values_per_epoch=0, max_crashes=1),
     72, 15),
]


def role_follows(m: Quorum) -> Invariant:
    """kip996 has no role variable: kmc's `role` field must be a function of the others (Nil
    for a server not started or dead, Voter for a member of its own configuration, else
    Observer), so that it tells no two of TLC's states apart."""
    def holds(s: StateView, X: Backend) -> Bool:
        def expected(a: int) -> Any:
            alive = X.and_(m.started(s, a), s.state[a] != DEAD)
            return X.ite(alive, X.ite(s.cfg_members[a][a] == 1, VOTER, OBSERVER), NIL_ROLE)
        return X.all([s.role[a] == expected(a) for a in m.S])
    return Invariant("role-follows", holds, "role is Nil, Voter or Observer as the state says")


def run996(engine: Any = vector, **settings: Any) -> Any:
    model, invariants = build("quorum", mode="kip996", **settings)
    assert isinstance(model, Quorum)
    checks = [*invariants, room_for_messages(model), role_follows(model)]
    result = engine.check(model, checks, Limits(), SearchOptions(keep_going=True))
    assert result.complete
    return result


@pytest.mark.parametrize("name,settings,states,depth", RECONFIG, ids=[r[0] for r in RECONFIG])
def test_kip996_reconfigurations_match_tlc(name: str, settings: dict[str, Any], states: int, depth: int) -> None:
    result = run996(**settings)
    assert (result.distinct_states, result.depth) == (states, depth)
    assert violated(result) == {}
    assert result.generated_states == GENERATED[name]


# TLC's generated states less the steps it takes twice, where two disjuncts of a guard hold
# (counted by evaluating each disjunct in every reachable state: ConcludePreVote's two sides in
# q996-g, ValidFetchPosition's in q996-j and q996-k; tests/reference/tlc-quorum.md)
GENERATED = {"q996-g": 268 - 14, "q996-h": 75, "q996-i": 3, "q996-j": 50 - 2, "q996-k": 240 - 7,
             "q996-p": 13779, "q996-r": 156}


@pytest.mark.slow
def test_kip996_reconfiguration_with_a_disruption_matches_tlc() -> None:
    """q996-l: a RemoveVoter and one disruptive election trigger, 197,332 distinct states,
    depth 50 in TLC (about 4 minutes here: the slow suite)."""
    result = run996(min_cluster_size=1, max_remove_reconfigs=1, max_disruptive_election_triggers=1)
    assert (result.distinct_states, result.depth) == (197332, 50)
    assert violated(result) == {}


@pytest.mark.slow
def test_kip996_added_voter_with_a_restart_matches_tlc() -> None:
    """q996-q: a new server added, one restart: 31,676 distinct states, depth 34 in TLC (about
    half a minute here)."""
    result = run996(**ONE_SERVER, max_add_reconfigs=1, max_epoch=1, max_values_per_epoch=0, max_restarts=1)
    assert (result.distinct_states, result.depth) == (31676, 34)
    # TLC's 104,030 less its steps taken twice: 378 of SendFetchRequest (ShouldSendFetch's
    # disjuncts), 30 of AcceptFetchRequest (ValidFetchPosition's), counted
    assert result.generated_states == 104030 - 378 - 30
    assert violated(result) == {}


def test_the_scalar_engine_agrees_on_an_added_voter() -> None:
    """q996-k, the reference search: the same figures as the vector engine and TLC."""
    result = run996(bfs, **RECONFIG[4][1])
    assert (result.distinct_states, result.depth) == (147, 20)
    assert violated(result) == {}


@pytest.mark.slow
def test_scalar_vector_and_compiled_agree_on_an_added_voter() -> None:
    """q996-k with the planted invariant of tests/test_quorum_engines.py (the second
    configuration never commits, violated once the added voter's command commits): the three
    engines decide the same states, verdicts and counterexample, step by step (about a minute,
    most of it compiling: the slow suite)."""
    model, invariants = model_and_invariants(mode="kip996", **RECONFIG[4][1])
    search = SearchOptions(keep_going=True)
    runs = {engine: check(model, invariants, engine=engine, limits=Limits(), search=search)
            for engine in ("scalar", "vector", "compiled")}
    assert outcome(runs["vector"]) == outcome(runs["scalar"])
    assert outcome(runs["compiled"]) == outcome(runs["scalar"])
    planted_trace = runs["scalar"].invariants["second-config-never-committed"].trace
    assert planted_trace is not None and planted_trace.length == 11  # start, add, BeginQuorumEpoch, 3 fetches
    assert runs["scalar"].distinct_states == 147


def test_a_new_server_added_as_a_voter_plays(run_kmc: Any) -> None:
    """scenarios/quorum-kip996-add-voter.toml (the picture in docs/quorum.md) plays to its end,
    where the new server is a voter of the two-member configuration, committed on both."""
    rc, out, err = run_kmc("trace", "--scenario", str(SCENARIO), "--format", "html")
    assert rc == 0, out + err
    scenario = tomllib.loads(SCENARIO.read_text())
    model, _ = build("quorum", **scenario["settings"])
    assert isinstance(model, Quorum)
    last = model.schema.view(run_scenario(model, scenario["steps"]).steps[-1].state)
    assert [last.role[1], last.cfg_id[0], last.cfg_id[1], last.cfg_committed[0], last.cfg_committed[1]] == \
        [VOTER, 2, 2, 1, 1]


def test_compare_shows_both_modes_with_a_remove_voter(run_kmc: Any) -> None:
    """`kmc compare quorum` with a RemoveVoter: both modes run it, with TLC's figures (q853-q:
    478 states, q996-h: 51)."""
    rc, out, err = run_kmc("compare", "quorum", "--min-cluster-size", "1", "--max-remove-reconfigs", "1",
                           "--max-epoch", "1", "--max-values-per-epoch", "0", "--quiet")
    assert rc == 0, out + err
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:4]]
            for line in out.splitlines() if line.count("│") == 4}
    assert rows["distinct states"] == ["478", "51"]
    assert rows["depth"] == ["23", "15"]
