"""The Spark engine against the vector engine: the same distinct states, depth, verdicts,
report counts and counterexample traces, state for state, on every test configuration; a
task that fails on purpose is retried with no change in the result."""

from __future__ import annotations

import importlib.util
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from conftest import build
from kmc import api as engines
from kmc.api import check as kmc_check
from kmc.engines.result import CheckResult
from kmc.api import Limits, SearchOptions
from kmc.engines.spark.engine import SparkOptions
from kmc.engines.spark.tasks import Fault

LOCAL = SparkOptions(master="local[2]", partitions=2, threshold=0)  # every level on Spark


def outcome(r: CheckResult) -> tuple[Any, ...]:
    """Everything a run decides, traces state by state."""
    verdicts = {
        name: (v.holds, v.states,
               None if v.trace is None else [(s.instance.label if s.instance else None, s.state) for s in v.trace.steps])
        for name, v in r.invariants.items()
    }
    return r.distinct_states, r.generated_states, r.depth, r.complete, r.stopped_by, verdicts


SLOW = pytest.mark.slow
# every model and every kind of limit and search in the default suite; the longer runs of the
# same paths (whole replication modes, fetch's epoch modes, kip890, kraft's kip966, 10 to 40 s
# each) under `slow`
CONFIGS = [
    *[pytest.param("replication", {"mode": m}, dict(limits=Limits()), marks=SLOW)
      for m in ["hw", "kip101", "kip279", "kip320-first-try", "kip320"]],
    ("replication", {"mode": "hw"}, dict(limits=Limits(), search=SearchOptions(keep_going=True))),
    ("replication", {"mode": "kip320"}, dict(limits=Limits(), search=SearchOptions(symmetry=True))),
    ("replication", {"mode": "kip101"}, dict(limits=Limits(max_states=2000))),
    ("replication", {"mode": "kip279"}, dict(limits=Limits(max_depth=7))),
    ("fetch", {"mode": "hw"}, dict(limits=Limits())),
    *[pytest.param("fetch", {"mode": m}, dict(limits=Limits()), marks=SLOW) for m in ["epoch", "epoch-fenced"]],
    pytest.param("fetch", {"mode": "hw", "acks": "1"}, dict(limits=Limits(), search=SearchOptions(keep_going=True)),
                 marks=SLOW),
    *[("idempotence", {"mode": m}, dict(limits=Limits(), search=SearchOptions(keep_going=True))) for m in ["no-idempotence", "idempotence"]],
    ("transactions", {"mode": "kip98"}, dict(limits=Limits())),
    pytest.param("transactions", {"mode": "kip890"}, dict(limits=Limits()), marks=SLOW),
    # kraft on the last-replica-standing bounds: v3.5 finds the loss; kip966 (ELR) cut at 20,000 states
    *[pytest.param("kraft", {"mode": m, "brokers": 2, "replication_factor": 2, "init_isr_size": 2,
                             "min_insync_replicas": 2, "fence_broker_limit": 1, "unclean_shutdown_limit": 1}, limits,
                   marks=marks)
      for m, limits, marks in [("v3.5", dict(limits=Limits()), ()), ("kip966", dict(limits=Limits(max_states=20_000)), SLOW)]],
]


def _config_id(i: int, config: Any) -> str:
    name, settings, _ = config.values if hasattr(config, "values") else config
    return f"{name}-{'-'.join(map(str, settings.values()))}-{i}"


@pytest.mark.parametrize("name,settings,limits", CONFIGS, ids=[_config_id(i, c) for i, c in enumerate(CONFIGS)])
def test_spark_equals_vector(spark_session: Any, name: str, settings: dict[str, Any], limits: dict[str, Any]) -> None:
    model, invariants = build(name, **settings)
    vector = kmc_check(model, invariants, engine="vector", **limits)
    spark = kmc_check(model, invariants, engine="spark", **limits, options=LOCAL)
    assert outcome(spark) == outcome(vector)
    assert spark.engine_stats["partitions"] == 2
    search = limits.get("search", SearchOptions())
    native = importlib.util.find_spec("llvmlite") is not None and not search.symmetry
    assert spark.engine_stats["kernels"] == ("compiled" if native else "numpy")  # the executors ran the kernels


