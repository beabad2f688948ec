"""What a vector search (kmc/engines/vector/engine.py:Search) reports when it ends: the result,
its counterexamples rebuilt from the parent links, and the properties' verdicts on the
explored graph.

A counterexample is each state's parent index in the previous level and its instance id,
followed back to an initial state and replayed forward from it (kmc/engines/replay.py), so it
is concrete even when states are stored by canonical key.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from kmc.engines.liveness import check as liveness
from kmc.engines.replay import replay_paths
from kmc.engines.result import CheckResult
from kmc.engines.search import finish
from kmc.engines.vector.edges import LivenessGraphBuilder
from kmc.model.core import State


def result(search: Any, depth: int) -> CheckResult:
    """The result of `search`, stopped or done at `depth`."""
    stored = (search.visited.nbytes + search.seen.nbytes + sum(a.nbytes for a in search.parents)
              + sum(a.nbytes for a in search.iids) + (0 if search.tree is None else search.tree.nbytes()))
    distinct, generated = search.stopped_at or (search.distinct, search.generated)
    links = traces(search)
    done = finish(search.model, search.engine, search.started, search.violations, links.get,
                  distinct=distinct, generated=generated, depth=depth, stopped_by=search.stopped_by,
                  symmetry=search.step.symmetry is not None,
                  bytes_per_state=stored / distinct if distinct else None)
    if search.coverage is not None:
        done.coverage = search.coverage.to_json()
    if search.spill is not None:
        done.engine_stats["spill"] = search.spill.stats()
    if search.resumed_at is not None:
        done.engine_stats["resumed_at"] = search.resumed_at
        done.resumed_states = search.resumed_states
    if search.properties:
        _liveness(search, done)
    return done


def _liveness(search: Any, done: CheckResult) -> None:
    """The properties' verdicts on the explored graph (kmc/engines/liveness/)."""
    started, cpu = time.perf_counter(), time.process_time()
    explore_cpu = cpu - search.cpu_started
    if not done.complete:  # successors beyond the explored states: no graph to decide on
        done.properties, _ = liveness.check(search.model, search.properties, None, None, None, False)
        return
    words = (np.concatenate(search.levels, axis=1) if search.levels
             else np.zeros((search.step.packing.words, 0), dtype=np.uint64))
    states = LivenessGraphBuilder(search.step, words, len(search.initial), search.steps, search.properties)
    built, built_cpu = time.perf_counter() - started, time.process_time() - cpu
    cpu = time.process_time()
    done.properties, figures = liveness.check(search.model, search.properties, states.graph, states.evaluate,
                                              states.state, done.complete)
    done.engine_stats["liveness"] = {
        "explore_seconds": round(done.seconds, 3), "graph_seconds": round(built, 3), **figures,
        "cpu_seconds": {"explore": round(explore_cpu, 3), "graph": round(built_cpu, 3),
                        "properties": round(time.process_time() - cpu, 3)}}
    done.seconds = time.perf_counter() - search.started


def traces(search: Any) -> dict[State, tuple[State, int] | None]:
    """Parent links along the path to every violating state, replayed forward from its
    concrete initial state."""
    paths = {}
    for state, (level, index) in search.found_at.items():
        first, path = path_of(search, level, index)
        paths[state] = (search.initial[first], path)
    return replay_paths(search.model, paths, search.engine)


def path_of(search: Any, level: int, index: int) -> tuple[int, list[int]]:
    """(index of the initial state, instance ids) of the path to a state of a level."""
    path: list[int] = []
    while level > 0:
        path.append(int(search.iids[level - 1][index]))
        index = int(search.parents[level - 1][index])
        level -= 1
    return index, path[::-1]
