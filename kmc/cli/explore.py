"""`kmc explore MODEL [model options]`: walk a model by hand in a local web page.

The model is built as `kmc check` builds it (its options, `--config`); the page is served on
127.0.0.1 only (kmc/explore/server.py) until Ctrl-C, which stops it cleanly (exit 0). A
counterexample is loaded with `--trace FILE` or from the page, read as `kmc trace` reads one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kmc import registry
from kmc.cli.config import config_option
from kmc.cli.models import ModelGroup, apply_options
from kmc.cli.output import check_writable, write_atomic
from kmc.cli.trace import load_trace, read_trace
from kmc.errors import BadInput
from kmc.explore.server import Explorer
from kmc.explore.walk import Walk
from kmc.model.core import Option

DEFAULT_PORT = 8765


def make_explore(name: str, options: tuple[Option, ...]) -> click.Command:
    def callback(**kw: Any) -> int:
        return run_explore(name, **kw)

    callback = apply_options(callback, options)
    callback = config_option(callback)
    for deco in reversed(
        [
            click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True,
                         help="the port on 127.0.0.1 (0: a free one, printed)"),
            click.option("--trace", "trace_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
                         metavar="FILE.itf.json", help="start on this counterexample (kmc check --itf-dir writes them)"),
            click.option("--save", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="PATH",
                         help="write the walk to PATH as an ITF trace: from the page's save button, and on Ctrl-C"),
        ]
    ):
        callback = deco(callback)
    cls = registry.model_class(name)
    return click.command(name, help=f"Walk the {name} model in a web page: {cls.summary}.")(callback)


def run_explore(name: str, *, port: int, trace_path: Path | None, save: Path | None, **settings: Any) -> int:
    server = explorer(name, port=port, trace_path=trace_path, save=save, **settings)
    try:  # from the first line on, Ctrl-C is how it stops
        click.echo(f"kmc explore: {server.walk.model.title()} at {server.url} (Ctrl-C stops it)")
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    said = "kmc explore: stopped"
    if server.save is not None and server.walk.path:
        said += f"; the walk ({len(server.walk.path) - 1} steps) saved to {server.save()}"
    click.echo(said)
    return 0


def explorer(name: str, *, port: int, trace_path: Path | None = None, save: Path | None = None,
             **settings: Any) -> Explorer:
    """The server for model `name` with `settings`, listening on 127.0.0.1:`port` (not yet serving)."""
    if save is not None:
        check_writable(save, "--save")
    model, invariants = registry.build(name, **settings)
    walk = Walk(model, invariants, lambda text, source: read_trace(text, source, name)[0])
    if trace_path is not None:
        walk.load(load_trace(trace_path, name)[0], str(trace_path))

    def write() -> str:
        assert save is not None
        write_atomic(save, walk.itf(), "--save")
        return str(save)

    try:
        return Explorer(walk, port, write if save is not None else None)
    except OSError as e:
        raise BadInput(f"--port {port}: cannot listen on 127.0.0.1:{port} ({e.strerror or e}); "
                       "choose another port, or --port 0 for a free one")


explore = ModelGroup("explore", make=make_explore,
                     help="Walk a model's states in a local web page: kmc explore MODEL [OPTIONS].")