@pytest.mark.parametrize("park", [True, False], ids=["parts-as-files", "parts-in-block-manager"])
def test_a_failed_task_is_retried_with_the_same_result(spark_session: Any, tmp_path: Path, park: bool) -> None:
    model, invariants = build("fetch", mode="hw")
    marker = tmp_path / "failed-once"
    faulty = SparkOptions(master="local[2]", partitions=2, threshold=0, park=park,
                          fault=Fault(level=4, partition=1, marker=str(marker)))
    # the first 6 levels: the fault is at level 4, and each level more is a few Spark jobs more
    limits, search = Limits(max_depth=6), SearchOptions(keep_going=True)
    spark = kmc_check(model, invariants, engine="spark", limits=limits, search=search, options=faulty)
    assert marker.exists()  # the task did fail once
    assert outcome(spark) == outcome(kmc_check(model, invariants, engine="vector", limits=limits, search=search))
    assert spark.engine_stats["parts"] == ("files" if park else "block manager")


@pytest.mark.parametrize("name,settings,limits", [
    pytest.param("replication", {"mode": "kip320"}, dict(limits=Limits(), search=SearchOptions(symmetry=True)),
                 marks=SLOW),  # 18 s under load; the failed-task test takes this path too
    ("replication", {"mode": "kip101"}, dict(limits=Limits(max_states=2000))),
    ("transactions", {"mode": "kip98"}, dict(limits=Limits())),
])
def test_parts_in_the_block_manager_give_the_same_result(spark_session: Any, name: str, settings: dict[str, Any],
                                                        limits: dict[str, Any]) -> None:
    """The path a cluster master takes (owner partitions pickled in Spark's block manager),
    forced on local[2]: the same outcome as the vector engine's."""
    model, invariants = build(name, **settings)
    vector = kmc_check(model, invariants, engine="vector", **limits)
    held = SparkOptions(master="local[2]", partitions=2, threshold=0, park=False)
    assert outcome(kmc_check(model, invariants, engine="spark", **limits, options=held)) == outcome(vector)


