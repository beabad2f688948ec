"""Queries on a state graph written by `kmc check --dump-graph FILE.graphml` (the library behind
`kmc graph`): reading it back, states per level, terminal states, and a shortest path between
two states named by predicates.

A predicate is `initial`, `terminal`, `violates` (any checked invariant), `violates:NAME`,
`FIELD=VALUE` (a described field equals VALUE) or `FIELD~TEXT` (contains TEXT); join several
with `&`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from kmc.errors import BadInput

META = {"level", "initial", "violates"}  # node attributes that are not the state's fields


def load(path: Path) -> Any:
    """The GraphML state graph at `path` (a networkx MultiDiGraph); BadInput for anything else."""
    import networkx as nx

    if path.suffix != ".graphml":
        raise BadInput(f"{path}: kmc graph reads GraphML (.graphml) files; DOT files are for drawing")
    try:
        g = nx.read_graphml(str(path), force_multigraph=True)
    except FileNotFoundError:
        raise BadInput(f"{path}: no such graph file")
    except Exception as e:  # a malformed file: networkx raises several kinds
        raise BadInput(f"{path}: not a GraphML state graph: {e}")
    for n, d in g.nodes(data=True):
        if not isinstance(d.get("level"), int) or isinstance(d.get("level"), bool):
            raise BadInput(f"{path}: not a state graph written by kmc check --dump-graph: state {n!r} has no "
                           "integer 'level'")
    for a, b, d in g.edges(data=True):
        if not isinstance(d.get("action"), str):
            raise BadInput(f"{path}: not a state graph written by kmc check --dump-graph: the step from {a!r} to "
                           f"{b!r} has no 'action'")
    return g


def per_level(g: Any) -> dict[int, int]:
    """States per BFS level, in level order."""
    per = Counter(int(d["level"]) for _, d in g.nodes(data=True))
    return {lv: per[lv] for lv in sorted(per)}


def terminal(g: Any) -> list[str]:
    """The states without successors (deadlocks, or the ends of a bounded run), in discovery order."""
    return sorted((n for n in g.nodes if g.out_degree(n) == 0), key=order)


def order(n: str) -> int:
    """A node's discovery number (`s12` is 12)."""
    return int(n[1:]) if n[1:].isdigit() else 0


def predicate(text: str, g: Any) -> Callable[[str], bool]:
    """A node predicate from its text (see the module docstring)."""
    parts = [p.strip() for p in text.split("&") if p.strip()]
    if not parts:
        raise BadInput(f"empty predicate {text!r}")
    tests = [_one(p, g) for p in parts]
    return lambda n: all(t(n) for t in tests)


def _one(text: str, g: Any) -> Callable[[str], bool]:
    nodes = g.nodes
    if text == "initial":
        return lambda n: bool(nodes[n]["initial"])
    if text == "terminal":
        return lambda n: g.out_degree(n) == 0
    if text == "violates":
        return lambda n: bool(nodes[n]["violates"])
    if text.startswith("violates:"):
        name = text.split(":", 1)[1]
        return lambda n: name in str(nodes[n]["violates"]).split(",")
    for op in ("=", "~"):
        if op in text:
            key, value = (x.strip() for x in text.split(op, 1))
            fields = {k for _, d in g.nodes(data=True) for k in d} - META
            if key not in fields:
                raise BadInput(f"predicate {text!r}: unknown field {key!r}; fields: {', '.join(sorted(fields))}")
            if op == "=":
                return lambda n: str(nodes[n].get(key, "-")) == value
            return lambda n: value in str(nodes[n].get(key, "-"))
    raise BadInput(f"predicate {text!r}: write initial, terminal, violates, violates:NAME, FIELD=VALUE or FIELD~TEXT")


@dataclass
class Step:
    state: str
    level: int
    action: str | None  # None for the first state
    changed: list[str]  # "field: before -> after"


def shortest_path(g: Any, src_text: str, dst_text: str) -> list[Step] | str:
    """The shortest path from a state matching `src_text` to one matching `dst_text` (ties broken
    by discovery order), or why there is none."""
    import networkx as nx

    src_ok, dst_ok = predicate(src_text, g), predicate(dst_text, g)
    sources = [n for n in g.nodes if src_ok(n)]
    targets = {n for n in g.nodes if dst_ok(n)}
    if not sources or not targets:
        return f"no state matches {src_text if not sources else dst_text!r}"
    lengths, paths = nx.multi_source_dijkstra(g, set(sources), weight=None)
    reachable = [t for t in targets if t in paths]
    if not reachable:
        return f"no path from a state matching {src_text!r} to one matching {dst_text!r}"
    nodes = paths[min(reachable, key=lambda t: (lengths[t], order(t)))]
    steps = [Step(nodes[0], g.nodes[nodes[0]]["level"], None, [])]
    for a, b in zip(nodes, nodes[1:]):
        before, after = g.nodes[a], g.nodes[b]
        changed = [f"{k}: {before.get(k, '-')} -> {v}" for k, v in after.items()
                   if k not in META and before.get(k, "-") != v]
        steps.append(Step(b, after["level"], min(d["action"] for d in g.get_edge_data(a, b).values()), changed))
    return steps
