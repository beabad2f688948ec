"""The Spark engine's options on `check` and `compare`: where Spark runs, how the state space
is partitioned, and where completed levels are kept for --resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kmc.engines.spark.engine import DEFAULT_THRESHOLD, SparkOptions
from kmc.engines.spark.session import DEFAULT_MASTER, check_master, parse_conf
from kmc.errors import BadInput


def spark_options() -> list[Any]:
    return [
        click.option("--master", default=None, metavar="URL",
                     help=f"Spark master for --engine spark (default {DEFAULT_MASTER}: embedded, needs only Java 17; "
                          "spark://HOST:PORT, yarn, k8s://... for a cluster)"),
        click.option("--partitions", type=click.IntRange(1, None), default=None, metavar="N",
                     help="partitions of the state space for --engine spark (default: Spark's default parallelism, "
                          "the cores of a local master)"),
        click.option("--conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
                     help="a Spark setting for --engine spark (repeatable), e.g. spark.executor.memory=8g"),
        click.option("--checkpoint-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                     metavar="DIR", help="--engine spark: write each completed level to DIR (Parquet), for --resume"),
        click.option("--spark-threshold", type=click.IntRange(0, None), default=None, metavar="N",
                     help=f"--engine spark: run levels in-process (vector engine) until N states are known, then on "
                          f"Spark (default {DEFAULT_THRESHOLD:,}; 0: every level on Spark; with --checkpoint-dir, 0)"),
        click.option("--resume", is_flag=True,
                     help="--engine spark: continue the run kept in --checkpoint-dir (after its driver died)"),
    ]


def take(engine: str, kw: dict[str, Any], *, one_run: bool = True) -> SparkOptions | None:
    """Remove the Spark flags from a command's keyword arguments (the rest are the model's
    settings) and give the options they make, or None for the other engines (which take none).
    `one_run`: the command runs one check, so --checkpoint-dir and --resume make sense."""
    master, partitions = kw.pop("master", None), kw.pop("partitions", None)
    spark_conf, threshold = kw.pop("spark_conf", ()), kw.pop("spark_threshold", None)
    checkpoint_dir, resume = kw.pop("checkpoint_dir", None), kw.pop("resume", False)
    if not one_run and (checkpoint_dir is not None or resume):
        raise BadInput("--checkpoint-dir and --resume are for one run: use them with kmc check")
    given = [flag for flag, value in [("--master", master), ("--partitions", partitions), ("--conf", spark_conf),
                                      ("--checkpoint-dir", checkpoint_dir), ("--resume", resume),
                                      ("--spark-threshold", threshold is not None)] if value]
    if engine != "spark":
        if given:
            raise BadInput(f"{', '.join(given)}: only for --engine spark (the engine is {engine})")
        return None
    if resume and checkpoint_dir is None:
        raise BadInput("--resume needs --checkpoint-dir DIR, the directory of the run to continue")
    if threshold and checkpoint_dir is not None:
        raise BadInput("--spark-threshold: a checkpointed run keeps every level on Spark (it must be 0 or absent "
                       "with --checkpoint-dir)")
    if threshold is None:
        threshold = 0 if checkpoint_dir is not None else DEFAULT_THRESHOLD
    return SparkOptions(check_master(master or DEFAULT_MASTER), partitions, tuple(parse_conf(spark_conf).items()),
                        checkpoint_dir, resume, threshold)
