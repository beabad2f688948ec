"""The quorum model against TLC on the KRaft quorum specifications (Vanlightly/kafka-tlaplus @
823615e, kraft/kip_853 and kraft/kip_996).

Independent source: TLC 2.20 with 1 worker (BFS), deadlock not checked, the configurations and
figures in tests/reference/tlc-quorum.md (their .cfg files in tests/reference/tlc/quorum/).
"""

from __future__ import annotations

from typing import Any

import re

import pytest

from kmc.engines.explicit import bfs
from kmc.errors import BadInput
from kmc.api import Limits, SearchOptions
from kmc.engines.vector import engine as vector
from kmc.model.core import Invariant
from kmc.model.quorum import Quorum
from kmc.model.quorum_state import KINDS
from tests.conftest import build


def room_for_messages(m: Quorum) -> Invariant:
    """The message slots never bind: the last slot of every kind and pair stays empty in every
    reachable state, so no send ever finds its pair's slots full."""
    def holds(s: Any, X: Any) -> Any:
        return X.all([getattr(s, kind.fields[0])[a][b][m.capacity[kind.name] - 1] == 0
                      for kind in KINDS for a in m.S for b in m.S])
    return Invariant("room", holds, "the last message slot of every pair is empty")


def run(engine: Any = vector, **settings: Any) -> Any:
    model, invariants = build("quorum", mode="kip853", **settings)
    assert isinstance(model, Quorum)
    result = engine.check(model, [*invariants, room_for_messages(model)], Limits(), SearchOptions(keep_going=True))
    assert result.complete
    return result


def violated(result: Any) -> dict[str, int]:
    return {n: v.trace.length for n, v in result.invariants.items() if v.holds is False}


# tests/reference/tlc-quorum.md, run q853-a: the issue's configuration (2 hosts, cluster size 2,
# MaxEpoch 2, one value, 2 spawned servers, every other limit 0): 2,660 distinct states, 4,184
# generated, depth 28, every invariant holding.
@pytest.mark.parametrize("engine", [vector, bfs], ids=["vector", "scalar"])
def test_the_issue_configuration_matches_tlc(engine: Any) -> None:
    result = run(engine)
    assert (result.distinct_states, result.generated_states, result.depth) == (2660, 4184, 28)
    assert violated(result) == {}


def test_two_values_match_tlc() -> None:
    """q853-c: Value = {v1, v2}, MaxValuesPerEpoch 2: 15,218 distinct, 24,232 generated, depth 32."""
    result = run(values=2, max_values_per_epoch=2)
    assert (result.distinct_states, result.generated_states, result.depth) == (15218, 24232, 32)
    assert violated(result) == {}


@pytest.mark.slow
def test_three_epochs_match_tlc() -> None:
    """q853-b: MaxEpoch 3: 326,983 distinct, 737,419 generated, depth 42 (about a minute)."""
    result = run(max_epoch=3)
    assert (result.distinct_states, result.generated_states, result.depth) == (326983, 737419, 42)
    assert violated(result) == {}


# runs with a limit counter the actions read: TLC on the specification with aux_ctrs and
# net_connectivity_ctr kept in the VIEW (tests/reference/tlc-quorum.md, "The VIEW"), which is
# what kmc keeps
PERTURBED = [  # (run, settings, TLC's distinct states, generated, depth)
    ("q853-e", dict(max_restarts=1), 38357, 68595, 34),
    ("q853-f", dict(max_connectivity_changes=1, max_disconnected_pairs=1), 3013, 7195, 28),
    ("q853-g", dict(max_crashes=1, max_disconnected_pairs=1), 2893, 9642, 28),
    ("q853-h", dict(hosts=3, init_cluster_size=3, min_cluster_size=3, max_cluster_size=3, max_spawned_servers=3,
                    max_epoch=1, values=2, max_values_per_epoch=2), 8273, 18791, 32),
]


@pytest.mark.parametrize("name,settings,states,generated,depth", PERTURBED, ids=[p[0] for p in PERTURBED])
def test_perturbations_match_tlc(name: str, settings: dict[str, int], states: int, generated: int,
                                 depth: int) -> None:
    result = run(**settings)
    assert (result.distinct_states, result.generated_states, result.depth) == (states, generated, depth)
    assert violated(result) == {}


# reconfiguration (KIP-853): TLC on the specification with the counters kept in the VIEW, as
# above (add_reconfig_ctr and remove_reconfig_ctr are limits the actions read)
RECONFIG = [  # (run, settings, TLC's distinct states, generated, depth)
    pytest.param("q853-j", dict(min_cluster_size=1, max_remove_reconfigs=1), 61178, 213652, 44,
                 marks=pytest.mark.slow),  # 22 s under load; q853-q keeps a RemoveVoter in the default suite
    ("q853-q", dict(min_cluster_size=1, max_remove_reconfigs=1, max_epoch=1, max_values_per_epoch=0), 478, 1591, 23),
]
SPAWN = dict(hosts=1, init_cluster_size=1, min_cluster_size=1, max_cluster_size=2, max_spawned_servers=2,
             max_add_reconfigs=1, max_epoch=1, max_values_per_epoch=0)


@pytest.mark.parametrize("name,settings,states,generated,depth", RECONFIG, ids=["q853-j", "q853-q"])
def test_reconfigurations_match_tlc(name: str, settings: dict[str, int], states: int, generated: int,
                                    depth: int) -> None:
    result = run(**settings)
    assert (result.distinct_states, result.generated_states, result.depth) == (states, generated, depth)
    assert violated(result) == {}


