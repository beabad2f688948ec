"""The reference engine: breadth-first search over concrete states, one at a time.

Level by level in a deterministic order (initial states, then instance order), so the first
state found violating an invariant lies at the smallest depth: its trace is a shortest
counterexample. States are dictionary keys, compared exactly: no fingerprint collisions.
With symmetry, a state is stored under its canonical form (kmc/engines/symmetry.py) but the
search goes on from the concrete state found first, so traces stay concrete.

With liveness properties, every step is kept as an edge between state numbers (in discovery
order) and the properties are checked on that graph (kmc/engines/liveness/), their
predicates evaluated one state at a time by the scalar interpretation: the reference.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from kmc.engines.liveness import check as liveness
from kmc.engines.liveness.graph import Graph
from kmc.engines.result import CheckResult, Progress
from kmc.model.temporal import Property
from kmc.semantics.scalar import SCALAR
from kmc.semantics.scalar import ScalarModel
from kmc.engines.interface import Limits, ProgressHook, SearchOptions
from kmc.engines.search import Violations, finish
from kmc.engines import symmetry
from kmc.model.core import Invariant, Model, State


def check(
    model: Model,
    invariants: Sequence[Invariant],
    limits: Limits = Limits(),
    search: SearchOptions = SearchOptions(),
    progress: ProgressHook | None = None,
    properties: Sequence[Property] = (),
) -> CheckResult:
    started = time.perf_counter()
    ids: dict[State, int] = {}  # with properties: state -> its number, in discovery order
    edges: list[tuple[int, int, int]] = []
    sm = ScalarModel(model)
    violations = Violations(invariants)
    parents: dict[State, tuple[State, int] | None] = {}  # by key: the parent's concrete state
    key = symmetry.for_model(model, invariants).canonical if search.symmetry else _itself
    generated = 0
    stopped_by: str | None = None

    def discover(state: State, stored: State, link: tuple[State, int] | None) -> bool:
        """Record a new state (stored under `stored`, its key); True when the run must stop because of it."""
        nonlocal stopped_by
        parents[stored] = link
        if properties:
            ids[stored] = len(ids)
        pending = violations.pending
        if pending and violations.record(state, [pending[k] for k in sm.violated(state, [invariants[i] for i in pending])]):
            if not search.keep_going:
                stopped_by = "violation"
                return True
        if limits.max_states is not None and len(parents) >= limits.max_states:
            stopped_by = "max-states"
            return True
        return False

    frontier: list[State] = []
    for init in model.initial_states():
        generated += 1
        stored = key(init)
        if stored not in parents:
            frontier.append(init)
            if discover(init, stored, None):
                break
    depth = 1 if frontier else 0

    while frontier and stopped_by is None:
        if limits.max_depth is not None and depth >= limits.max_depth:
            stopped_by = "max-depth"
            break
        if (stopped_by := limits.exhausted(started)) is not None:
            break
        level: list[State] = []
        for state in frontier:
            for iid, nxt in sm.successors(state):
                generated += 1
                stored = key(nxt)
                if properties and stored in parents:
                    edges.append((ids[key(state)], ids[stored], iid))
                if stored in parents:
                    continue
                level.append(nxt)
                stop = discover(nxt, stored, (state, iid))
                if properties:
                    edges.append((ids[key(state)], ids[stored], iid))
                if stop:
                    break
            if stopped_by is not None:
                break
        if level:
            depth += 1
        frontier = level
        if progress is not None:
            progress(Progress(depth, len(parents), generated, len(frontier), time.perf_counter() - started))

    result = finish(model, "scalar", started, violations, lambda s: parents.get(key(s)),
                    distinct=len(parents), generated=generated, depth=depth, stopped_by=stopped_by,
                    symmetry=search.symmetry)
    if properties:
        states = list(ids)
        arr = np.array(edges, dtype=np.int64).reshape(-1, 3)
        graph = Graph.of(len(states), np.arange(len(frozenset(map(key, model.initial_states())))),
                         arr[:, 0], arr[:, 1], arr[:, 2])

        def evaluate(prop: Property) -> tuple[np.ndarray, np.ndarray | None]:
            pq = [prop.parts(model.schema.view(st), SCALAR) for st in states]
            p = np.array([bool(a) for a, _ in pq], dtype=bool)
            return p, (np.array([bool(b) for _, b in pq], dtype=bool) if prop.form == "leads_to" else None)

        result.properties, result.engine_stats["liveness"] = liveness.check(
            model, properties, graph, evaluate, states.__getitem__, stopped_by is None)
    return result


def _itself(state: State) -> State:
    return state
