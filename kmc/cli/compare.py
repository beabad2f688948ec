"""`kmc compare MODEL --modes a,b,c`: the same bounds in several modes, side by side."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kmc import registry
from kmc.api import CheckResult, Limits, SearchOptions
from kmc.cli.check import run_options
from kmc.cli.incomplete import exit_code, flags
from kmc.cli import plot
from kmc.cli.config import config_option
from kmc.cli.engine_options import take
from kmc.cli.models import ModelGroup, apply_options
from kmc.cli.output import verdict_text
from kmc.cli.progress import run_with_progress
from kmc.errors import BadInput
from kmc.model.core import Option


def make_compare(name: str, options: tuple[Option, ...]) -> click.Command:
    modes = registry.model_class(name).modes

    def callback(**kw: Any) -> int:
        return run_compare(name, **kw)

    callback = apply_options(callback, tuple(o for o in options if o.name != "mode"))
    callback = run_options(callback)
    callback = config_option(callback)
    callback = click.option(
        "--matrix", "matrix", multiple=True, metavar="OPTION=V1,V2",
        help="also vary a model option over these values (repeatable): every combination is a column",
    )(callback)
    callback = click.option(
        "--plot", "plot_path", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE",
        help="also draw the verdict matrix and the state counts to FILE.png or FILE.svg",
    )(callback)
    callback = click.option(
        "--modes", "modes_csv", default=",".join(modes), show_default=True,
        help=f"comma-separated modes, from: {', '.join(modes)}",
    )(callback)
    return click.command(name, help=f"Compare the {name} model's modes on the same bounds.")(callback)


def parse_modes(csv: str, allowed: dict[str, str]) -> list[str]:
    modes = [m.strip() for m in csv.split(",") if m.strip()]
    if not modes:
        raise BadInput("--modes needs at least one mode")
    for m in modes:
        if m not in allowed:
            raise BadInput(f"--modes: unknown mode {m!r}; allowed: {', '.join(allowed)}")
    return list(dict.fromkeys(modes))


def parse_matrix(entries: tuple[str, ...], options: tuple[Option, ...]) -> list[dict[str, Any]]:
    """Every combination of the --matrix values, as settings overrides."""
    by_name = {o.name: o for o in options if o.name != "mode"}
    axes: list[list[tuple[str, Any]]] = []
    for entry in entries:
        key, _, values = entry.partition("=")
        key = key.strip().lstrip("-").replace("-", "_")
        if key not in by_name or not values:
            raise BadInput(f"--matrix {entry!r}: write OPTION=V1,V2 with OPTION one of: {', '.join(by_name)}")
        opt = by_name[key]
        parsed: list[tuple[str, bool | int | str]] = []
        for raw in (v.strip() for v in values.split(",")):
            if isinstance(opt.default, bool):
                if raw.lower() not in ("true", "false"):
                    raise BadInput(f"--matrix {key}: {raw!r} is not true or false")
                parsed.append((key, raw.lower() == "true"))
            elif isinstance(opt.default, int):
                try:
                    parsed.append((key, int(raw)))
                except ValueError:
                    raise BadInput(f"--matrix {key}: {raw!r} is not an integer")
            else:
                parsed.append((key, raw))
        axes.append(parsed)
    return [dict(combo) for combo in itertools.product(*axes)]


def run_compare(
    name: str,
    *,
    modes_csv: str,
    matrix: tuple[str, ...],
    engine: str,
    max_states: int | None,
    max_depth: int | None,
    symmetry: bool,
    as_json: bool,
    quiet: bool,
    time_limit: float | None = None,
    memory_limit: int | None = None,
    allow_incomplete: bool = False,
    plot_path: Path | None = None,
    workers: int | None = None,
    **settings: Any,
) -> int:
    options = take(engine, "check", settings, one_run=False)
    cls = registry.model_class(name)
    if plot_path is not None:
        plot.check_path(plot_path)
    modes = parse_modes(modes_csv, cls.modes)
    combos = parse_matrix(matrix, cls.options)
    # every column is built (and so validated) before anything runs
    built = [registry.build(name, **{**settings, **combo, "mode": m}) for combo in combos for m in modes]
    labels = [" ".join([m, *(f"{k}={v}" for k, v in combo.items())]) for combo in combos for m in modes]
    results: list[CheckResult] = []
    limits = Limits(max_states=max_states, max_depth=max_depth, time_limit=time_limit, memory_limit=memory_limit)
    search = SearchOptions(keep_going=True, symmetry=symmetry)
    for model, invariants in built:
        results.append(run_with_progress(engine, model, invariants, limits, search, quiet=quiet, options=options,
                                         workers=workers, spec=name))
    if as_json:
        columns = [{**r.to_json(), "column": label} for r, label in zip(results, labels)]
        click.echo(json.dumps({"model": name, "modes": columns}, indent=1))
    else:
        print_matrix(plot.fixed_title(built[0][0].title(), combos), results, labels)
    if plot_path is not None:  # after the verdicts: they are printed whatever happens to the file
        plot.plot(plot_path, plot.fixed_title(built[0][0].title(), combos), results, labels)
    return exit_code(results, flags(limits), allow=allow_incomplete)


def print_matrix(title: str, results: list[CheckResult], labels: list[str]) -> None:
    table = Table(title=escape(title), title_justify="left")
    table.add_column("invariant")
    for label in labels:
        table.add_column(escape(label), justify="right")
    # modes may check different invariants (quorum's kip853 and kip996): "-" where a mode has none
    for inv in dict.fromkeys(name for r in results for name in r.invariants):
        table.add_row(escape(inv), *[verdict_text(r.invariants[inv]) if inv in r.invariants else "-" for r in results])
    table.add_section()
    table.add_row("distinct states", *[f"{r.distinct_states:,}" for r in results])
    table.add_row("depth", *[str(r.depth) for r in results])
    table.add_row("complete", *["yes" if r.complete else f"no ({r.stopped_by})" for r in results])
    table.add_row("seconds", *[f"{r.seconds:.2f}" for r in results])
    Console(width=max(100, 24 + 24 * len(results))).print(table)


compare = ModelGroup("compare", make=make_compare, help="Compare modes side by side: kmc compare MODEL --modes a,b.")
