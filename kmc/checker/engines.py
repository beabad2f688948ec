"""The engines a run can use, by name. Each takes (model, invariants, limits, progress); the
Spark engine also takes its SparkOptions."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from kmc.checker import bfs, bmc, dfs, spark, vector
from kmc.checker.result import CheckResult
from kmc.checker.search import Limits, ProgressHook
from kmc.errors import BadInput
from kmc.model.core import Invariant, Model

Engine = Callable[..., CheckResult]

ENGINES: dict[str, tuple[Engine, str]] = {
    "vector": (vector.check, "breadth-first, a level at a time over numpy arrays: same results as scalar, fast"),
    "scalar": (bfs.check, "breadth-first, one state at a time: the reference; shortest counterexamples"),
    "dfs": (dfs.check, "depth-first, one state at a time: for deep, narrow models; traces not shortest"),
    "spark": (spark.check, "breadth-first on Spark executors (--master, default local[*]): same results as vector"),
    "z3": (bmc.check, "bounded model checking with z3 to --depth K steps: shortest traces, no state counts"),
}


def run(
    engine: str,
    model: Model,
    invariants: Sequence[Invariant],
    limits: Limits = Limits(),
    progress: ProgressHook | None = None,
    *,
    spark_options: spark.SparkOptions | None = None,
) -> CheckResult:
    if engine not in ENGINES:
        raise BadInput(f"unknown engine {engine!r}; allowed: {', '.join(ENGINES)}")
    extra: dict[str, Any] = {"options": spark_options} if engine == "spark" else {}
    return ENGINES[engine][0](model, invariants, limits, progress, **extra)
