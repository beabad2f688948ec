"""`kmc bench`: fixed configurations (benchmarks/configs.toml), each run by the vector engine and
by the scalar reference engine in one process: distinct states, seconds, states/s, the ratio
vector/scalar, and whether both engines explored the same states.

Above --scalar-max-states the scalar engine stops at that many states; its states/s is then
measured on that prefix of the search, and the vector engine also runs that prefix, so that
agreement is still checked state count for state count.

Configurations marked `spark = true` are also run by the Spark engine (--spark-master,
default local[2], with --spark-partitions, default 2; --no-spark skips it): its states/s over
the levels (the session start excluded, and shown on its own) as a ratio to the vector
engine's, the median seconds per level (on a tiny configuration, the per-level overhead), and
whether its outcome equals the vector engine's. The session is started once and reused by the
following configurations.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kmc import exits, registry
from kmc.bench import DEFAULT_CONFIGS, Row, load, run_one
from kmc.cli.progress import ProgressPrinter
from kmc.api import ENGINES, ProgressHook
from kmc.errors import BadInput


@click.command("bench")
@click.option("--configs", "path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help=f"TOML file of [[config]] tables (default: {DEFAULT_CONFIGS.parent.name}/{DEFAULT_CONFIGS.name} "
                   "of this checkout)")
@click.option("--only", multiple=True, metavar="NAME", help="run only this configuration (repeatable)")
@click.option("--scalar-max-states", type=click.IntRange(-1, None), default=200_000, show_default=True,
              help="stop the scalar engine after this many states (0: never stop it; -1: do not run it)")
@click.option("--spark/--no-spark", "with_spark", default=True, show_default=True,
              help="also run the Spark engine on the configurations marked spark = true (needs Java 17)")
@click.option("--spark-master", default="local[2]", show_default=True, metavar="URL",
              help="Spark master for those runs")
@click.option("--spark-partitions", type=click.IntRange(1, None), default=2, show_default=True, metavar="N",
              help="partitions of the state space for those runs")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object for machines")
@click.option("--quiet", "-q", is_flag=True, help="no progress on stderr")
def bench(path: Path | None, only: tuple[str, ...], scalar_max_states: int, with_spark: bool, spark_master: str,
          spark_partitions: int, as_json: bool, quiet: bool) -> int:
    """Run the benchmark configurations with the vector and the scalar engine, side by side (and
    the Spark engine on those marked spark = true)."""
    configs = load(path or DEFAULT_CONFIGS)
    if only:
        names = {c.name for c in configs}
        for n in only:
            if n not in names:
                raise BadInput(f"--only: unknown configuration {n!r}; allowed: {', '.join(sorted(names))}")
        configs = [c for c in configs if c.name in only]
    for c in configs:
        registry.build(c.model, c.base, **c.settings)  # every configuration validated before anything runs
    spark = (ENGINES["spark"].configure({"master": spark_master, "partitions": spark_partitions, "spark_threshold": 0},
                                        one_run=True) if with_spark else None)

    @contextmanager
    def progress(label: str) -> Iterator[ProgressHook]:
        printer = ProgressPrinter(label, quiet=quiet)
        try:
            yield printer
        finally:
            printer.done()

    rows = [run_one(c, scalar_max_states, spark, progress) for c in configs]
    if as_json:
        click.echo(json.dumps({"configs": [r.to_json() for r in rows]}, indent=1))
    else:
        print_table(rows)
        if any(r.spark is not None for r in rows):
            print_spark_table(rows)
    disagree = any(r.agree.startswith("NO") or r.spark_agree.startswith("NO") for r in rows)
    return exits.DISAGREE if disagree else exits.OK


def print_table(rows: list[Row]) -> None:
    table = Table(title="kmc bench: vector against scalar, distinct states per second", title_justify="left")
    for name, justify in [("configuration", "left"), ("key", "left"), ("states", "right"), ("vector s", "right"),
                          ("vector states/s", "right"), ("bytes/state", "right"), ("scalar states", "right"),
                          ("scalar s", "right"), ("scalar states/s", "right"), ("ratio", "right"),
                          ("same states", "left")]:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for r in rows:
        v, s = r.vector, r.scalar
        table.add_row(
            escape(r.config.name), r.key, f"{v.distinct_states:,}", f"{v.seconds:.2f}", f"{v.states_per_second:,.0f}",
            "" if v.bytes_per_state is None else f"{v.bytes_per_state:.1f}",
            "" if s is None else f"{s.distinct_states:,}", "" if s is None else f"{s.seconds:.2f}",
            "" if s is None else f"{s.states_per_second:,.0f}", "" if r.ratio is None else f"{r.ratio:.1f}x",
            r.agree,
        )
    Console(width=210).print(table)


def print_spark_table(rows: list[Row]) -> None:
    table = Table(title="kmc bench: the Spark engine against the vector engine (states/s over the levels, "
                        "the session start apart)", title_justify="left")
    for name in ["configuration", "states", "master", "partitions", "session start s", "levels",
                 "median level s", "spark s", "spark states/s", "spark/vector", "shuffle bytes/state", "same outcome"]:
        table.add_column(name, justify="left" if name in ("configuration", "master", "same outcome") else "right")
    for r in rows:
        if r.spark is None:
            continue
        st, sps = r.spark.engine_stats, r.spark_states_per_second
        start = st.get("session_start_seconds") or 0.0
        shuffle = st.get("shuffle_bytes")
        table.add_row(
            escape(r.config.name), f"{r.spark.distinct_states:,}", escape(str(st.get("master"))), str(st.get("partitions")),
            f"{start:.2f}" if start else "reused", str(st.get("levels")), f"{st.get('median_level_seconds')}",
            f"{r.spark.seconds:.2f}", "" if sps is None else f"{sps:,.0f}",
            "" if r.spark_ratio is None else f"{r.spark_ratio:.3f}",
            "" if shuffle is None or not r.spark.distinct_states else f"{shuffle / r.spark.distinct_states:.0f}",
            r.spark_agree,
        )
    Console(width=210).print(table)
