"""Bookkeeping shared by the explicit-state engines: violations, the final result."""

from __future__ import annotations

import time
from typing import Sequence

from kmc.engines.result import CheckResult, Verdict, peak_memory_bytes
from kmc.model.core import Invariant, Model, State
from kmc.traces.trace import ParentOf, rebuild


class Violations:
    """The first state found violating each invariant (the shortest one, under BFS order),
    and for reports the number of states where they fail."""

    def __init__(self, invariants: Sequence[Invariant]):
        self.invariants = list(invariants)
        self.first: dict[int, State] = {}
        self.counts: dict[int, int] = {k: 0 for k, inv in enumerate(invariants) if inv.report}

    @property
    def pending(self) -> list[int]:
        """Invariants still to evaluate on new states: safety ones not yet violated, and every report."""
        return [k for k in range(len(self.invariants)) if k not in self.first or k in self.counts]

    def record(self, state: State, indices: Sequence[int]) -> bool:
        """Remember `state` for the invariants it violates first; True if a safety invariant
        was newly violated."""
        new = False
        for k in indices:
            if k in self.counts:
                self.counts[k] += 1
            if k not in self.first:
                self.first[k] = state
                new = new or k not in self.counts
        return new

    def record_many(self, k: int, first: State, count: int) -> None:
        """Invariant k fails in `count` new states, `first` being the first found (engines
        that check a whole batch at once)."""
        if k in self.counts:
            self.counts[k] += count
        self.first.setdefault(k, first)


def finish(
    model: Model,
    engine: str,
    started: float,
    violations: Violations,
    parent_of: ParentOf,
    *,
    distinct: int,
    generated: int,
    depth: int,
    stopped_by: str | None,
    symmetry: bool = False,
    bytes_per_state: float | None = None,
) -> CheckResult:
    complete = stopped_by is None
    verdicts: dict[str, Verdict] = {}
    for k, inv in enumerate(violations.invariants):
        count = violations.counts.get(k)
        if k in violations.first:
            trace = rebuild(model, violations.first[k], parent_of, inv.name)
            verdicts[inv.name] = Verdict(False, trace, inv.report, count)
        else:
            verdicts[inv.name] = Verdict(True if complete else None, None, inv.report, count)
    return CheckResult(
        model=model.name,
        mode=model.mode,
        engine=engine,
        settings=dict(model.settings),
        distinct_states=distinct,
        generated_states=generated,
        depth=depth,
        seconds=time.perf_counter() - started,
        complete=complete,
        stopped_by=stopped_by,
        invariants=verdicts,
        peak_memory_bytes=peak_memory_bytes(),
        symmetry=symmetry,
        bytes_per_state=bytes_per_state,
    )
