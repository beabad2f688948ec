"""Finding a lasso that violates a property: a shortest prefix (breadth-first) from an initial
state to a fair component, then a cycle inside it that meets every fairness condition.

What a violation is, per form (M: the states the behaviour must stay in for ever, E: where
it may enter M, A: what the cycle must visit):
- <>P:    M = not P, entered at an initial state (the prefix stays in M too);
- []<>P:  M = not P, entered anywhere;
- <>[]P:  M = every state, A = not P;
- P ~> Q: M = not Q, entered at a state with P and not Q (the product with the one-bit
  automaton "an obligation is pending": TLC's tableau for this form).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kmc.engines.liveness.fair import Conditions, fair_components
from kmc.engines.liveness.graph import Graph, bfs, path_to


@dataclass
class Lasso:
    """Edge ids: the prefix from an initial state to the cycle's first state, then the cycle
    back to it (empty: the behaviour stutters there for ever)."""

    initial: int
    prefix: list[int]
    cycle: list[int]


def regions(form: str, p: np.ndarray, q: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """(M, E, A) of a property on the states (E None: anywhere in M; A None: no acceptance set)."""
    if form == "eventually":
        return ~p, None, None
    if form == "always_eventually":
        return ~p, None, None
    if form == "eventually_always":
        return np.ones_like(p), None, ~p
    if form == "leads_to":
        assert q is not None
        return ~q, p & ~q, None
    raise ValueError(f"unknown form {form!r}")


def find(graph: Graph, form: str, p: np.ndarray, q: np.ndarray | None, conds: Conditions) -> Lasso | None:
    """A violating lasso with a shortest prefix, or None when the property holds on the graph."""
    stay, enter, accept = regions(form, p, q)
    fair = fair_components(graph, stay, conds, accept)
    if not (fair >= 0).any():
        return None
    if form == "eventually":  # the prefix, too, lies in M
        dist, parent = bfs(graph, stay, graph.initial)
        root_dist, root_parent = dist, np.full(graph.n, -1, dtype=np.int64)
    else:
        root_dist, root_parent = graph.from_initial()
        sources = np.flatnonzero(stay if enter is None else enter)
        dist, parent = bfs(graph, stay, sources, root_dist[sources])
    reach = np.flatnonzero((fair >= 0) & (dist >= 0))
    if not len(reach):
        return None
    c0 = int(reach[np.argmin(dist[reach])])
    inner = path_to(graph, parent, c0)
    entry = int(graph.src[inner[0]]) if inner else c0
    prefix = path_to(graph, root_parent, entry) + inner
    initial = int(graph.src[prefix[0]]) if prefix else c0
    return Lasso(initial, prefix, cycle(graph, fair == fair[c0], c0, conds, accept))


def cycle(graph: Graph, comp: np.ndarray, c0: int, conds: Conditions, accept: np.ndarray | None) -> list[int]:
    """A cycle from c0 inside the fair component `comp` meeting every condition: for each
    one, a step taking it, or (WF) a visit to a state where it is disabled; and a visit to
    the acceptance set. Empty when c0 may stutter for ever."""
    internal = comp[graph.src] & comp[graph.dst]
    states = np.flatnonzero(comp)
    needs: list[tuple[str, np.ndarray]] = []  # ("state", mask) or ("edge", edge ids)
    for k in range(len(conds.labels)):
        on = conds.enabled[k, states]
        if not on.any():
            continue
        if not conds.strong[k] and not on.all():
            needs.append(("state", comp & ~conds.enabled[k]))
        else:
            needs.append(("edge", np.flatnonzero(internal & conds.takes[k])))
    if accept is not None:
        needs.append(("state", comp & accept))
    out: list[int] = []
    here = c0
    met = [False] * len(needs)

    def mark(state: int, edge: int | None) -> None:
        for k, (kind, target) in enumerate(needs):
            if kind == "state" and target[state]:
                met[k] = True
            elif kind == "edge" and edge is not None and edge in target_sets[k]:
                met[k] = True

    target_sets = [set(t.tolist()) if kind == "edge" else set() for kind, t in needs]
    mark(c0, None)
    while not all(met):  # the nearest unmet need next, crediting every need met on the way
        dist, parent = bfs(graph, comp, np.array([here]))
        best: tuple[int, int, int] | None = None  # (distance, need, goal state or edge)
        for k, (kind, target) in enumerate(needs):
            if met[k]:
                continue
            if kind == "state":
                reached = np.flatnonzero(target & (dist >= 0))
                goal = int(reached[np.argmin(dist[reached])])
                cand = (int(dist[goal]), k, goal)
            else:
                e = int(target[np.argmin(dist[graph.src[target]])])
                cand = (int(dist[graph.src[e]]) + 1, k, e)
            if best is None or cand < best:
                best = cand
        assert best is not None
        _, k, goal = best
        path = path_to(graph, parent, goal if needs[k][0] == "state" else int(graph.src[goal]))
        if needs[k][0] == "edge":
            path.append(goal)
        for e in path:
            mark(int(graph.dst[e]), e)
        out += path
        here = int(graph.dst[path[-1]]) if path else here
    if out and here != c0:
        back_dist, back_parent = bfs(graph, comp, np.array([here]))
        out += path_to(graph, back_parent, c0)
    return out
