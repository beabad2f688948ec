"""k-induction with z3: prove that an invariant holds in every reachable state, at any depth.

The property proved is Q = the invariant ∧ the lemmas ∧ every field within its range (the
schema's ranges are an implicit lemma: induction starts from arbitrary states, and only
in-range ones are states of the model). For k = 1, 2, ..., K:

- base case: no run of fewer than k steps from an initial state violates Q (incremental
  BMC, kmc/engines/symbolic/bmc.py). A violation is a real counterexample: `counterexample`.
- inductive step: no path of k + 1 distinct in-range states s0 .. sk, where s0 .. s(k-1)
  satisfy Q and each is a step from the one before, has sk violating Q. Unsatisfiable:
  `proved` (every reachable state satisfies Q, hence the invariant). Satisfiable at K: the
  path is a counterexample to induction: `not inductive` (the states need not be
  reachable; a lemma that excludes them may make the invariant provable).

Paths in the inductive step are simple (pairwise distinct states): sound, since a shortest
run to a violation never repeats a state, and it makes larger k strictly stronger.
A solver timeout at any point gives `unknown`. Lemmas are proved together with the
invariant, never assumed: a false lemma shows up as a counterexample.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import z3

from kmc.engines.symbolic.bmc import FieldOutOfRange, Unrolling
from kmc.engines.symbolic.encoding import SymbolicModel, new_solver
from kmc.engines.result import COUNTEREXAMPLE, NOT_INDUCTIVE, PROVED, RANGES, UNKNOWN, Proof
from kmc.model.core import Instance, Invariant, Model, State
from kmc.traces.replay import replay
from kmc.traces.trace import Trace


def prove(
    model: Model,
    invariant: Invariant,
    lemmas: Sequence[Invariant] = (),
    *,
    k: int = 1,
    timeout: float = 60.0,
) -> Proof:
    """Try k = 1 .. `k`; `timeout` seconds in all, shared by every solver call."""
    started = time.perf_counter()
    lemmas = [lem for lem in lemmas if lem.name != invariant.name]
    conjuncts = [invariant, *lemmas]
    names = [lem.name for lem in lemmas]

    def remaining_ms() -> int:
        return max(1, int((timeout - (time.perf_counter() - started)) * 1000))

    def result(verdict: str, at: int, **kw: Any) -> Proof:
        return Proof(invariant.name, names, verdict, at, time.perf_counter() - started, **kw)

    sm = SymbolicModel(model, conjuncts)
    base = Unrolling(model, conjuncts)
    cti: list[tuple[Instance | None, State]] = []
    failed: str | None = None
    for j in range(1, k + 1):
        try:
            # base case: states at depth j - 1 (depths below were checked at earlier j)
            if j > 1:
                base.extend()
            base.solver.set("timeout", remaining_ms())
            found = base.violations(conjuncts)
            if found:
                bad, trace = found[0]
                replay(trace, bad)
                return result(COUNTEREXAMPLE, j, trace=trace, failed=bad.name)
            verdict, failed, cti = _step(sm, conjuncts, j, remaining_ms())
        except TimeoutError as e:
            return result(UNKNOWN, j, reason=str(e))
        except FieldOutOfRange as e:  # a real run takes a field out of its range
            return result(COUNTEREXAMPLE, j, failed=RANGES, reason=str(e))
        if verdict == PROVED:
            return result(PROVED, j)
    return result(NOT_INDUCTIVE, k, failed=failed, cti=cti)


def _step(
    sm: SymbolicModel, conjuncts: Sequence[Invariant], k: int, timeout_ms: int
) -> tuple[str, str | None, list[tuple[Instance | None, State]]]:
    """The inductive step for k: (proved, None, []) or (not inductive, failed conjunct, CTI)."""
    solver = new_solver(timeout_ms)
    states = [sm.state(f"i{j}") for j in range(k + 1)]
    for j, s in enumerate(states):
        solver.add(sm.in_range(s) if j < k else z3.BoolVal(True))
        if j < k:
            solver.add(*[sm.holds(c, s) for c in conjuncts])
        if j > 0:
            solver.add(sm.transition(states[j - 1], s, sm.selector(f"isel{j}")))
        solver.add(*[sm.distinct(states[i], s) for i in range(j)])
    last = states[-1]
    props = [(c.name, sm.holds(c, last)) for c in conjuncts] + [(RANGES, sm.in_range(last))]
    answer = solver.check(z3.Or([z3.Not(p) for _, p in props]))
    if answer == z3.unknown:
        raise TimeoutError(f"z3 answered unknown in the inductive step for k={k}: {solver.reason_unknown()}")
    if answer == z3.unsat:
        return PROVED, None, []
    zm = solver.model()
    concrete = [sm.decode(zm, s) for s in states]
    failed = next(name for name, p in props if z3.is_false(zm.eval(p, model_completion=True)))
    path = sm.path(concrete)  # the actions, recovered by the scalar model (ReplayError if none)
    return NOT_INDUCTIVE, failed, [(step.instance, step.state) for step in path]
