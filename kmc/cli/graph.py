"""`kmc check ... --dump-graph FILE.graphml|.dot` and `kmc graph FILE.graphml`: the state graph
of a small run, written for other tools, and the queries of kmc/graph_queries.py printed:
`--terminal` (states without successors), `--levels` (states per BFS level), `--path FROM TO`
(a shortest path between two states named by predicates).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import click

from kmc import exits, graph_queries as queries
from kmc.api import state_graph
from kmc.cli.output import check_writable, write_atomic
from kmc.errors import BadInput
from kmc.model.core import Invariant, Model

SUFFIXES = (".graphml", ".dot")


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


@click.command("graph")
@click.argument("graph_path", metavar="FILE.graphml", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--terminal", is_flag=True, help="list the states without successors (deadlocks)")
@click.option("--levels", is_flag=True, help="count the states per BFS level")
@click.option("--path", "path_query", nargs=2, metavar="FROM TO", default=None,
              help="a shortest path from a state matching FROM to one matching TO")
def graph(graph_path: Path, terminal: bool, levels: bool, path_query: tuple[str, str] | None) -> int:
    """Query a state graph written by kmc check --dump-graph."""
    g = queries.load(graph_path)
    click.echo(f"{g.graph.get('settings', graph_path)}: {g.number_of_nodes():,} states, {g.number_of_edges():,} steps")
    if g.graph.get("partial"):
        click.echo(f"a partial graph: the first {g.number_of_nodes():,} states in BFS order; states of its last "
                   "levels may show no successor")
    if not (terminal or levels or path_query):
        terminal = levels = True
    if levels:
        click.echo("states per level: " + ", ".join(f"{lv}: {n:,}" for lv, n in queries.per_level(g).items()))
    if terminal:
        ends = queries.terminal(g)
        click.echo(f"terminal states (no successor): {len(ends):,}" + (": " + " ".join(ends[:20]) if ends else ""))
        if len(ends) > 20:
            click.echo(f"  ... and {len(ends) - 20:,} more")
    if path_query:
        return _path(g, *path_query)
    return exits.OK


def _path(g: Any, src_text: str, dst_text: str) -> int:
    found = queries.shortest_path(g, src_text, dst_text)
    if isinstance(found, str):
        click.echo(found)
        return exits.NO_PATH
    click.echo(f"shortest path from {src_text!r} to {dst_text!r}: {len(found) - 1} steps")
    click.echo(f"  {found[0].state} (level {found[0].level})")
    for step in found[1:]:
        click.echo(f"  {step.state} (level {step.level}) by {step.action}")
        for line in step.changed:
            click.echo(f"      {line}")
    return exits.OK
