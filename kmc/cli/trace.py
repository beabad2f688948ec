"""`kmc trace FILE.itf.json`: re-render a saved trace; `kmc trace --scenario FILE`: play a
scripted scenario and print a table per step. `--format` picks text, json (ITF), mermaid,
dot or html for either; `kmc trace A.itf.json B.itf.json --format html` sets two traces side by
side on one page.

A trace file is data: its model is kmc's own or an installed one, by name, or the file given
with `--model`; a model file the trace names is never imported. What it claims (the invariant
or property violated) must be one of the model's and hold of the replayed trace.
"""

from __future__ import annotations

import io
import shlex
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
from kmc.tomlfile import TomlFile, read_text, type_name

SCENARIO_KEYS = {"model", "settings", "steps", "columns", "title"}


def load_scenario(path: Path) -> dict[str, Any]:
    f = TomlFile(path, "scenario file")
    data = f.data
    unknown = sorted(set(data) - SCENARIO_KEYS)
    if unknown:
        raise f.error(f"unknown key {unknown[0]!r}; allowed: {', '.join(sorted(SCENARIO_KEYS))}", key=unknown[0])
    for key, kind in (("model", str), ("steps", list), ("settings", dict), ("columns", list), ("title", str)):
        if key in data and not isinstance(data[key], kind):
            raise f.error(f"key {key!r} must be {type_name(kind())} (got {type_name(data[key])})", key=key)
    for key in ("steps", "columns"):
        wrong = [v for v in data.get(key, []) if not isinstance(v, str)]
        if wrong:
            raise f.error(f"key {key!r} must be an array of strings (got {type_name(wrong[0])})", key=key)
    if "model" not in data or "steps" not in data:
        raise f.error("a scenario needs the keys 'model' and 'steps'")
    return data


FORMATS = ("text", "json", "mermaid", "dot", "html")


@click.command("trace")
@click.argument("trace_paths", metavar="[FILE.itf.json [FILE2.itf.json]]", nargs=-1,
                type=click.Path(dir_okay=False, path_type=Path))
@click.option("--model", "model_spec", default=None, metavar="MODEL",
              help="the trace's model: a model name, or FILE.py[:Class] (its code runs); default: the model "
                   "the trace names, when that is kmc's own or an installed one")
@click.option("--scenario", "scenario_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="TOML file: model, [settings], steps = ['produce(r1)', 'fetch(r2)', ...], optional columns")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text; json (ITF); mermaid (sequence diagram); dot (Graphviz); html (one self-contained page)")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="write to FILE (whole or not at all) instead of standard output")
def trace(trace_paths: tuple[Path, ...], model_spec: str | None, scenario_path: Path | None, fmt: str,
          output: Path | None) -> int:
    """Re-render a saved trace (kmc check --itf-dir), two side by side (--format html), or play
    a scripted scenario."""
    if (not trace_paths) == (scenario_path is None):
        raise click.UsageError("give a trace file (FILE.itf.json) or --scenario FILE, one of them")
    if len(trace_paths) > 2 or (len(trace_paths) == 2 and fmt != "html"):
        raise click.UsageError(f"{len(trace_paths)} trace files given: give one, or two with --format html "
                               "(side by side)")
    if output is not None:
        check_writable(output, "--output")
    if len(trace_paths) == 2:
        out = html.page([_shown(*load_trace(p, model_spec)) for p in trace_paths])
        return _emit(out, output)
    if trace_paths:
        played, docs = load_trace(trace_paths[0], model_spec)
    else:
        if model_spec is not None:
            raise click.UsageError("--model is for a trace file: a scenario names its model")
        assert scenario_path is not None
        data = load_scenario(scenario_path)
        try:
            # a model file is named relative to the scenario
            model, invariants = registry.build(data["model"], scenario_path.parent, **data.get("settings", {}))
            played = run_scenario(model, data["steps"])
        except BadInput as e:  # a setting or a step of the file: say which file
            raise BadInput(f"{scenario_path}: {e}") from None
        docs = {i.name: i for i in invariants}
        if fmt == "text":
            return print_scenario(data, played, invariants, output)
        fails = [invariants[k] for k in ScalarModel(model).violated(played.last, invariants)]
        fails = [i for i in fails if not i.report]
        if fails:
            played.invariant = fails[0].name
    if fmt == "html":
        shown = _shown(played, docs)
        return _emit(html.render(played, shown.doc, report=shown.report, facts=shown.facts), output)
    inv = docs.get(played.invariant or "")
    doc, report = (inv.doc, inv.report) if inv is not None else ("", False)
    return _emit(render(played, fmt, doc, report), output)


def _emit(out: str, output: Path | None) -> int:
    if output is not None:
        write_atomic(output, out, "--output")
    else:
        click.echo(out, nl=not out.endswith("\n"))
    return 0


