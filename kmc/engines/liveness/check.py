"""Checking liveness properties on an explored graph, for the explicit engines: per property
its fairness conditions, its predicates on every state, a violating lasso or a verdict that
it holds; each lasso becomes a Trace with `loop` set (replayed by kmc/api.py)."""

from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np

from kmc.engines.liveness.fair import Conditions
from kmc.engines.liveness.graph import Graph
from kmc.engines.liveness.lasso import Lasso, find
from kmc.engines.result import Verdict, peak_memory_bytes
from kmc.model.core import Model, State
from kmc.model.temporal import Property
from kmc.traces.trace import Step, Trace

# P (and Q) of a property on every state of the graph, as bool arrays
Evaluate = Callable[[Property], tuple[np.ndarray, "np.ndarray | None"]]


def conditions(model: Model, prop: Property) -> list[tuple[str, bool, list[int]]]:
    """(label, strong, instance ids) of every fairness condition of a property."""
    out = []
    for fair in prop.fairness:
        for label, ids in fair.conditions(model.instances()):
            out.append((label, fair.kind == "strong", ids))
    return out


def check(model: Model, properties: Sequence[Property], graph: Graph | None, evaluate: Evaluate | None,
          state_of: Callable[[int], State] | None, complete: bool) -> tuple[dict[str, Verdict], dict[str, float]]:
    """A verdict per property (None when the exploration was not complete: a cycle may lie
    beyond it), and figures: seconds and peak memory of the step."""
    started = time.perf_counter()
    verdicts: dict[str, Verdict] = {}
    made: dict[tuple[tuple[str, bool], ...], Conditions] = {}  # properties often share their fairness
    for prop in properties:
        if not complete or graph is None or evaluate is None or state_of is None:
            verdicts[prop.name] = Verdict(None)
            continue
        listed = conditions(model, prop)
        key = tuple((label, strong) for label, strong, _ in listed)
        if key not in made:
            made[key] = Conditions.of(graph, listed, len(model.instances()))
        conds = made[key]
        p, q = evaluate(prop)
        lasso = find(graph, prop.form, p, q, conds)
        verdicts[prop.name] = Verdict(True) if lasso is None else Verdict(False, trace(model, graph, lasso, state_of,
                                                                                         prop.name))
    figures = {"seconds": round(time.perf_counter() - started, 3), "edges": 0 if graph is None else graph.edges,
               "graph_bytes": 0 if graph is None else graph.nbytes, "peak_memory_bytes": peak_memory_bytes()}
    return verdicts, figures


def trace(model: Model, graph: Graph, lasso: Lasso, state_of: Callable[[int], State], name: str) -> Trace:
    """The lasso as a trace: the prefix, then the cycle with its closing step."""
    instances = model.instances()
    steps = [Step(None, state_of(lasso.initial))]
    for e in lasso.prefix + lasso.cycle:
        steps.append(Step(instances[int(graph.iid[e])], state_of(int(graph.dst[e]))))
    return Trace(model, steps, name, loop=len(lasso.prefix))
