"""The vector and compiled engines' invariants, evaluated on a level's states when the level is
expanded.

A chunk of a level is unpacked to be expanded anyway: the worker that expands it evaluates the
invariants on those rows too, so no new state is unpacked a second time for them. Levels are
expanded in order, chunk after chunk, so the first violating state met is the scalar engine's
first by discovery: verdicts and traces are unchanged. What changes is when a state is checked,
one level after it was found. Two things follow:

- at a stop on a violation, the counts are the scalar engine's at that state, worked out from
  the states before it and the steps generated up to the one that found it (`Expansion`: the
  generated count when its parent's level began to be expanded, and each parent's steps);
- a run that stops for another reason (a limit, `--max-depth`, a handoff to Spark) checks the
  states it found and did not expand before it reports (`Search._check_unexpanded`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from kmc.engines.search import Violations
from kmc.engines.vector.levelstep import Candidates
from kmc.model.core import Invariant, Model, State
from kmc.semantics.scalar import ScalarModel


@dataclass
class Expansion:
    """A level's expansion, as the counts at a violation in the next level need it: the
    generated count when it began, and each of its states' steps (successors and stutters)."""

    generated_before: int
    steps: np.ndarray  # per state of the level, in order

    def generated_through(self, parent: int, own: int) -> int:
        """The steps generated up to the parent's `own`-th step (the states before it took all theirs)."""
        return self.generated_before + int(self.steps[:parent].sum(dtype=np.int64)) + own


def steps_per_state(candidates: Candidates | None, states: int, instances: int) -> np.ndarray:
    """Each state's steps in a chunk's expansion: its candidate successors and its stutters."""
    dtype = np.min_scalar_type(instances)
    if candidates is None:
        return np.zeros(states, dtype=dtype)
    steps = _per_parent(candidates.rank, states, instances, candidates.by_parent)
    if len(candidates.stutter):
        steps += _per_parent(candidates.stutter, states, instances, candidates.by_parent)
    return steps.astype(dtype)


def _per_parent(rank: np.ndarray, states: int, instances: int, by_parent: bool) -> np.ndarray:
    """How many of `rank` each parent has (rank = parent x instances + instance id). Given a
    parent at a time (the compiled kernels' order), a binary search per parent finds where each
    one's ranks begin: "rank < p x instances" holds for a prefix even where a parent's own
    ranks are not ascending. 2PC's chunks are 12 successors a state: a division and a count
    of each took 9 % of the workers' time."""
    if not by_parent:
        return np.bincount(rank // instances, minlength=states)
    starts = np.searchsorted(rank, np.arange(states + 1, dtype=rank.dtype) * instances)
    return np.diff(starts)


def own_steps(model: Model, initial: State, path: Sequence[int]) -> int:
    """The steps its parent generates up to the last one of `path` (a path of instance ids from
    `initial`), that one included: the instances enabled there, in instance order."""
    sm = ScalarModel(model)
    parent = initial
    for iid in path[:-1]:
        nxt = sm.step(parent, sm.instances[iid])
        assert nxt is not None, "a recorded path replays"
        parent = nxt
    return sum(1 for iid, _ in sm.successors(parent) if iid <= path[-1])


class Verdicts:
    """A run's violations, as the chunks of its levels are checked in order."""

    def __init__(self, invariants: Sequence[Invariant], keep_going: bool):
        self.invariants = list(invariants)
        self.violations = Violations(invariants)
        self.found_at: dict[State, tuple[int, int]] = {}  # violating state -> (level, index): its path's end
        self.keep_going = keep_going

    def record(self, bad: dict[int, np.ndarray], rows: np.ndarray, level: int, offset: int) -> int | None:
        """Record the violations of a chunk of level `level` that starts at `offset` (`bad`: per
        invariant evaluated, the chunk's violating states, ascending; `rows`: its states). The
        position in the chunk of the state the run stops at (the first to break a safety invariant,
        without --continue), or None."""
        pending = self.violations.pending
        safety = [int(b[0]) for k, b in bad.items() if b.size and k in pending and not self.invariants[k].report]
        stop = min(safety) if safety and not self.keep_going else None
        cut = len(rows) if stop is None else stop + 1
        for k, b in bad.items():
            b = b[: np.searchsorted(b, cut)]
            if b.size and k in pending:
                state = tuple(int(v) for v in rows[int(b[0])])
                if k not in self.violations.first:
                    self.found_at[state] = (level, offset + int(b[0]))
                self.violations.record_many(k, state, b.size)
        return stop