@pytest.mark.slow  # 25 s under load; q996-k and the kip996 tests keep an AddVoter in the default suite
def test_a_spawned_server_added_matches_tlc_states() -> None:
    """q853-o: a one-server cluster, a second server started (StartNewServer) and added
    (AcceptAddVoterRequest): TLC 69,746 distinct states, 201,645 generated, depth 43. TLC takes
    each true disjunct of ValidFetchPosition (`fetch_offset = 1 \\/ ...`) as a step of its own:
    the new server's first fetch from an empty log makes both true in 2,982 of kmc's
    AcceptFetchRequestFromObserver steps (counted over kmc's states, and TLC's dot dump shows
    exactly 2,982 of its steps taken twice), so kmc generates 201,645 - 2,982."""
    result = run(**SPAWN)
    assert (result.distinct_states, result.generated_states, result.depth) == (69746, 201645 - 2982, 43)
    assert violated(result) == {}


def test_a_spawned_observer_matches_tlc() -> None:
    """q853-r: a one-server cluster and a second server started, never added: TLC 2,407
    distinct states, 7,593 generated, depth 30; both sides of ValidFetchPosition hold in 126 of
    kmc's steps (as in q853-o), so kmc generates 7,593 - 126."""
    result = run(hosts=1, init_cluster_size=1, min_cluster_size=1, max_cluster_size=1, max_spawned_servers=2,
                 max_epoch=1, max_values_per_epoch=0)
    assert (result.distinct_states, result.generated_states, result.depth) == (2407, 7593 - 126, 30)
    assert violated(result) == {}


def test_spawn_and_reconfiguration_options_are_checked() -> None:
    for settings, wrong in [(dict(max_spawned_servers=1), "--max-spawned-servers (1) must be at least"),
                            (dict(mode="kip996", max_disconnected_pairs=1),
                             "--max-disconnected-pairs is a constant of mode kip853 only")]:
        with pytest.raises(BadInput, match=re.escape(wrong)):
            build("quorum", **{"mode": "kip853", **settings})


# -- kip996 (tests/reference/tlc-quorum.md, "kip996"): TLC on kraft/kip_996 with the VIEW that
# keeps the counters and the processed BeginQuorumEpoch requests. TLC's "states generated" is
# not compared: TLC takes each true disjunct of a guard as its own step (CheckQuorumResign,
# VoterFetchTimeout, ConcludePreVote have overlapping ones), kmc takes the step once.
PREVOTE = [  # (run, settings, TLC's distinct states, depth)
    ("q996-a", {}, 20, 10),
    ("q996-d", dict(max_connectivity_changes=1), 180, 16),
    ("q996-e", dict(max_crashes=1), 63, 13),
]
PREVOTE_SLOW = [
    ("q996-b", dict(max_disruptive_election_triggers=1), 30561, 40),
    ("q996-c", dict(max_restarts=1), 32194, 40),
]


def run996(engine: Any = vector, **settings: Any) -> Any:
    model, invariants = build("quorum", mode="kip996", **settings)
    result = engine.check(model, [*invariants, room_for_messages(model)], Limits(), SearchOptions(keep_going=True))
    assert result.complete
    return result


@pytest.mark.parametrize("engine", [vector, bfs], ids=["vector", "scalar"])
@pytest.mark.parametrize("name,settings,states,depth", PREVOTE, ids=[p[0] for p in PREVOTE])
def test_kip996_matches_tlc(engine: Any, name: str, settings: dict[str, int], states: int, depth: int) -> None:
    result = run996(engine, **settings)
    assert (result.distinct_states, result.depth) == (states, depth)
    assert violated(result) == {}


@pytest.mark.slow
@pytest.mark.parametrize("name,settings,states,depth", PREVOTE_SLOW, ids=[p[0] for p in PREVOTE_SLOW])
def test_kip996_perturbations_match_tlc(name: str, settings: dict[str, int], states: int, depth: int) -> None:
    result = run996(**settings)
    assert (result.distinct_states, result.depth) == (states, depth)
    assert violated(result) == {}


def test_compare_shows_both_modes(run_kmc: Any) -> None:
    """`kmc compare quorum`: kip853 and kip996 side by side; an invariant of one mode only is
    "-" in the other's column."""
    rc, out, err = run_kmc("compare", "quorum", "--quiet")
    assert rc == 0, out + err
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:4]]
            for line in out.splitlines() if line.count("│") == 4}
    assert rows["no-illegal-state"] == ["holds", "holds"]
    assert rows["states-match-roles"] == ["holds", "-"]
    assert rows["valid-roles-and-states"] == ["-", "holds"]
    assert rows["distinct states"] == ["2,660", "20"]


SHIPPED = ["--mode", "kip853", "--hosts", "4", "--init-cluster-size", "3", "--min-cluster-size", "3",
           "--max-cluster-size", "4", "--max-spawned-servers", "4", "--max-restarts", "1", "--max-crashes", "1",
           "--max-add-reconfigs", "1", "--max-remove-reconfigs", "1"]


@pytest.mark.slow  # about 2 minutes: the model has 1,088 instances over 6,364 positions
def test_the_shipped_configuration_simulates(run_kmc: Any) -> None:
    """kraft_kip_853.cfg's constants (tests/reference/tlc/quorum/shipped853.cfg: 4 hosts, 3
    servers, up to 4, one add and one remove, a restart and a crash): 20 seeded walks break no
    invariant (TLC's simulation of it for a minute finds no violation either,
    tests/reference/tlc-quorum.md)."""
    rc, out, err = run_kmc("simulate", "quorum", *SHIPPED, "--depth", "40", "--walkers", "20", "--walks", "20",
                           "--seed", "1")
    assert rc == 0, out + err
    assert "violated" not in out.replace("not violated", "")
