"""The Spark engine: the vector engine's level step on Spark executors, the state space
partitioned by key owner (engine.py, the driver; docs/spark.md).

Its vocabulary:
- owner: the partition that holds a key's part of the visited set (keys are routed by hash);
- expand: a task that makes a level chunk's successors and routes them to their owners;
- own: a task that drops the keys its part has visited and keeps the new ones;
- seeded: a level the driver made in-process (the initial states, or levels below
  --spark-threshold) and handed to the executors;
- park: keep owner partitions as .npy files on the host between levels (parts.py);
- keep: an owner's visited part and its last level, carried from one level to the next;
- path rank: a state's smallest path as one number, the scalar engine's order (ranks.py).
"""

from __future__ import annotations

import importlib.util
from dataclasses import replace

from typing import Any, Mapping

from kmc.engines.interface import Capabilities, CheckJob, Engine, EngineOption, SimulateJob
from kmc.engines.result import CheckResult
from kmc.engines.spark.defaults import DEFAULT_MASTER, DEFAULT_THRESHOLD
from kmc.errors import BadInput


class SparkEngine(Engine):
    name = "spark"
    summary = "breadth-first on Spark executors (--master, default local[*]): same results as vector"
    capabilities = Capabilities(check=True, simulate=True, symmetry=True, checkpoints=True, shortest_traces=True,
                                coarse_levels=True)
    options = (
        EngineOption(flag="--master", dest="master", metavar="URL",
                     help=f"Spark master (default {DEFAULT_MASTER}: embedded, needs only Java 17; spark://HOST:PORT, yarn, "
                          "k8s://... for a cluster)"),
        EngineOption(flag="--partitions", dest="partitions", kind="int", minimum=1, metavar="N",
                     help="partitions of the state space (default: Spark's default parallelism, the cores of a "
                          "local master)"),
        EngineOption(flag="--conf", dest="spark_conf", kind="pairs", metavar="KEY=VALUE",
                     help="a Spark setting (repeatable), e.g. spark.executor.memory=8g"),
        EngineOption(flag="--spark-threshold", dest="spark_threshold", kind="int", minimum=0, metavar="N",
                     one_run=True,
                     help="run levels in-process (vector engine) until N states are known, then on Spark "
                          f"(default {DEFAULT_THRESHOLD:,}; 0: every level on Spark; with --checkpoint-dir, 0)"),
    )

    def configure(self, values: Mapping[str, Any], *, one_run: bool) -> Any:
        from kmc.engines.spark.engine import SparkOptions
        from kmc.engines.spark.session import NEEDS_PYSPARK, check_master, parse_conf

        if any(importlib.util.find_spec(name) is None for name in ("pyspark", "pyarrow")):
            raise BadInput(NEEDS_PYSPARK)

        return SparkOptions(check_master(values.get("master") or DEFAULT_MASTER), values.get("partitions"),
                            tuple(parse_conf(values.get("spark_conf") or ()).items()),
                            threshold=values.get("spark_threshold"))

    def check(self, job: CheckJob) -> CheckResult:
        from kmc.engines.spark import engine

        options = job.options or engine.SparkOptions()
        if job.checkpoint is not None:
            options = replace(options, checkpoint_dir=job.checkpoint.directory, resume=job.checkpoint.resume)
        return engine.check(job.model, job.invariants, job.limits, job.search, job.progress, options)

    def simulate(self, job: SimulateJob) -> CheckResult:
        from kmc.engines.simulation.on_spark import simulate

        if job.workers is not None:
            raise BadInput("--workers is for the vector engine; Spark spreads the walkers over --partitions")
        return simulate(job.model, job.invariants, job.walks, job.options or self.configure({}, one_run=False))

    def notes(self, result: CheckResult) -> list[str]:
        st = result.engine_stats
        if st.get("spark_levels") == 0:
            return [f"spark: every level ran in-process (the run stayed below --spark-threshold, "
                    f"{st['in_process_levels']} levels); Spark was not started"]
        if "partitions" not in st:
            return []
        median = st.get("median_level_seconds")
        resumed = f", resumed at level {st['resumed_at']}" if st.get("resumed_at") else ""
        return [f"spark: master {st['master']}, {st['partitions']} partitions, session start "
                f"{st['session_start_seconds']:.1f} s, {st['levels']} levels"
                + ("" if median is None else f" (median {median:.2f} s each)")
                + f", {st['shuffle_bytes'] / 2**20:,.1f} MiB shuffled{resumed}"
                + (", the model's compiled kernels in the executors" if st.get("kernels") == "compiled" else "")
                + (f"; the first {st['in_process_levels']} levels in-process (below --spark-threshold)"
                   if st.get("in_process_levels") else "")]


ENGINE = SparkEngine()
