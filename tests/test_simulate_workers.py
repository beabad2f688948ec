"""`kmc simulate --workers N`: every walk has its own random stream, so with `--walks` the states
seen, the steps and the walks do not depend on the workers or the walkers; the compiled
interpretation takes the same steps as the vector one; bad `--workers` values are one line."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from kmc.engines.simulation.streams import draw, walk_keys
from kmc.engines.simulation.swarm import Swarm, Walks, interpretation
from kmc.engines.simulation.workers import simulate as in_workers
from kmc.model.core import Model
from kmc.registry import select
from kmc.semantics.scalar import ScalarModel
from kmc.traces.replay import replay
from tests.conftest import build

compiled = pytest.mark.skipif(importlib.util.find_spec("llvmlite") is None, reason="the compiled extra (llvmlite)")


def walked_by_hand(model: Model, seed: int, walks: int, depth: int) -> tuple[set[tuple[int, ...]], int]:
    """The states and steps of walks 0 .. walks-1 as streams.py defines them, walked one state at
    a time by the scalar interpretation (a second computation, outside the swarm): draw 0 picks
    the initial state, draw t + 1 the k-th enabled instance (instance order), k = floor(u x count);
    a walk ends at `depth` steps or where nothing is enabled."""
    scalar = ScalarModel(model)
    initial = list(model.initial_states())
    seen: set[tuple[int, ...]] = set()
    steps = 0
    for j in range(walks):
        key = walk_keys(seed, np.array([j]))
        state = initial[min(math.floor(float(draw(key, 0)[0]) * len(initial)), len(initial) - 1)]
        seen.add(state)
        for t in range(depth):
            options = [nxt for _, nxt in scalar.successors(state)]
            if not options:
                break
            k = min(math.floor(float(draw(key, t + 1)[0]) * len(options)), len(options) - 1)
            state = options[k]
            seen.add(state)
            steps += 1
    return seen, steps


def seen_states(swarm: Swarm) -> set[tuple[int, ...]]:
    words = swarm.step.fmt.join(swarm.seen.sort_key, swarm.seen.extras)
    return {tuple(int(v) for v in row) for row in swarm.step.packing.unpack(words)}


@pytest.mark.parametrize("name", ["vector", pytest.param("compiled", marks=compiled)])
def test_the_walks_are_their_streams_walked_by_hand(name: str) -> None:
    model, invariants = build("replication", mode="kip320")
    swarm = Swarm(model, [], Walks(walkers=37, depth=25, seed=11, walks=300), None, interpretation(model, [], name))
    result = swarm.run()
    seen, steps = walked_by_hand(model, 11, 300, 25)
    assert seen_states(swarm) == seen and result.generated_states == steps
    assert result.engine_stats["walks"] == 300 and result.stopped_by == "walks"


def test_workers_and_walkers_do_not_change_what_walks_see() -> None:
    model, invariants = build("replication", mode="kip320")
    figures = set()
    for workers, walkers in [(1, 400), (2, 400), (3, 400), (2, 7)]:
        result = in_workers(model, invariants, Walks(walkers=walkers, depth=30, seed=5, walks=2000), workers)
        assert result.engine_stats["workers"] == workers
        figures.add((result.distinct_states, result.generated_states, result.engine_stats["walks"],
                     result.engine_stats["deepest_walk"]))
    assert len(figures) == 1
    seen, steps = walked_by_hand(model, 5, 2000, 30)
    assert figures == {(len(seen), steps, 2000, max(d for *_, d in figures))}


@compiled
@pytest.mark.parametrize("weights", [{}, {"leader_write": 3.5, "become_follower": 0}])
def test_compiled_and_vector_take_the_same_steps(weights: dict[str, float]) -> None:
    model, invariants = build("replication", mode="kip320", replicas=3)
    runs = []
    for name in ("vector", "compiled"):
        swarm = Swarm(model, invariants, Walks(walkers=300, depth=30, seed=5, walks=1500, weights=weights), None,
                      interpretation(model, invariants, name))
        result = swarm.run()
        runs.append((seen_states(swarm), result.generated_states, result.engine_stats["deepest_walk"]))
    assert runs[0] == runs[1]


@compiled
def test_the_compiled_rows_match_their_keys() -> None:
    """The patch kernel rewrites only the key words a step changed: after the walks each row is
    its key unpacked in full."""
    model, invariants = build("kraft", mode="v3.5-avoid-lrs", min_insync_replicas=2, fence_broker_limit=1,
                              unclean_shutdown_limit=1)
    moves = interpretation(model, invariants, "compiled")
    moves.begin(np.array(model.initial_states(), dtype=np.int64))
    moves.place(None, np.zeros(64, dtype=np.int64))
    keys = walk_keys(3, np.arange(64))
    for t in range(12):
        moves.round(draw(keys, t + 1), None)
    assert np.array_equal(moves.rows, moves.step.rows_of(np.ascontiguousarray(moves.keys.T)))


@compiled
def test_the_compiled_swarm_finds_the_last_replica_standing_as_the_vector_one() -> None:
    """The planted case of kraft v3.5 (AvoidLastReplicaStanding off): both interpretations walk
    to the same violating state by the same walk, and both traces shorten to TLC's 7 steps
    (run b2-LRS-v35, tests/reference/tlc-kraft.md)."""
    model, invariants = build("kraft", mode="v3.5", min_insync_replicas=2, fence_broker_limit=1,
                              unclean_shutdown_limit=1)
    invariants = select(invariants, ["leader-completeness"])
    found = []
    for name in ("vector", "compiled"):
        swarm = Swarm(model, invariants, Walks(walkers=2000, seed=1, time_limit=120), None,
                      interpretation(model, invariants, name))
        result = swarm.run()
        verdict = result.invariants["leader-completeness"]
        assert verdict.holds is False and result.engine_stats["traces"]["leader-completeness"] == "shortest"
        assert verdict.trace is not None and verdict.trace.length == 7
        replay(verdict.trace, invariants[0])
        found.append((dict(swarm.paths), result.generated_states, [s.state for s in verdict.trace.steps]))
    assert found[0] == found[1]


@pytest.mark.parametrize("value", ["0", "-1", "513", "two"])
def test_bad_workers_exit_2_in_one_line(run_kmc, value: str) -> None:
    rc, out, err = run_kmc("simulate", "replication", "--walks", "10", "--workers", value)
    assert rc == 2 and "--workers" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_streams_are_uniform_enough() -> None:
    """Draws of 1,000 streams over 100 steps: their mean and each tenth's share are those of a
    uniform distribution within 1 % (100,000 draws)."""
    u = draw(walk_keys(0, np.arange(1000))[:, None], np.arange(100)[None, :]).ravel()
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    assert np.all(np.abs(np.bincount((u * 10).astype(int), minlength=10) / len(u) - 0.1) < 0.01)
