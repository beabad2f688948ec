"""Bounded model checking with z3: is an invariant violated by a run of at most K steps?

One solver, unrolled one step at a time: the initial states are asserted once; then for
depth d = 0, 1, ..., K one query (under an assumption literal, so nothing is retracted and
z3 keeps what it learnt) asks whether any invariant still undecided fails at state d; only
when one does is each asked on its own. The first depth at which an invariant can fail is
the length of its shortest counterexample, the number BFS reports (BFS counts levels: a
trace of n steps ends at level n + 1). What holds at d is then asserted at d, a fact that
prunes the deeper queries (sound: z3 has just shown it follows from the unrolling).

The violating run is read from the z3 model as concrete states, the action of each step is
recovered by stepping the scalar model, and the trace is replayed before it is returned:
a trace that does not replay is an internal error (ReplayError), never output.

Availability reports count states, which BMC does not enumerate: they are left undecided.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import z3

from kmc.engines.result import CheckResult, Progress, Verdict, peak_memory_bytes
from kmc.engines.interface import Limits, ProgressHook, SearchOptions
from kmc.engines.symbolic.defaults import DEFAULT_STEPS
from kmc.engines.symbolic.encoding import SymbolicModel, new_solver
from kmc.errors import BadInput
from kmc.model.core import Invariant, Model
from kmc.traces.replay import replay

class FieldOutOfRange(Exception):
    """A reachable state has a field outside its declared range: a model bug."""


def check(
    model: Model,
    invariants: Sequence[Invariant],
    limits: Limits = Limits(),
    search: SearchOptions = SearchOptions(),
    progress: ProgressHook | None = None,
) -> CheckResult:
    """BMC to `limits.max_depth` BFS levels (K = max_depth - 1 steps), as a CheckResult."""
    if limits.max_states is not None:
        raise BadInput("the z3 engine does not enumerate states: --max-states is for the explicit engines")
    if search.symmetry:
        raise BadInput("the z3 engine does not reduce by symmetry: --symmetry is for the explicit engines")
    steps = DEFAULT_STEPS if limits.max_depth is None else limits.max_depth - 1
    started = time.perf_counter()
    bmc = Unrolling(model, invariants)
    verdicts: dict[str, Verdict] = {inv.name: Verdict(None, None, inv.report) for inv in invariants}
    pending = [inv for inv in invariants if not inv.report]
    stopped_by = "max-depth"
    depth = 0
    for d in range(steps + 1):
        if d > 0 and (exhausted := limits.exhausted(started)) is not None:
            stopped_by = exhausted
            break
        depth = d
        if d > 0:
            bmc.extend()
        found = bmc.violations(pending)
        for inv, trace in found:
            replay(trace, inv)
            verdicts[inv.name] = Verdict(False, trace)
        pending = [inv for inv in pending if inv.name not in {i.name for i, _ in found}]
        if progress is not None:
            progress(Progress(d + 1, 0, 0, 0, time.perf_counter() - started, figures={"steps checked": d}))
        if found and (not search.keep_going or not pending):
            stopped_by = "violation"
            break
    return CheckResult(
        model=model.name,
        mode=model.mode,
        engine="z3",
        settings=dict(model.settings),
        distinct_states=0,
        generated_states=0,
        depth=depth + 1,  # in BFS levels, as the other engines count: the initial states are level 1
        seconds=time.perf_counter() - started,
        complete=False,
        stopped_by=stopped_by,
        invariants=verdicts,
        peak_memory_bytes=peak_memory_bytes(),
    )


class Unrolling:
    """Runs of the model from its initial states, one step longer at each `extend`."""

    def __init__(self, model: Model, invariants: Sequence[Invariant], timeout_ms: int | None = None):
        self.sm = SymbolicModel(model, invariants)
        self.solver = new_solver(timeout_ms)
        self.states = [self.sm.state("s0")]
        self.selectors: list[z3.BitVecRef] = []
        self.solver.add(self.sm.initial(self.states[0]))

    @property
    def depth(self) -> int:
        return len(self.states) - 1

    def extend(self) -> None:
        d = len(self.states)
        self.states.append(self.sm.state(f"s{d}"))
        self.selectors.append(self.sm.selector(f"sel{d}"))
        self.solver.add(self.sm.transition(self.states[d - 1], self.states[d], self.selectors[-1]))

    def _ask(self, name: str, violated: Any) -> z3.CheckSatResult:
        self.flag = z3.Bool(name)
        self.solver.add(z3.Implies(self.flag, violated))
        return self._check(self.flag)

    def _check(self, *assumptions: Any) -> z3.CheckSatResult:
        answer = self.solver.check(*assumptions)
        if answer == z3.unknown:
            raise TimeoutError(f"z3 answered unknown at depth {self.depth}: {self.solver.reason_unknown()}")
        return answer

    def _canonical_run(self) -> list[Any]:
        """The states of the violating run (the last `_ask` was sat) whose instance numbers,
        step by step, are the smallest possible: the trace depends on the model, not on the
        solver's internals (z3 may pick another run in another process or context)."""
        fixed: list[Any] = [self.flag]
        for sel in self.selectors:
            chosen = self.solver.model().eval(sel, model_completion=True).as_long()
            smaller = next((k for k in range(chosen) if self._check(*fixed, sel == k) == z3.sat), None)
            fixed.append(sel == (chosen if smaller is None else smaller))
            if smaller is None and self._check(*fixed) != z3.sat:  # the model is lost after unsat checks
                raise RuntimeError("z3: a satisfiable run is no longer satisfiable")
        return [self.sm.decode(self.solver.model(), x) for x in self.states]

    def violations(self, pending: Sequence[Invariant]) -> list[tuple[Invariant, Any]]:
        """The pending invariants violated at the last state, each with its trace; what holds
        there (the schema's ranges included) is then asserted there."""
        d, s, sm = self.depth, self.states[-1], self.sm
        props = [(inv, sm.holds(inv, s)) for inv in pending]
        in_range = sm.in_range(s)
        found: list[tuple[Invariant, Any]] = []
        if self._ask(f"anything fails at {d}", z3.Or([z3.Not(in_range), *[z3.Not(p) for _, p in props]])) == z3.sat:
            for inv, prop in props:
                if self._ask(f"{inv.name} fails at {d}", z3.Not(prop)) == z3.sat:
                    found.append((inv, sm.trace(self._canonical_run(), inv.name)))
            if self._ask(f"a field leaves its range at {d}", z3.Not(in_range)) == z3.sat:
                trace = sm.trace([sm.decode(self.solver.model(), x) for x in self.states], None)
                raise FieldOutOfRange(f"a run of {d} steps leaves a field outside its range: {trace.steps[-1].state}")
        failed = {inv.name for inv, _ in found}
        self.solver.add(in_range, *[p for inv, p in props if inv.name not in failed])
        return found
