"""Depth-first search over concrete states, for deep and narrow models.

Uses an explicit stack (no recursion limit) and the same exact visited set as bfs. A
counterexample is the discovery path, which need not be shortest; the reported depth is the
longest discovery path, counted in states as TLC counts levels.
"""

from __future__ import annotations

import time
from typing import Iterator, Sequence

from kmc.engines.result import CheckResult, Progress
from kmc.semantics.scalar import ScalarModel
from kmc.engines.interface import Limits, ProgressHook, SearchOptions
from kmc.engines.search import Violations, finish
from kmc.engines import symmetry
from kmc.model.core import Invariant, Model, State

_PROGRESS_EVERY = 50_000
_LIMITS_EVERY = 4_096  # states between two looks at the time and memory limits


def check(
    model: Model,
    invariants: Sequence[Invariant],
    limits: Limits = Limits(),
    search: SearchOptions = SearchOptions(),
    progress: ProgressHook | None = None,
) -> CheckResult:
    started = time.perf_counter()
    sm = ScalarModel(model)
    violations = Violations(invariants)
    parents: dict[State, tuple[State, int] | None] = {}  # by key: the parent's concrete state
    key = symmetry.for_model(model, invariants).canonical if search.symmetry else (lambda s: s)
    generated = 0
    deepest = 0
    stopped_by: str | None = None
    cut = False

    def discover(state: State, stored: State, link: tuple[State, int] | None) -> bool:
        nonlocal stopped_by
        parents[stored] = link
        pending = violations.pending
        bad = sm.violated(state, [invariants[i] for i in pending]) if pending else []
        if violations.record(state, [pending[k] for k in bad]) and not search.keep_going:
            stopped_by = "violation"
        elif limits.max_states is not None and len(parents) >= limits.max_states:
            stopped_by = "max-states"
        return stopped_by is not None

    stack: list[tuple[State, Iterator[tuple[int, State]]]] = []
    for init in model.initial_states():
        generated += 1
        stored = key(init)
        if stored in parents:
            continue
        if discover(init, stored, None):
            break
        stack.append((init, sm.successors(init)))
        deepest = max(deepest, 1)
        while stack and stopped_by is None:
            state, successors = stack[-1]
            step = next(successors, None)
            if step is None:
                stack.pop()
                continue
            iid, nxt = step
            generated += 1
            stored = key(nxt)
            if stored in parents:
                continue
            if limits.max_depth is not None and len(stack) >= limits.max_depth:
                cut = True  # beyond the depth bound: not explored, so the run is incomplete
                continue
            if discover(nxt, stored, (state, iid)):
                break
            if len(parents) % _LIMITS_EVERY == 0 and (exhausted := limits.exhausted(started)) is not None:
                stopped_by = exhausted
                break
            stack.append((nxt, sm.successors(nxt)))
            deepest = max(deepest, len(stack))
            if progress is not None and len(parents) % _PROGRESS_EVERY == 0:
                progress(Progress(deepest, len(parents), generated, len(stack), time.perf_counter() - started))
        if stopped_by is not None:
            break

    if stopped_by is None and cut:
        stopped_by = "max-depth"
    return finish(model, "dfs", started, violations, lambda s: parents.get(key(s)),
                  distinct=len(parents), generated=generated, depth=deepest, stopped_by=stopped_by,
                  symmetry=search.symmetry)
