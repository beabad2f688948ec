"""`kmc check ... --dump-graph FILE.graphml|.dot` and `kmc graph FILE.graphml`: the state graph
of a small run, written for other tools and queried here.

Queries: `--terminal` (states without successors: deadlocks, or the ends of a bounded run),
`--levels` (states per BFS level), `--path FROM TO` (a shortest path between two states
named by predicates). A predicate is `initial`, `terminal`, `violates` (any checked
invariant), `violates:NAME`, `FIELD=VALUE` (a described field equals VALUE) or
`FIELD~TEXT` (contains TEXT); join several with `&`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Callable, Sequence

import click

from kmc import exits
from kmc.api import state_graph
from kmc.cli.output import check_writable, write_atomic
from kmc.errors import BadInput
from kmc.model.core import Invariant, Model

SUFFIXES = (".graphml", ".dot")
_META = {"level", "initial", "violates"}


def check_path(path: Path) -> None:
    """Before the run: --dump-graph names a .graphml or .dot file that can be written."""
    if path.suffix not in SUFFIXES:
        raise BadInput(f"--dump-graph {path}: the file name must end in {' or '.join(SUFFIXES)}")
    check_writable(path, "--dump-graph")


def dump(path: Path, model: Model, invariants: Sequence[Invariant], *, max_states: int | None,
         max_depth: int | None) -> None:
    """Write the state graph of `model` to `path` (GraphML or DOT by suffix).
    A graph cut at its cap is written with a note on stderr: the first states in BFS order
    still show how the protocol starts, and `kmc graph` says the file is partial."""
    g = state_graph.explore(model, invariants, max_states=max_states, max_depth=max_depth)
    if path.suffix == ".dot":
        write_atomic(path, state_graph.to_dot(g), "--dump-graph")
    else:
        import networkx as nx

        write_atomic(path, "\n".join(nx.generate_graphml(g)) + "\n", "--dump-graph")
    if g.graph.get("partial"):
        click.echo(f"kmc: note: --dump-graph {path} holds a partial graph, the first {g.number_of_nodes():,} "
                   "states in BFS order (graphs are for small runs: bound the run with --max-states or smaller model "
                   "options)", err=True)


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
            fields = {k for _, d in g.nodes(data=True) for k in d} - _META
            if key not in fields:
                raise BadInput(f"predicate {text!r}: unknown field {key!r}; fields: {', '.join(sorted(fields))}")
            if op == "=":
                return lambda n: str(nodes[n].get(key, "-")) == value
            return lambda n: value in str(nodes[n].get(key, "-"))
    raise BadInput(f"predicate {text!r}: write initial, terminal, violates, violates:NAME, FIELD=VALUE or FIELD~TEXT")


def _load(path: Path) -> Any:
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


def _order(n: str) -> int:
    return int(n[1:]) if n[1:].isdigit() else 0


@click.command("graph")
@click.argument("graph_path", metavar="FILE.graphml", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--terminal", is_flag=True, help="list the states without successors (deadlocks)")
@click.option("--levels", is_flag=True, help="count the states per BFS level")
@click.option("--path", "path_query", nargs=2, metavar="FROM TO", default=None,
              help="a shortest path from a state matching FROM to one matching TO")
def graph(graph_path: Path, terminal: bool, levels: bool, path_query: tuple[str, str] | None) -> int:
    """Query a state graph written by kmc check --dump-graph."""
    g = _load(graph_path)
    click.echo(f"{g.graph.get('settings', graph_path)}: {g.number_of_nodes():,} states, {g.number_of_edges():,} steps")
    if g.graph.get("partial"):
        click.echo(f"a partial graph: the first {g.number_of_nodes():,} states in BFS order; states of its last "
                   "levels may show no successor")
    if not (terminal or levels or path_query):
        terminal = levels = True
    if levels:
        per = Counter(int(d["level"]) for _, d in g.nodes(data=True))
        click.echo("states per level: " + ", ".join(f"{lv}: {per[lv]:,}" for lv in sorted(per)))
    if terminal:
        ends = sorted((n for n in g.nodes if g.out_degree(n) == 0), key=_order)
        click.echo(f"terminal states (no successor): {len(ends):,}" + (": " + " ".join(ends[:20]) if ends else ""))
        if len(ends) > 20:
            click.echo(f"  ... and {len(ends) - 20:,} more")
    if path_query:
        return _path(g, *path_query)
    return exits.OK


def _path(g: Any, src_text: str, dst_text: str) -> int:
    import networkx as nx

    src_ok, dst_ok = predicate(src_text, g), predicate(dst_text, g)
    sources = [n for n in g.nodes if src_ok(n)]
    targets = {n for n in g.nodes if dst_ok(n)}
    if not sources or not targets:
        click.echo(f"no state matches {src_text if not sources else dst_text!r}")
        return exits.NO_PATH
    lengths, paths = nx.multi_source_dijkstra(g, set(sources), weight=None)
    reachable = [t for t in targets if t in paths]
    if not reachable:
        click.echo(f"no path from a state matching {src_text!r} to one matching {dst_text!r}")
        return exits.NO_PATH
    best = min(reachable, key=lambda t: (lengths[t], _order(t)))
    nodes = paths[best]
    click.echo(f"shortest path from {src_text!r} to {dst_text!r}: {len(nodes) - 1} steps")
    click.echo(f"  {nodes[0]} (level {g.nodes[nodes[0]]['level']})")
    for a, b in zip(nodes, nodes[1:]):
        action = min(d["action"] for d in g.get_edge_data(a, b).values())
        before, after = g.nodes[a], g.nodes[b]
        changed = [f"{k}: {before.get(k, '-')} -> {v}" for k, v in after.items()
                   if k not in _META and before.get(k, "-") != v]
        click.echo(f"  {b} (level {after['level']}) by {action}")
        for line in changed:
            click.echo(f"      {line}")
    return exits.OK
