"""Symmetry reduction over replica ids: canonical forms, orbit counts computed independently,
concrete traces, and the full three-replica kip320 run."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kmc.engines.explicit import bfs
from kmc.engines.explicit import dfs
from kmc.engines.vector import engine as vector
from kmc.engines.vector.packing import Packing
from kmc.semantics.scalar import ScalarModel
from kmc.api import Limits, SearchOptions
from kmc.engines.symmetry import Symmetry, lexmin
from kmc.errors import BadInput
from kmc.model.core import Action, Field, Invariant, Model, Option, Param, Schema
from kmc.registry import select
from kmc.traces.replay import replay
from tests.conftest import build

MODES = ["hw", "kip101", "kip279", "kip320-first-try", "kip320"]


def reachable(model, limit: int | None = None) -> set:
    """Every reachable state (or the first levels, past `limit` states), by a plain BFS
    written here (no engine, no symmetry)."""
    sm = ScalarModel(model)
    seen = set(model.initial_states())
    frontier = list(seen)
    while frontier and (limit is None or len(seen) < limit):
        frontier = [n for s in frontier for _, n in sm.successors(s) if n not in seen and not seen.add(n)]
    return seen


@pytest.fixture(scope="module")
def three():
    model, _ = build("replication", mode="kip320", replicas=3, max_leader_epoch=3)
    return model, Symmetry(model.schema), sorted(reachable(model, limit=400))


def test_permutations_act_as_a_group_and_fix_the_canonical_form(three) -> None:
    model, sym, states = three
    assert len(sym.perms) == 6 and sym.perms[0] == (0, 1, 2)
    index = {p: k for k, p in enumerate(sym.perms)}
    for state in states:
        canon = sym.canonical(state)
        assert canon == min(sym.permute(state, k) for k in range(6)) and canon <= state
        for a, pa in enumerate(sym.perms):
            image = sym.permute(state, a)
            assert sym.canonical(image) == canon
            for b, pb in enumerate(sym.perms):
                composed = index[tuple(pb[pa[i]] for i in range(3))]
                assert sym.permute(image, b) == sym.permute(state, composed)


def test_renaming_moves_replica_axes_and_replica_values(three) -> None:
    model, sym, _ = three
    s = model.schema
    state = s.state(**{f.name: np.full(f.shape, f.lo).tolist() if f.shape else f.lo for f in s.fields})
    v = dict(zip(s.element_names(), state))
    v["leader[0]"] = 1  # r1 follows r2
    v["isr[0][2]"] = 1  # r1's ISR holds r3
    v["quorum_leader"] = 2
    v["request_leader[1]"] = 0
    state = tuple(v[n] for n in s.element_names())
    swap = sym.perms.index((1, 0, 2))  # r1 <-> r2
    image = dict(zip(s.element_names(), sym.permute(state, swap)))
    assert image["leader[1]"] == 0 and image["leader[0]"] == -1
    assert image["isr[1][2]"] == 1 and image["isr[0][2]"] == 0
    assert image["quorum_leader"] == 2 and image["request_leader[1]"] == 1


def test_packed_layouts_pack_the_permuted_states(three) -> None:
    model, sym, states = three
    packing = Packing.for_schema(model.schema)
    layouts = sym.layouts(packing)
    columns = np.array(states).T
    for k, layout in enumerate(layouts):
        words = layout.pack_columns(columns)
        for j, state in enumerate(states[:50]):
            assert tuple(int(w) for w in words[:, j]) == packing.pack_state(sym.permute(state, k))


@pytest.mark.parametrize("mode", MODES)
def test_symmetric_count_is_the_number_of_orbits(mode: str) -> None:
    """Independent: the orbits of the full reachable set (plain BFS here), and the orbit
    sizes add up to it."""
    model, _ = build("replication", mode=mode)
    states = reachable(model)
    sym = Symmetry(model.schema)
    orbits = {sym.canonical(s) for s in states}
    for engine in (bfs, vector, dfs):
        assert engine.check(model, [], Limits(), SearchOptions(symmetry=True)).distinct_states == len(orbits)
    assert sum(len({sym.permute(c, k) for k in range(len(sym.perms))}) for c in orbits) == len(states)


@pytest.mark.parametrize("mode", ["hw", "kip101", "kip279", "kip320-first-try"])
def test_symmetric_counterexamples_are_concrete_and_shortest(mode: str) -> None:
    model, invariants = build("replication", mode=mode, replicas=3, max_leader_epoch=3)
    [strong] = select(invariants, ["strong-isr"])
    plain = vector.check(model, [strong]).invariants["strong-isr"].trace
    trace = vector.check(model, [strong], Limits(), SearchOptions(symmetry=True)).invariants["strong-isr"].trace
    assert trace is not None and plain is not None
    replay(trace, strong)  # a real run of the model, state by state
    assert trace.length == plain.length  # renaming replicas keeps distances


@pytest.mark.slow  # 21 s under load: a regression pin; the default suite has every mode's orbits counted
def test_full_three_replica_kip320_run_with_symmetry() -> None:
    """1,665,204 states up to renaming replicas (the figure docs/replication.md records): a
    regression pin, kmc's own output (first pinned in commit 795b249, unchanged at c4ec5e9; TLC
    has no symmetry run to compare with); the committed-data invariants hold."""
    model, invariants = build("replication", mode="kip320", replicas=3, max_leader_epoch=3)
    result = vector.check(model, select(invariants, ["strong-isr", "weak-isr"]), Limits(), SearchOptions(symmetry=True))
    assert (result.distinct_states, result.depth, result.complete) == (1_665_204, 32, True)
    assert not result.violated
    assert result.bytes_per_state is not None and result.bytes_per_state < 64


@pytest.mark.slow
def test_full_three_replica_kip320_run_without_symmetry() -> None:
    """9,985,570 states, depth 32: TLC's figures on the published spec with these bounds and no
    symmetry (tests/reference/tlc-replication.md, table D); six times the orbits above, less the
    states some renaming fixes."""
    model, invariants = build("replication", mode="kip320", replicas=3, max_leader_epoch=3)
    result = vector.check(model, select(invariants, ["strong-isr", "weak-isr"]))
    assert (result.distinct_states, result.depth, result.complete) == (9_985_570, 32, True)
    assert not result.violated


def test_models_without_replicas_are_refused() -> None:
    with pytest.raises(BadInput, match="declares no replica axes"):
        Symmetry(Schema([Field("a", lo=0, hi=3, shape=(2,))]))
    with pytest.raises(BadInput, match="different sizes"):
        Symmetry(Schema([Field("a", lo=0, hi=1, shape=(2,), replica_axes=(0,)),
                         Field("b", lo=0, hi=1, shape=(3,), replica_axes=(0,))]))
    with pytest.raises(BadInput, match="not within"):
        Symmetry(Schema([Field("a", lo=0, hi=1, shape=(2,), replica_axes=(0,)),
                         Field("b", lo=-1, hi=5, holds_replica=True)]))
    with pytest.raises(BadInput, match=f"at most 5 replicas \\({math.factorial(5)} permutations\\)"):
        Symmetry(build("replication", replicas=6)[0].schema)


def test_lexmin_picks_the_smallest_words_of_each_state() -> None:
    rng = np.random.default_rng(7)
    for layouts, words in [(1, 1), (1, 2), (6, 1), (6, 2), (24, 3)]:
        keys = rng.integers(0, 3, (200, layouts, words)).astype(np.uint64)
        keys[:, :, 0] += np.uint64(2**64 - 3)  # the largest values too
        got = lexmin(keys)
        for n in range(200):
            assert tuple(int(x) for x in got[:, n]) == min(tuple(int(x) for x in keys[n, k]) for k in range(layouts))


class Lopsided(Model):
    """Replicas start up; an election picks a live replica, or (lopsided) always the first."""

    name = "lopsided"
    summary = "test only"
    modes = {"fair": "any live replica can be elected", "first": "only r1 can be elected"}
    options = (Option("mode", "fair", "mode", choices=("fair", "first")),)

    def _build(self) -> None:
        self.schema = Schema([Field("up", lo=0, hi=1, shape=(3,), replica_axes=(0,)),
                              Field("leader", lo=-1, hi=2, holds_replica=True)])

    def initial_states(self):
        return [self.schema.state(up=[0, 0, 0], leader=-1)]

    def actions(self):
        r = Param("replica", (0, 1, 2))
        elect = (0,) if self.mode == "first" else (0, 1, 2)
        return [
            Action("start", lambda s, X, r: s.up[r] == 0, lambda s, X, r: {"up": {r: 1}}, (r,)),
            Action("elect", lambda s, X, r: X.and_(s.up[r] == 1, s.leader == -1), lambda s, X, r: {"leader": r},
                   (Param("replica", elect),)),
        ]


def test_symmetry_refuses_a_model_that_treats_replicas_differently() -> None:
    fair = Invariant("some-leader-up", lambda s, X: X.implies(s.leader != -1, X.at(s.up, s.leader) == 1), "")
    lopsided = Invariant("r1-first", lambda s, X: s.up[0] >= s.up[1], "")
    for engine in (bfs, vector, dfs):
        # 7 by hand: k of 3 replicas up with no leader (k = 0..3), or k up and one of them leads
        # (k = 1..3), up to renaming
        assert engine.check(Lopsided(mode="fair"), [fair], Limits(), SearchOptions(symmetry=True)).distinct_states == 7
        with pytest.raises(BadInput, match="action elect does not treat replicas alike"):
            engine.check(Lopsided(mode="first"), [fair], Limits(), SearchOptions(symmetry=True))
        with pytest.raises(BadInput, match=r"invariant r1-first does not treat replicas alike .*r1->r2, r2->r1"):
            engine.check(Lopsided(mode="fair"), [lopsided], Limits(), SearchOptions(symmetry=True))