def _shown(played: Trace, docs: dict[str, Invariant]) -> html.Shown:
    """A trace as the HTML page shows it: its claim's doc, and a lasso's fairness facts."""
    inv = docs.get(played.invariant or "")
    doc, report = (inv.doc, inv.report) if inv is not None else ("", False)
    facts: list[str] = []
    if played.loop is not None:
        prop = next(p for p in registry.properties_of(played.model) if p.name == played.invariant)
        facts = lasso.notes(lasso.facts(played, prop))
    return html.Shown(played, doc, report, tuple(facts))


def load_trace(path: Path, model_spec: str | None = None) -> tuple[Trace, dict[str, Invariant]]:
    """A saved ITF trace, rebuilt against its model (`model_spec`, else the model it names
    when that is a name, never a file) and replayed through it, its claim checked."""
    return read_trace(read_text(path, "trace file"), str(path), model_spec)


def read_trace(text_: str, path: str, model_spec: str | None = None) -> tuple[Trace, dict[str, Invariant]]:
    """`load_trace` of a trace's text (`path` names it in messages), as `kmc explore` loads one sent by its page."""
    built: dict[str, Invariant] = {}
    props: dict[str, Property] = {}

    def build(written: str, settings: dict[str, Any]) -> Model:
        spec = _by_name(path, written) if model_spec is None else _same_model(path, written, model_spec)
        model, invariants = registry.build(spec, **settings)
        lemmas = registry.lemmas(model.name, model)
        built.update({i.name: i for i in [*lemmas, *invariants]})
        props.update({p.name: p for p in registry.properties_of(model)})
        return model

    played = itf.loads(text_, build, str(path))
    inv, prop = _claimed(path, played, built, props)
    try:
        replay(played, inv)
        if prop is not None:
            lasso.check(played, prop)
            built[prop.name] = Invariant(prop.name, prop.predicate, prop.doc)  # its doc, for the renderings
    except ReplayError as e:
        raise BadInput(f"{path}: the trace does not replay through its model: {e}")
    return played, built


def _by_name(path: str, written: str) -> str:
    """The model a trace names, when it names it by name: a file it names is not imported."""
    if not isinstance(written, str):
        raise BadInput(f"{path}: the model it names is not a string ({written!r}); pass the model with --model")
    if not registry.is_path(written):
        return written
    file = written.rpartition(":")[0] if ".py:" in written else written
    shown = shlex.quote(written) if written.isprintable() else repr(written)
    raise BadInput(f"{path} was written from model file {file if file.isprintable() else repr(file)}; "
                   f"pass it with --model {shown} (kmc trace imports no file a trace names)")


def _same_model(path: str, written: str, spec: str) -> str:
    """`--model spec`, when it is the model the trace was written from (by name, or for a file
    by class: the file may have moved)."""
    cls = registry.model_class(spec)
    if not isinstance(written, str) or (registry.is_path(written) and ".py:" not in written):
        return spec  # nothing to compare with
    same = cls.__name__ == written.rpartition(":")[2] if ".py:" in written else cls.name == written
    if not same:
        shown = written if written.isprintable() else repr(written)
        raise BadInput(f"{path} was written from model {shown}; --model {spec} is model {cls.name} "
                       f"(class {cls.__name__})")
    return spec


def _claimed(path: str, played: Trace, invariants: dict[str, Invariant], properties: dict[str, Property]
             ) -> tuple[Invariant | None, Property | None]:
    """The invariant (or, for a lasso, the property) the trace says it violates: one of its model's."""
    claim = played.invariant
    if claim is None:
        return None, None
    kind, known = ("property", properties) if played.loop is not None else ("invariant", invariants)
    if not isinstance(claim, str) or claim not in known:
        raise BadInput(f"{path}: claims to violate {kind} {claim!r}, which model {played.model.name} does not have; "
                       f"its {kind} names: {', '.join(known) or 'none'}")
    if played.loop is not None:
        return None, properties[claim]
    return invariants[claim], None


def render(played: Trace, fmt: str, doc: str, report: bool) -> str:
    """Every format but html (`html.render`, `html.page`)."""
    if fmt == "json":
        return itf.dumps(played) + "\n"
    if fmt == "mermaid":
        return mermaid.render(played)
    if fmt == "dot":
        return dot.render(played)
    return text.render(played, doc, report=report) + "\n"


def print_scenario(data: dict[str, Any], played: Trace, invariants: list[Invariant], output: Path | None) -> int:
    model = played.model
    columns = [str(c) for c in data.get("columns", [])] or columns_that_change(played)
    sm = ScalarModel(model)
    out = Table(title=escape(data.get("title") or model.title()), title_justify="left")
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
