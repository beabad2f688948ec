"""`kmc trace FILE.itf.json`: re-render a saved trace; `kmc trace --scenario FILE`: play a
scripted scenario and print a table per step. `--format` picks text, json (ITF), mermaid,
dot or html for either."""

from __future__ import annotations

import io
import tomllib
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kmc import registry
from kmc.semantics.scalar import ScalarModel
from kmc.cli.output import check_writable, write_atomic
from kmc.errors import BadInput, ReplayError
from kmc.model.core import Invariant, Model
from kmc.model.temporal import Property
from kmc.traces import dot, html, itf, lasso, mermaid, text
from kmc.traces.replay import replay
from kmc.traces.scenario import columns_that_change, run_scenario, table
from kmc.traces.trace import Trace

SCENARIO_KEYS = {"model", "settings", "steps", "columns", "title"}


def load_scenario(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise BadInput(f"{path}: no such scenario file")
    except tomllib.TOMLDecodeError as e:
        raise BadInput(f"{path}: malformed TOML: {e}")
    unknown = set(data) - SCENARIO_KEYS
    if unknown:
        raise BadInput(f"{path}: unknown key {sorted(unknown)[0]!r}; allowed: {', '.join(sorted(SCENARIO_KEYS))}")
    for key, kind in (("model", str), ("steps", list), ("settings", dict), ("columns", list), ("title", str)):
        if key in data and not isinstance(data[key], kind):
            raise BadInput(f"{path}: key {key!r} must be a {kind.__name__}")
    if "model" not in data or "steps" not in data:
        raise BadInput(f"{path}: a scenario needs the keys 'model' and 'steps'")
    return data


FORMATS = ("text", "json", "mermaid", "dot", "html")


@click.command("trace")
@click.argument("trace_path", metavar="[FILE.itf.json]", required=False,
                type=click.Path(dir_okay=False, path_type=Path))
@click.option("--scenario", "scenario_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="TOML file: model, [settings], steps = ['produce(r1)', 'fetch(r2)', ...], optional columns")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text; json (ITF); mermaid (sequence diagram); dot (Graphviz); html (one self-contained page)")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="write to FILE (whole or not at all) instead of standard output")
def trace(trace_path: Path | None, scenario_path: Path | None, fmt: str, output: Path | None) -> int:
    """Re-render a saved trace (kmc check --itf-dir) or play a scripted scenario."""
    if (trace_path is None) == (scenario_path is None):
        raise click.UsageError("give a trace file (FILE.itf.json) or --scenario FILE, one of them")
    if output is not None:
        check_writable(output, "--output")
    if trace_path is not None:
        played, docs = load_trace(trace_path)
    else:
        data = load_scenario(scenario_path)  # type: ignore[arg-type]
        model, invariants = registry.build(data["model"], **data.get("settings", {}))
        played = run_scenario(model, [str(s) for s in data["steps"]])
        docs = {i.name: i for i in invariants}
        if fmt == "text":
            return print_scenario(data, played, invariants, output)
        fails = [invariants[k] for k in ScalarModel(model).violated(played.last, invariants)]
        fails = [i for i in fails if not i.report]
        if fails:
            played.invariant = fails[0].name
    inv = docs.get(played.invariant or "")
    doc, report = (inv.doc, inv.report) if inv is not None else ("", False)
    out = render(played, fmt, doc, report)
    if output is not None:
        write_atomic(output, out, "--output")
    else:
        click.echo(out, nl=not out.endswith("\n"))
    return 0


def load_trace(path: Path) -> tuple[Trace, dict[str, Invariant]]:
    """A saved ITF trace, rebuilt against its model and replayed through it."""
    try:
        text_ = path.read_text()
    except FileNotFoundError:
        raise BadInput(f"{path}: no such trace file")
    built: dict[str, Invariant] = {}
    props: dict[str, Property] = {}

    def build(name: str, settings: dict[str, Any]) -> Model:
        model, invariants = registry.build(name, **settings)
        built.update({i.name: i for i in invariants})
        props.update({p.name: p for p in registry.properties_of(model)})
        return model

    played = itf.loads(text_, build, str(path))
    inv = built.get(played.invariant or "") if played.loop is None else None
    prop = props.get(played.invariant or "") if played.loop is not None else None
    try:
        replay(played, inv)
        if prop is not None:
            lasso.check(played, prop)
            built[prop.name] = Invariant(prop.name, prop.predicate, prop.doc)  # its doc, for the renderings
    except ReplayError as e:
        raise BadInput(f"{path}: the trace does not replay through its model: {e}")
    return played, built


def render(played: Trace, fmt: str, doc: str, report: bool) -> str:
    if fmt == "json":
        return itf.dumps(played) + "\n"
    if fmt == "mermaid":
        return mermaid.render(played)
    if fmt == "dot":
        return dot.render(played)
    if fmt == "html":
        return html.render(played, doc, report=report)
    return text.render(played, doc, report=report) + "\n"


def print_scenario(data: dict[str, Any], played: Trace, invariants: list[Invariant], output: Path | None) -> int:
    model = played.model
    columns = [str(c) for c in data.get("columns", [])] or columns_that_change(played)
    sm = ScalarModel(model)
    out = Table(title=data.get("title") or model.title(), title_justify="left")
    out.add_column("#", justify="right")
    out.add_column("step", no_wrap=True)
    for name in columns:
        out.add_column(escape(name), justify="right")
    out.add_column("fails")
    for row, step in zip(table(played, columns), played.steps):
        fails = [invariants[k].name for k in sm.violated(step.state, invariants)]
        cells = [escape(str(row[c])) for c in columns]
        out.add_row(str(row["step"]), escape(row["action"]), *cells, escape(", ".join(fails)))
    width = max(140, 60 + 18 * len(columns))
    if output is None:
        Console(width=width).print(out)
    else:  # -o: the same table, without colours
        buf = io.StringIO()
        Console(file=buf, width=width).print(out)
        write_atomic(output, buf.getvalue(), "--output")
    return 0
