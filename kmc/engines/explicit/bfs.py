"""The reference engine: breadth-first search over concrete states, one at a time.

Level by level in a deterministic order (initial states, then instance order), so the first
state found violating an invariant lies at the smallest depth: its trace is a shortest
counterexample. States are dictionary keys, compared exactly: no fingerprint collisions.
With symmetry, a state is stored under its canonical form (kmc/engines/vector/symmetry.py) but the
search goes on from the concrete state found first, so traces stay concrete.
"""

from __future__ import annotations

import time
from typing import Sequence

from kmc.engines.result import CheckResult, Progress
from kmc.semantics.scalar import ScalarModel
from kmc.engines.search import Limits, ProgressHook, Violations, finish
from kmc.engines.vector import symmetry
from kmc.model.core import Invariant, Model, State


def check(
    model: Model,
    invariants: Sequence[Invariant],
    limits: Limits = Limits(),
    progress: ProgressHook | None = None,
) -> CheckResult:
    started = time.perf_counter()
    sm = ScalarModel(model)
    violations = Violations(invariants)
    parents: dict[State, tuple[State, int] | None] = {}  # by key: the parent's concrete state
    key = symmetry.for_model(model, invariants).canonical if limits.symmetry else _itself
    generated = 0
    stopped_by: str | None = None

    def discover(state: State, stored: State, link: tuple[State, int] | None) -> bool:
        """Record a new state (stored under `stored`, its key); True when the run must stop because of it."""
        nonlocal stopped_by
        parents[stored] = link
        pending = violations.pending
        if pending and violations.record(state, [pending[k] for k in sm.violated(state, [invariants[i] for i in pending])]):
            if not limits.keep_going:
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
                if stored in parents:
                    continue
                level.append(nxt)
                if discover(nxt, stored, (state, iid)):
                    break
            if stopped_by is not None:
                break
        if level:
            depth += 1
        frontier = level
        if progress is not None:
            progress(Progress(depth, len(parents), generated, len(frontier), time.perf_counter() - started))

    return finish(model, "scalar", started, violations, lambda s: parents.get(key(s)),
                  distinct=len(parents), generated=generated, depth=depth, stopped_by=stopped_by,
                  symmetry=limits.symmetry)


def _itself(state: State) -> State:
    return state
