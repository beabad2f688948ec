"""`kmc simulate MODEL`: many random walks at once, for state spaces beyond exhaustive reach."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from kmc import api, exits, registry
from kmc.api import MAX_SEED, MAX_WEIGHT, CheckResult, Walks, render_coverage
from kmc.cli.engine_options import engine_choice, engine_options, take
from kmc.cli.limits import Seconds
from kmc.cli.models import ModelGroup, apply_options
from kmc.cli.output import check_writable, warn_never_enabled, write_traces
from kmc.cli.progress import WalkProgress
from kmc.errors import BadInput
from kmc.model.core import Option
from kmc.traces import text

DEFAULT_SECONDS = 60.0  # with neither --walks nor --time-limit


def parse_weights(given: tuple[str, ...]) -> dict[str, float]:
    """`--weight ACTION=W` as {action: W}; the swarm checks W's range (kmc/engines/simulation/swarm.py)."""
    weights = {}
    for item in given:
        name, eq, value = item.partition("=")
        try:
            weights[name] = float(value)
        except ValueError:
            eq = ""
        if not eq:
            raise BadInput(f"--weight {item!r}: write ACTION=W with W a number from 0 to {MAX_WEIGHT:,.0f}")
    return weights


def make_simulate(name: str, options: tuple[Option, ...]) -> click.Command:
    def callback(**kw: Any) -> int:
        return run_simulate(name, **kw)

    callback = apply_options(callback, options)
    for deco in reversed(
        [
            click.option("--walkers", type=click.IntRange(1, 10_000_000), default=Walks.walkers, show_default=True,
                         help="walks advanced together, as numpy columns"),
            click.option("--depth", type=click.IntRange(1, 100_000), default=Walks.depth, show_default=True,
                         help="steps per walk; a walk also ends where nothing is enabled"),
            click.option("--seed", type=click.IntRange(0, MAX_SEED), default=0, show_default=True,
                         help="the run's random seed, from 0 to 2**64-1"),
            click.option("--walks", type=click.IntRange(1, None), default=None,
                         help="walk this many walks, each to its end (default: run until --time-limit)"),
            click.option("--time-limit", type=Seconds(), default=None,
                         metavar="SECONDS", help=f"end after this many seconds (default {DEFAULT_SECONDS:.0f} "
                                                 "without --walks)"),
            click.option("--weight", "weights", multiple=True, metavar="ACTION=W",
                         help="pick this action family W times as often as one of weight 1 (repeatable; 0 never)"),
            click.option("--invariant", "invariant_names", multiple=True, metavar="NAME",
                         help="check this invariant (repeatable; default: all of the model's)"),
            click.option("--continue", "keep_going", is_flag=True,
                         help="walk on after a violation: every invariant gets its own trace"),
            click.option("--itf-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                         help="write each counterexample to DIR/<model>-<mode>-<invariant>.itf.json"),
            engine_choice("simulate", "vector: on this machine, in --workers processes (the model's compiled "
                                      "kernels when llvmlite is installed); spark: the walkers spread over Spark "
                                      "partitions"),
            click.option("--workers", type=click.IntRange(1, 512), default=None,
                         help="vector engine: spread the walkers and walks over N worker processes "
                              "(default: one per core); the states seen with --walks do not depend on N"),
            *engine_options("simulate"),
            click.option("--coverage", is_flag=True,
                         help="per action family: enabled, fired, new states; per field: the values reached"),
            click.option("--json", "as_json", is_flag=True, help="print one JSON object for machines"),
            click.option("--quiet", "-q", is_flag=True, help="no progress on stderr"),
        ]
    ):
        callback = deco(callback)
    cls = registry.model_class(name)
    return click.command(name, help=f"Simulate the {name} model: {cls.summary}.")(callback)


def run_simulate(name: str, *, walkers: int, depth: int, seed: int, walks: int | None, time_limit: float | None,
                 weights: tuple[str, ...], invariant_names: tuple[str, ...], keep_going: bool,
                 itf_dir: Path | None, as_json: bool, quiet: bool, coverage: bool, engine: str, workers: int | None,
                 **settings: Any) -> int:
    options = take(engine, "simulate", settings, one_run=False)
    if itf_dir is not None:
        check_writable(itf_dir, "--itf-dir", folder=True)
    model, invariants = registry.build(name, **settings)
    checked = registry.select(invariants, list(invariant_names) or None)
    if walks is None and time_limit is None:
        time_limit = DEFAULT_SECONDS
    plan = Walks(walkers, depth, seed, walks, time_limit, parse_weights(weights), keep_going, coverage)
    label = model.name if workers == 1 else f"{model.name} (worker 1)"
    result = api.simulate(model, checked, plan, engine=engine, workers=workers, options=options,
                          progress=None if quiet else WalkProgress(label), spec=name)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=1))
    else:
        click.echo(model.title())
        click.echo(summary(result))
        docs = {i.name: i for i in checked}
        if checked:
            click.echo("")
            width = max(len(i.name) for i in checked)
            for inv_name, verdict in result.invariants.items():
                click.echo(f"  {inv_name:<{width}}  {verdict_line(result, inv_name)}")
        for inv_name, verdict in result.invariants.items():
            if verdict.trace is not None:
                click.echo("")
                click.echo(text.render(verdict.trace, docs[inv_name].doc, report=verdict.report))
        if result.coverage is not None:
            click.echo("")
            click.echo(render_coverage(result.coverage))
    warn_never_enabled(result)
    if itf_dir is not None:  # after the verdicts: they are printed whatever happens to the files
        write_traces(itf_dir, model, result.invariants.items())
    return exits.VIOLATION if result.violated else exits.OK  # never INCOMPLETE: kmc/exits.py


def summary(result: CheckResult) -> str:
    st = result.engine_stats
    stop = {
        "violation": "Stopped at the first violation (--continue walks on).",
        "time-limit": "Stopped by --time-limit.",
        "walks": "Stopped after --walks walks.",
    }.get(result.stopped_by or "", "")
    where = (f" on Spark ({st['master']}, {st['partitions']} partitions, each with its own seed)"
             if "partitions" in st else
             f" in {st['workers']} workers" if st.get("workers", 1) > 1 else "")
    return (f"simulate{where} ({st['interpretation']} interpretation): {st['walkers']:,} walkers, seed {st['seed']}, up to {st['depth']} steps a walk: "
            f"{st['walker_steps']:,} steps in {result.seconds:.2f} s ({st['steps_per_second']:,} steps/s), "
            f"{st['walks']:,} walks ended, deepest {st['deepest_walk']} steps, "
            f"{result.distinct_states:,} distinct states seen, peak memory {result.peak_memory_bytes / 2**20:,.0f} MiB"
            f"{' (the workers summed)' if st.get('workers', 1) > 1 else ''}\n"
            f"{stop} A simulation never proves an invariant: 'not violated' means no walk broke it.")


def verdict_line(result: CheckResult, name: str) -> str:
    verdict = result.invariants[name]
    if verdict.trace is None:
        return "not violated"
    kind = result.engine_stats["traces"].get(name, "as walked")
    how = ("shortest: a bounded breadth-first search confirmed it" if kind == "shortest"
           else "as walked, loops cut out; the bounded search for a shorter one did not finish")
    return f"VIOLATED ({verdict.trace.length} steps, {how})"


simulate = ModelGroup("simulate", make=make_simulate,
                      help="Simulate a model: many random walks at once (kmc simulate MODEL [OPTIONS]).")
