"""A lasso counterexample to a liveness property, checked and explained through the scalar
interpretation: its cycle's fairness facts (per condition, the cycle's states where it is
enabled and its steps that take it), and whether the lasso is fair and violates the property."""

from __future__ import annotations

from dataclasses import dataclass

from kmc.errors import ReplayError
from kmc.model.temporal import Property
from kmc.semantics.scalar import SCALAR, ScalarModel
from kmc.traces.trace import Trace


@dataclass(frozen=True)
class Fact:
    """One fairness condition on the cycle: the cycle steps (trace indices) whose state
    enables it, and the cycle steps taking it."""

    label: str
    strong: bool
    enabled: list[int]
    taken: list[int]
    cycle_states: int

    @property
    def met(self) -> bool:
        if self.taken:
            return True
        return not self.enabled if self.strong else len(self.enabled) < self.cycle_states

    def __str__(self) -> str:
        where = "nowhere" if not self.enabled else (
            "in every state" if len(self.enabled) == self.cycle_states
            else "in the states of steps " + ", ".join(map(str, self.enabled)))
        took = "taken by steps " + ", ".join(map(str, self.taken)) if self.taken else "never taken"
        return f"{self.label}: enabled {where} of the cycle, {took}" + ("" if self.met else " (UNFAIR)")


def cycle_indices(trace: Trace) -> list[int]:
    """Trace indices of the cycle's states (the closing step's state is the loop's own)."""
    assert trace.loop is not None
    return list(range(trace.loop, len(trace.steps) - (0 if trace.stutters else 1)))


def facts(trace: Trace, prop: Property) -> list[Fact]:
    model = trace.model
    sm = ScalarModel(model)
    cycle = cycle_indices(trace)
    taken_steps = [] if trace.stutters else list(range(trace.loop + 1, len(trace.steps)))  # type: ignore[operator]
    out = []
    for fair in prop.fairness:
        for label, ids in fair.conditions(model.instances()):
            members = set(ids)
            enabled = [k for k in cycle
                       if any(iid in members and nxt != trace.steps[k].state
                              for iid, nxt in sm.successors(trace.steps[k].state))]
            taken = [k for k in taken_steps if trace.steps[k].instance.id in members]  # type: ignore[union-attr]
            out.append(Fact(label, fair.kind == "strong", enabled, taken, len(cycle)))
    return out


def check(trace: Trace, prop: Property) -> None:
    """Raise ReplayError unless the lasso closes, is fair and violates the property (its
    steps are replayed by kmc/traces/replay.py)."""
    if trace.loop is None or not 0 <= trace.loop < len(trace.steps):
        raise ReplayError(f"{prop.name}: a lasso needs a loop index inside the trace")
    if not trace.stutters and trace.steps[-1].state != trace.steps[trace.loop].state:
        raise ReplayError(f"{prop.name}: the closing step does not return to step {trace.loop}")
    unfair = [f.label for f in facts(trace, prop) if not f.met]
    if unfair:
        raise ReplayError(f"{prop.name}: the lasso's cycle is not fair for {', '.join(unfair)}")
    schema = trace.model.schema
    pq = [prop.parts(schema.view(step.state), SCALAR) for step in trace.steps]
    p = [bool(a) for a, _ in pq]
    q = [bool(b) for _, b in pq]
    cycle = cycle_indices(trace)
    if prop.form == "eventually":
        bad = not any(p)
    elif prop.form == "always_eventually":
        bad = not any(p[k] for k in cycle)
    elif prop.form == "eventually_always":
        bad = not all(p[k] for k in cycle)
    else:  # leads_to: some P-state whose every successor on the lasso (itself included) lacks Q
        bad = not any(q[k] for k in cycle) and any(
            p[i] and not any(q[i:]) for i in range(len(p)))
    if not bad:
        raise ReplayError(f"{prop.name}: the lasso satisfies {prop.formula}")


def notes(found: list[Fact]) -> list[str]:
    """The fairness facts to print: each condition enabled or taken on the cycle, then how many
    are enabled nowhere on it (those constrain nothing)."""
    shown = [str(f) for f in found if f.enabled or f.taken]
    idle = len(found) - len(shown)
    if idle:
        other = "other " if shown else "fairness "
        shown.append(f"{idle} {other}condition{'s' if idle > 1 else ''}: enabled nowhere on the cycle")
    return shown or ["no fairness conditions"]
