"""`kmc trace --scenario FILE`: play a scripted scenario and print a table per step."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kmc import registry
from kmc.checker.scalar import ScalarModel
from kmc.errors import BadInput
from kmc.traces.scenario import columns_that_change, run_scenario, table

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


@click.command("trace")
@click.option("--scenario", "scenario_path", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="TOML file: model, [settings], steps = ['produce(r1)', 'fetch(r2)', ...], optional columns")
def trace(scenario_path: Path) -> int:
    """Play a scripted scenario and print the fields per step."""
    data = load_scenario(scenario_path)
    model, invariants = registry.build(data["model"], **data.get("settings", {}))
    played = run_scenario(model, [str(s) for s in data["steps"]])
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
    Console(width=max(140, 60 + 18 * len(columns))).print(out)
    return 0
