"""Each engine's own flags (`Engine.options`: --master, --depth, ...) on the commands that
run engines, and handing their values back to the chosen engine's `configure`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kmc.api import ENGINES, EngineOption
from kmc.errors import BadInput


def engine_choice(job: str, help: str) -> Any:
    """`--engine NAME` among the engines that run `job` ("check" or "simulate")."""
    names = [n for n, e in ENGINES.items() if getattr(e.capabilities, job)]
    return click.option("--engine", type=click.Choice(names), default=names[0], show_default=True, help=help)


def engine_options(job: str) -> list[Any]:
    """The click options of every engine that runs `job`, in the table's order."""
    out = []
    for name, found in ENGINES.items():
        if getattr(found.capabilities, job):
            out += [_click_option(name, o) for o in found.options]
    return out


def _click_option(engine: str, o: EngineOption) -> Any:
    help = f"--engine {engine}: {o.help}"
    if o.kind == "flag":
        return click.option(o.flag, o.dest, is_flag=True, help=help)
    if o.kind == "pairs":
        return click.option(o.flag, o.dest, multiple=True, metavar=o.metavar, help=help)
    kind: Any = {"int": click.IntRange(o.minimum, None), "path": click.Path(file_okay=False, path_type=Path),
                 "str": str}[o.kind]
    return click.option(o.flag, o.dest, type=kind, default=None, metavar=o.metavar, help=help)


def take(engine: str, job: str, kw: dict[str, Any], *, one_run: bool = True) -> Any:
    """Remove every engine's flags from a command's keyword arguments (the rest are the
    model's settings) and give what the chosen engine makes of its own; refuse the flags of
    another engine, and one-run flags on a command that runs several checks."""
    given: dict[str, dict[str, Any]] = {}
    for name, found in ENGINES.items():
        if not getattr(found.capabilities, job):
            continue
        for o in found.options:
            value = kw.pop(o.dest, None)
            if o.given(value):
                if o.one_run and not one_run:
                    raise BadInput(f"{o.flag} is for one run: use it with kmc check")
                given.setdefault(name, {})[o.dest] = value
    others = [o.flag for name, values in given.items() if name != engine
              for o in ENGINES[name].options if o.dest in values]
    if others:
        raise BadInput(f"{', '.join(others)}: only for --engine {' or '.join(sorted(set(given) - {engine}))} "
                       f"(the engine is {engine})")
    if engine not in given and not ENGINES[engine].options:
        return None
    return ENGINES[engine].configure(given.get(engine, {}), one_run=one_run)
