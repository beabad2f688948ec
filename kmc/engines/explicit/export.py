"""The reachable state graph of a small run, as a networkx graph: for looking at, not for
checking (the engines never build it). Breadth-first from the initial states in instance
order, so node numbers and levels are those of the reference engine.

Nodes are `s0, s1, ...` with `level` (the initial states are level 1, as TLC counts),
`initial`, `violates` (the names of the checked invariants that fail there, comma-separated)
and every field of `Model.describe`; edges carry the `action` label. Past `max_states` (by
default DEFAULT_CAP) no state is added: the graph is the first states in BFS order, the edges
between them, and the graph attribute `partial`. networkx is imported only here, and only
when a graph is asked for.
"""

from __future__ import annotations

from typing import Any, Sequence

from kmc.semantics.scalar import ScalarModel
from kmc.model.core import Invariant, Model, State

DEFAULT_CAP = 200_000  # states: beyond that a drawing or a GraphML file is of no use to a person


def explore(model: Model, invariants: Sequence[Invariant], *, max_states: int | None = None,
            max_depth: int | None = None) -> Any:
    import networkx as nx

    cap = max_states or DEFAULT_CAP
    sm = ScalarModel(model)
    g = nx.MultiDiGraph(model=model.name, settings=model.title())
    ids: dict[State, str] = {}

    def add(state: State, level: int, initial: bool) -> str | None:
        if state in ids:
            return ids[state]
        if len(ids) >= cap:
            g.graph["partial"] = True  # the edges into states past the cap are left out
            return None
        node = f"s{len(ids)}"
        ids[state] = node
        bad = [invariants[k].name for k in sm.violated(state, list(invariants))]
        g.add_node(node, level=level, initial=initial, violates=",".join(bad), **model.describe(state))
        return node

    frontier = [s for s in model.initial_states() if add(s, 1, True) is not None]
    level = 1
    while frontier and (max_depth is None or level < max_depth):
        level += 1
        nxt: list[State] = []
        for state in frontier:
            for iid, succ in sm.successors(state):
                known = succ in ids
                node = add(succ, level, False)
                if node is None:
                    continue
                g.add_edge(ids[state], node, action=sm.instances[iid].label)
                if not known:
                    nxt.append(succ)
        frontier = nxt
    return g


def to_dot(g: Any) -> str:
    """Graphviz DOT: a node per state (its level and the invariants it violates), an edge per step."""

    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = [f"digraph {q(g.graph.get('model', 'kmc'))} {{", f"  label={q(g.graph.get('settings', ''))};",
             '  node [shape=box, fontname="monospace", fontsize=9];', '  edge [fontname="monospace", fontsize=8];']
    for node, data in g.nodes(data=True):
        label = f"{node} (level {data['level']})" + (f"\nviolates {data['violates']}" if data["violates"] else "")
        style = ", color=red, fontcolor=red" if data["violates"] else (", penwidth=2" if data["initial"] else "")
        lines.append(f"  {node} [label={q(label)}{style}];")
    for a, b, data in g.edges(data=True):
        lines.append(f"  {a} -> {b} [label={q(data['action'])}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
