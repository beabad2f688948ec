"""`kmc check MODEL`: explore a model's states and check its invariants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from kmc import registry
from kmc.engines import run as engines
from kmc.engines.search import Limits
from kmc.cli import graph
from kmc.cli.config import config_option
from kmc.cli.limits import limit_options
from kmc.cli.models import ModelGroup, apply_options
from kmc.cli.output import check_writable, summary, verdict_text, warn_never_enabled, write_traces
from kmc.engines.coverage import render as render_coverage
from kmc.cli.progress import run_with_progress
from kmc.cli.spark_options import spark_options, take
from kmc.model.core import Option
from kmc.errors import BadInput
from kmc.model.temporal import Property
from kmc.traces import lasso, text

EXIT_OK, EXIT_VIOLATION = 0, 12


def run_options(command: Any) -> Any:
    """Options shared by check and compare: engine and limits."""
    for deco in reversed(
        [
            click.option("--engine", type=click.Choice(list(engines.ENGINES)), default="vector", show_default=True,
                         help="exploration engine"),
            click.option("--max-states", type=click.IntRange(1, None), default=None,
                         help="stop after this many distinct states (the run is then incomplete)"),
            click.option("--max-depth", type=click.IntRange(1, None), default=None,
                         help="stop after this many BFS levels, the initial states being level 1"),
            *limit_options(),
            *spark_options(),
            click.option("--symmetry", is_flag=True,
                         help="count states equal up to renaming replicas once (sound when the model and "
                              "invariants treat replicas alike, as replication does)"),
            click.option("--json", "as_json", is_flag=True, help="print one JSON object for machines"),
            click.option("--quiet", "-q", is_flag=True, help="no progress on stderr"),
        ]
    ):
        command = deco(command)
    return command


def make_check(name: str, options: tuple[Option, ...]) -> click.Command:
    def callback(**kw: Any) -> int:
        return run_check(name, **kw)

    callback = apply_options(callback, options)
    callback = run_options(callback)
    callback = config_option(callback)
    for deco in reversed(
        [
            click.option("--invariant", "invariant_names", multiple=True, metavar="NAME",
                         help="check this invariant (repeatable; default: all of the model's)"),
            click.option("--no-invariants", is_flag=True, help="explore the complete state graph and only count"),
            click.option("--property", "property_names", multiple=True, metavar="NAME",
                         help="check this liveness property (repeatable; default: all of the model's, "
                              "with the vector and scalar engines)"),
            click.option("--no-properties", is_flag=True, help="check no liveness property (safety only)"),
            click.option("--continue", "keep_going", is_flag=True,
                         help="explore on after a violation: every invariant gets its own shortest trace"),
            click.option("--depth", type=click.IntRange(0, None), default=None, metavar="K",
                         help="with --engine z3: look for violations in runs of up to K steps (BFS levels "
                              "1..K+1: a trace of n steps is found at depth n); default 10"),
            click.option("--itf-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                         help="write each counterexample to DIR/<model>-<mode>-<invariant>.itf.json"),
            click.option("--dump-graph", type=click.Path(dir_okay=False, path_type=Path), default=None,
                         metavar="FILE", help="also write the state graph (small runs) to FILE.graphml or FILE.dot"),
            click.option("--coverage", is_flag=True,
                         help="per action family: enabled, fired, new states; per field: the values reached"),
        ]
    ):
        callback = deco(callback)
    cls = registry.model_class(name)
    return click.command(name, help=f"Check the {name} model: {cls.summary}.")(callback)


def run_check(
    name: str,
    *,
    invariant_names: tuple[str, ...],
    no_invariants: bool,
    property_names: tuple[str, ...] = (),
    no_properties: bool = False,
    keep_going: bool,
    itf_dir: Path | None,
    depth: int | None,
    engine: str,
    max_states: int | None,
    max_depth: int | None,
    symmetry: bool,
    as_json: bool,
    quiet: bool,
    time_limit: float | None = None,
    memory_limit: int | None = None,
    dump_graph: Path | None = None,
    coverage: bool = False,
    **settings: Any,
) -> int:
    if no_invariants and invariant_names:
        raise click.UsageError("--no-invariants and --invariant exclude each other")
    max_depth = _bmc_levels(engine, depth, max_depth, max_states, symmetry)
    if itf_dir is not None:
        check_writable(itf_dir, "--itf-dir", folder=True)
    if dump_graph is not None:
        graph.check_path(dump_graph)
    spark = take(engine, settings)
    model, invariants = registry.build(name, **settings)
    checked = [] if no_invariants else registry.select(invariants, list(invariant_names) or None)
    props = _properties(model, engine, symmetry, property_names, no_properties)
    if not props and not (no_properties or quiet) and registry.properties_of(model):
        click.echo(f"note: liveness properties are not checked with --engine {engine}"
                   + (" --symmetry" if symmetry else "") + " (the vector and scalar engines check them)", err=True)
    limits = Limits(max_states, max_depth, keep_going, symmetry, time_limit, memory_limit, coverage)
    result = run_with_progress(engine, model, checked, limits, quiet=quiet, spark=spark, properties=props)
    docs = {i.name: i for i in checked}
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=1))
    else:
        click.echo(model.title())
        click.echo(summary(result))
        if checked:
            click.echo("")
            width = max(len(i.name) for i in checked)
            for inv_name, verdict in result.invariants.items():
                click.echo(f"  {inv_name:<{width}}  {verdict_text(verdict)}")
        for inv_name, verdict in result.invariants.items():
            if verdict.trace is not None:
                click.echo("")
                click.echo(text.render(verdict.trace, docs[inv_name].doc, report=verdict.report))
        show_properties(result, props)
        if result.coverage is not None:
            click.echo("")
            click.echo(render_coverage(result.coverage))
    warn_never_enabled(result)
    # the files last: the verdicts are printed whatever happens to them
    if itf_dir is not None:
        write_traces(itf_dir, model, [*result.invariants.items(), *result.properties.items()])
    if dump_graph is not None:
        graph.dump(dump_graph, model, checked, max_states=max_states, max_depth=max_depth)
    return EXIT_VIOLATION if result.violated else EXIT_OK


def _properties(model: Any, engine: str, symmetry: bool, names: tuple[str, ...], none: bool) -> list[Property]:
    """The properties a run checks: those named, else all of the model's, except with
    --no-properties; by default none on an engine or with --symmetry that cannot check them."""
    if none and names:
        raise click.UsageError("--no-properties and --property exclude each other")
    if none:
        return []
    props = registry.select(registry.properties_of(model), list(names) or None, "property")
    if not names and (engine not in engines.LIVENESS_ENGINES or symmetry):
        return []  # the default: safety only where liveness cannot be checked
    if names and engine == "z3":
        raise BadInput("--engine z3 does not check liveness properties (no bounded lasso search); "
                       "use --engine vector or scalar, or --no-properties")
    return props


def show_properties(result: Any, props: list[Property]) -> None:
    """The properties' verdicts, then each lasso with its cycle's fairness facts."""
    if not props:
        return
    click.echo("")
    width = max(len(p.name) for p in props)
    for p in props:
        click.echo(f"  {p.name:<{width}}  {verdict_text(result.properties[p.name])}  ({p.describe()})")
    for p in props:
        trace = result.properties[p.name].trace
        if trace is not None:
            click.echo("")
            click.echo(text.render(trace, p.doc, notes=lasso.notes(lasso.facts(trace, p))))


def _bmc_levels(engine: str, depth: int | None, max_depth: int | None, max_states: int | None, symmetry: bool) -> int | None:
    """--depth K (steps) is the z3 engine's bound, given to it as K + 1 BFS levels."""
    if engine != "z3":
        if depth is not None:
            raise click.UsageError("--depth is only valid with --engine z3 (the explicit engines take --max-depth)")
        return max_depth
    for flag, given in (("--max-depth", max_depth is not None), ("--max-states", max_states is not None),
                        ("--symmetry", symmetry)):
        if given:
            raise click.UsageError(f"{flag} is for the explicit engines; --engine z3 takes --depth K")
    return None if depth is None else depth + 1


check = ModelGroup("check", make=make_check, help="Check a model's invariants: kmc check MODEL [OPTIONS].")
