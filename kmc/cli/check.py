"""`kmc check MODEL`: explore a model's states and check its invariants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from kmc import registry
from kmc.api import ENGINES, Checkpoint, Limits, SearchOptions, able, render_coverage
from kmc.cli import graph
from kmc.cli.config import config_option
from kmc.cli.engine_options import engine_choice, engine_options, take
from kmc.cli.incomplete import allow_incomplete_option, exit_code, flags
from kmc.cli.limits import limit_options
from kmc.cli.models import ModelGroup, apply_options
from kmc.cli.output import check_writable, summary, verdict_text, warn_never_enabled, write_traces
from kmc.cli.progress import run_with_progress
from kmc.model.core import Option
from kmc.errors import BadInput
from kmc.model.temporal import Property
from kmc.traces import lasso, text


def run_options(command: Any) -> Any:
    """Options shared by check and compare: engine, limits and what an incomplete run exits."""
    for deco in reversed(
        [
            engine_choice("check", "exploration engine (kmc list shows what each can do)"),
            click.option("--max-states", type=click.IntRange(1, None), default=None,
                         help="stop after this many distinct states (the run is then incomplete)"),
            click.option("--max-depth", type=click.IntRange(1, None), default=None,
                         help="stop after this many BFS levels, the initial states being level 1"),
            *limit_options(),
            click.option("--workers", type=click.IntRange(1, 512), default=None, metavar="N",
                         help="threads for the search (default: every core; vector and compiled engines); "
                              "the results do not depend on N"),
            allow_incomplete_option(),
            *engine_options("check"),
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
                         help="check this invariant or lemma (repeatable; default: all of the model's "
                              "invariants; alone, no liveness property)"),
            click.option("--no-invariants", is_flag=True, help="explore the complete state graph and only count"),
            click.option("--property", "property_names", multiple=True, metavar="NAME",
                         help="check this liveness property (repeatable; default: those the model checks by "
                              "default, unless --invariant is given; vector and scalar engines)"),
            click.option("--properties", "all_properties", is_flag=True,
                         help="check every liveness property of the model"),
            click.option("--no-properties", is_flag=True, help="check no liveness property (safety only)"),
            click.option("--continue", "keep_going", is_flag=True,
                         help="explore on after a violation: every invariant gets its own shortest trace"),
            click.option("--itf-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                         help="write each counterexample to DIR/<model>-<mode>-<invariant>.itf.json"),
            click.option("--dump-graph", type=click.Path(dir_okay=False, path_type=Path), default=None,
                         metavar="FILE", help="also write the state graph (small runs) to FILE.graphml or FILE.dot"),
            click.option("--coverage", is_flag=True,
                         help="per action family: enabled, fired, new states; per field: the values reached"),
            click.option("--checkpoint-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                         metavar="DIR", help="keep each completed level in DIR, so that a stopped run can be "
                                             "resumed (vector, compiled and spark engines)"),
            click.option("--resume", is_flag=True,
                         help="continue the run kept in --checkpoint-dir (after it stopped or was killed)"),
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
    all_properties: bool = False,
    no_properties: bool = False,
    keep_going: bool,
    itf_dir: Path | None,
    engine: str,
    max_states: int | None,
    max_depth: int | None,
    symmetry: bool,
    as_json: bool,
    quiet: bool,
    time_limit: float | None = None,
    memory_limit: int | None = None,
    allow_incomplete: bool = False,
    dump_graph: Path | None = None,
    coverage: bool = False,
    workers: int | None = None,
    checkpoint_dir: Path | None = None,
    resume: bool = False,
    **settings: Any,
) -> int:
    if no_invariants and invariant_names:
        raise click.UsageError("--no-invariants and --invariant exclude each other")
    if resume and checkpoint_dir is None:
        raise BadInput("--resume needs --checkpoint-dir DIR, the directory of the run to continue")
    checkpoint = None if checkpoint_dir is None else Checkpoint(directory=checkpoint_dir, resume=resume)
    if itf_dir is not None:
        check_writable(itf_dir, "--itf-dir", folder=True)
    if dump_graph is not None:
        graph.check_path(dump_graph)
    options = take(engine, "check", settings)
    model, invariants = registry.build(name, **settings)
    checked = [] if no_invariants else registry.select_invariants(name, model, invariants,
                                                                  list(invariant_names) or None)
    props = _properties(model, property_names, all_properties, no_properties, bool(invariant_names))
    if props and not (property_names or all_properties) and checkpoint is not None:
        props = []  # by default, safety only where liveness cannot be checked
        if not quiet:
            click.echo("note: liveness properties are not checked with --checkpoint-dir (a checkpoint keeps levels, "
                       "not the state graph)", err=True)
    if props and not (property_names or all_properties) and (not ENGINES[engine].capabilities.liveness or symmetry):
        props = []
        if not quiet:
            click.echo(f"note: liveness properties are not checked with --engine {engine}"
                       + (" --symmetry" if symmetry else "") + f" (the {' and '.join(able('liveness'))} engines "
                       "check them)", err=True)
    limits = Limits(max_states=max_states, max_depth=max_depth, time_limit=time_limit, memory_limit=memory_limit)
    search = SearchOptions(keep_going=keep_going, symmetry=symmetry, coverage=coverage)
    result = run_with_progress(engine, model, checked, limits, search, quiet=quiet, options=options, properties=props,
                               workers=workers, checkpoint=checkpoint, spec=name)
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
    return exit_code([result], flags(limits), allow=allow_incomplete)


def _properties(model: Any, names: tuple[str, ...], every: bool, none: bool, invariants_named: bool) -> list[Property]:
    """The properties a run asks for: those named (--property), every one (--properties), none
    (--no-properties); else, unless --invariant names what to check, those the model checks by
    default (Property.default)."""
    given = [flag for flag, on in (("--property", bool(names)), ("--properties", every), ("--no-properties", none))
             if on]
    if len(given) > 1:
        raise click.UsageError(f"{given[0]} and {given[1]} exclude each other")
    if none:
        return []
    known = registry.properties_of(model)
    if names or every:
        return registry.select(known, list(names) or None, "property")
    return [] if invariants_named else [p for p in known if p.default]


def show_properties(result: Any, props: list[Property]) -> None:
    """The properties' verdicts, then each lasso with its cycle's fairness facts."""
    if not props:
        return
    click.echo("")
    width = max(len(p.name) for p in props)
    fairness = {", ".join(map(str, p.fairness)) or "no fairness" for p in props}
    shared = len(props) > 1 and len(fairness) == 1  # said once, after the verdicts
    for p in props:
        said = p.formula if shared else p.describe()
        click.echo(f"  {p.name:<{width}}  {verdict_text(result.properties[p.name])}  ({said})")
    if shared:
        click.echo(f"  each under {fairness.pop()}")
    for p in props:
        trace = result.properties[p.name].trace
        if trace is not None:
            click.echo("")
            click.echo(text.render(trace, p.doc, notes=lasso.notes(lasso.facts(trace, p))))


check = ModelGroup("check", make=make_check, help="Check a model's invariants: kmc check MODEL [OPTIONS].")