def test_a_local_run_parks_its_parts_as_files_and_removes_them(spark_session: Any, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    model, invariants = build("replication", mode="kip320")
    spark = kmc_check(model, invariants, engine="spark", limits=Limits(max_depth=6), options=LOCAL)  # 6 levels of 18
    assert spark.engine_stats["parts"] == "files"
    assert list(tmp_path.glob("kmc-spark-parts-*")) == []  # the run's directory of parts is gone


def test_cli_runs_the_spark_engine(spark_session: Any, run_kmc: Any) -> None:
    rc, out, _ = run_kmc("check", "replication", "--mode", "hw", "--engine", "spark", "--master", "local[2]",
                         "--partitions", "2", "--spark-threshold", "0", "--json", "--quiet")
    assert rc == 12
    got = json.loads(out)
    assert (got["engine"], got["distinct_states"], got["invariants"]["weak-isr"]["trace_length"]) == ("spark", 1294, 8)
    # TLC on the spec stops at WeakIsr in 8 steps after 1,294 distinct states too
    # (tests/reference/tlc-replication.md, table B); tests/test_replication_verdicts.py checks the 8 steps
    assert got["engine_stats"]["partitions"] == 2


@pytest.mark.parametrize("name,settings,limits", [
    ("fetch", {"mode": "hw"}, dict(limits=Limits(), search=SearchOptions(keep_going=True))),
    ("replication", {"mode": "kip101"}, dict(limits=Limits())),
    ("replication", {"mode": "kip320"}, dict(limits=Limits(), search=SearchOptions(symmetry=True))),  # canonical keys
    pytest.param("transactions", {"mode": "kip98"}, dict(limits=Limits(), search=SearchOptions(keep_going=True)),
                 marks=SLOW),  # 14 s under load
])
def test_spark_takes_over_from_the_vector_engine_mid_run(spark_session: Any, name: str, settings: dict[str, Any],
                                                         limits: dict[str, Any]) -> None:
    """Below --spark-threshold levels run in-process; the run goes on in Spark from there."""
    model, invariants = build(name, **settings)
    vector = kmc_check(model, invariants, engine="vector", **limits)
    handoff = SparkOptions(master="local[2]", partitions=2, threshold=1000)
    spark = kmc_check(model, invariants, engine="spark", **limits, options=handoff)
    assert outcome(spark) == outcome(vector)
    assert spark.engine_stats["in_process_levels"] > 1 and spark.engine_stats["levels"] > 1


def test_a_small_run_never_starts_spark(run_kmc: Any) -> None:
    rc, out, _ = run_kmc("check", "idempotence", "--engine", "spark", "--quiet")
    assert rc == 0 and "Spark was not started" in out


@pytest.mark.parametrize("argv,message", [
    (["--master", "local[2]"], "--master: only for --engine spark"),
    (["--engine", "spark", "--resume"], "--resume needs --checkpoint-dir"),
    (["--engine", "spark", "--conf", "spark.executor.memory"], "expected key=value"),
    (["--engine", "spark", "--partitions", "0"], "--partitions"),
    (["--engine", "spark", "--checkpoint-dir", "/tmp/x", "--spark-threshold", "5"], "a checkpointed run keeps"),
])
def test_bad_spark_flags(run_kmc: Any, argv: list[str], message: str) -> None:
    rc, out, err = run_kmc("check", "replication", *argv)
    assert rc == 2 and out == "" and message in err


class Py4JJavaError(Exception):
    """Stands for py4j's, raised by a call the JVM died in: reading its text needs the JVM."""

    def __str__(self) -> str:
        raise ConnectionRefusedError(111, "Connection refused")


def _failed_spark_run(run_kmc: Any, monkeypatch: pytest.MonkeyPatch, error: Exception) -> str:
    """The one line `kmc check --engine spark` prints when its run raises `error` (exit 1, no output)."""
    from kmc.engines.spark import engine as spark_engine

    def fail(self: object) -> None:
        raise error

    monkeypatch.setattr(spark_engine._Run, "__init__", lambda self, *a: None)
    monkeypatch.setattr(spark_engine._Run, "run", fail)
    rc, out, err = run_kmc("check", "replication", "--engine", "spark", "--no-properties")
    assert rc == 1 and out == ""
    [line] = err.strip().splitlines()
    return line


@pytest.mark.parametrize("error", [ConnectionRefusedError(111, "Connection refused"), Py4JJavaError()],
                         ids=["refused", "java-error-of-a-dead-jvm"])
def test_a_dead_jvm_is_one_line_with_what_to_do(run_kmc, monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    """The JVM of a local master dies on java.lang.OutOfMemoryError (the executors share its
    heap); py4j then sees a refused connection, or a Java error it cannot read: kmc says what
    usually causes it, exit 1."""
    line = _failed_spark_run(run_kmc, monkeypatch, error)
    assert line.startswith(f"kmc: error: the Spark JVM stopped answering ({type(error).__name__})")
    assert "spark.driver.memory" in line


class _WorkerCrash(Exception):
    """Stands for py4j's Py4JJavaError of a job whose Python worker died (as Spark 4 words it)."""


def test_a_dead_python_worker_is_one_line_with_what_to_do(run_kmc, monkeypatch: pytest.MonkeyPatch) -> None:
    """An executor's Python worker killed for memory (seen on kraft with 2 partitions) fails the
    job: kmc says so in one line and names --partitions, exit 1, no traceback."""
    crash = type("Py4JJavaError", (_WorkerCrash,), {})(
        "An error occurred while calling o1.collectAndServe.\n: org.apache.spark.SparkException: Job aborted: "
        "org.apache.spark.SparkException: Python worker exited unexpectedly (crashed).")
    line = _failed_spark_run(run_kmc, monkeypatch, crash)
    assert line.startswith("kmc: error: a Spark executor's Python worker died") and "--partitions" in line


def test_python_workers_talk_to_the_jvm_over_unix_sockets(spark_session: Any) -> None:
    """Over TCP each task's input reached its Python worker ~40 ms late (docs/spark.md, "Level
    overhead"); --conf can still turn it off."""
    from kmc.engines.spark.session import settings

    key = "spark.python.unix.domain.socket.enabled"
    assert spark_session.sparkContext.getConf().get(key) == "true"
    assert settings("local[2]", 2, {key: "false"})[key] == "false"


def test_the_jvms_compile_with_c1_only(spark_session: Any) -> None:
    """C2's compiling cost each JVM ~10 s of CPU that the Python workers needed (docs/spark.md,
    "The JVMs' JIT compiler"); on a 2-core machine that decided how far a second worker helped."""
    from kmc.engines.spark.session import settings

    for side in ("driver", "executor"):
        opts = spark_session.sparkContext.getConf().get(f"spark.{side}.extraJavaOptions")
        assert "-XX:TieredStopAtLevel=1" in opts.split() and "-Dlog4j2.configurationFile=" in opts
    mine = "-Xss4m"
    assert settings("local[2]", 2, {"spark.executor.extraJavaOptions": mine})["spark.executor.extraJavaOptions"] == mine
