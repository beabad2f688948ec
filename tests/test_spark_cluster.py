"""The Spark engine on a real standalone cluster: a master and two one-core workers started
from the installed pyspark, bound to 127.0.0.1, and `kmc check --engine spark --master
spark://127.0.0.1:PORT` run against it in a subprocess (the test session's own Spark context
is a local one, and a Python process can hold only one SparkContext). The results must equal
the vector engine's, run in-process: distinct states, depth, verdicts, trace lengths.

The master is not local, so kmc ships its own sources to the executors as a zip
(spark_session.start, addPyFile); the probe test checks that the executors import kmc from
that zip and not from the driver's checkout. The cluster (the `cluster` fixture, in
tests/conftest.py, shared with tests/test_spark_model_factory.py) is stopped (process groups
killed) at the end of the test session, whatever happened.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import Cluster, build
from kmc import api as engines
from kmc.api import check as kmc_check
from kmc.api import Limits, SearchOptions

REPO = Path(__file__).resolve().parents[1]
RUN_SECONDS = 300


def _kmc(c: Cluster, argv: list[str], probe: bool = False) -> tuple[dict[str, Any], list[str] | None]:
    """`kmc check ... --engine spark --master <cluster> --partitions 2 --json --quiet` in a
    subprocess: the result, and with `probe`, first (in the same Spark application, which the
    check then reuses) the files the executors import kmc's Spark tasks from."""
    args = ["check", *argv, "--engine", "spark", "--master", c.url, "--partitions", "2", "--spark-threshold", "0",
            "--json", "--quiet"]
    cmd = ([sys.executable, "-c", _PROBE, c.url, *args] if probe else [str(Path(sys.executable).parent / "kmc"), *args])
    p = subprocess.run(cmd, env=c.env, cwd=REPO, capture_output=True, text=True, timeout=RUN_SECONDS)
    assert p.returncode in (0, 12), f"kmc {' '.join(args)} exited {p.returncode}:\n{p.stderr[-3000:]}\n{c.log_tail()}"
    out = p.stdout
    files = None
    if probe:
        first, _, out = out.partition("\n")
        files = json.loads(first)
    return json.loads(out), files


# A driver that starts the session itself (as kmc would: spark_session.start, which ships
# kmc's zip to a non-local master), asks the executors where they import kmc's Spark tasks
# from, then runs the kmc CLI in the same application (start() reuses the active session).
_PROBE = """
import json, sys
from kmc.engines.spark.session import start
from kmc.cli.main import main

sc = start(sys.argv[1], 2).session.sparkContext

def where(_):
    import kmc.engines.spark.tasks
    return kmc.engines.spark.tasks.__file__

print(json.dumps(sorted(set(sc.parallelize(range(4), 2).map(where).collect()))), flush=True)
sys.exit(main(sys.argv[2:]))
"""


def _figures(distinct: int, depth: int, verdicts: dict[str, tuple[bool, int | None]]) -> tuple[Any, ...]:
    return distinct, depth, sorted(verdicts.items())


def _check_equals_vector(c: Cluster, name: str, flags: list[str], settings: dict[str, Any],
                         probe: bool = False) -> tuple[dict[str, Any], list[str] | None]:
    """The cluster's run (with `--continue` among the flags, past violations) equals the vector
    engine's: the run's JSON, and with `probe`, the files the executors import kmc from."""
    got, files = _kmc(c, [name, *flags], probe)
    assert got["engine"] == "spark"
    assert got["engine_stats"]["master"] == c.url and got["engine_stats"]["partitions"] == 2
    model, invariants = build(name, **settings)
    vector = kmc_check(model, invariants, engine="vector", limits=Limits(),
                       search=SearchOptions(keep_going="--continue" in flags))
    expected = _figures(vector.distinct_states, vector.depth,
                        {n: (v.holds, None if v.trace is None else v.trace.length) for n, v in vector.invariants.items()})
    spark = _figures(got["distinct_states"], got["depth"],
                     {n: (v["holds"], v["trace_length"]) for n, v in got["invariants"].items()})
    assert spark == expected
    return got, files


@pytest.mark.slow  # 47 s under load: the probe test below runs fetch hw on the cluster the same way
def test_kmc_check_on_the_cluster_equals_vector(cluster: Cluster) -> None:
    """replication hw: 1,294 states, weak-isr broken in 8 steps (the vector engine, in-process;
    TLC's figures too, tests/reference/tlc-replication.md, table B)."""
    _check_equals_vector(cluster, "replication", ["--mode", "hw"], {"mode": "hw"})


def test_executors_import_kmc_from_the_shipped_zip(cluster: Cluster) -> None:
    """A non-local master gets kmc's sources through addPyFile: the executors' sys.path has the
    zip ahead of the driver's editable install, so they import kmc from it. Then fetch hw runs
    in that application (4,515 states, no-log-divergence broken in 9 steps, as the vector engine:
    figures the test recomputes in-process, not literals it asserts)."""
    _, files = _check_equals_vector(cluster, "fetch", ["--mode", "hw"], {"mode": "hw"}, probe=True)
    assert files and all("kmc.zip" in f for f in files), files


def _user_model_dir(tmp_path: Path) -> Path:
    """The two-phase commit example copied outside the repository: a user's model files."""
    out = tmp_path / "my_protocol"
    out.mkdir()
    for name in ("model.py", "invariants.py"):
        (out / name).write_text((REPO / "examples" / "two_phase_commit" / name).read_text())
    return out


def test_a_model_file_outside_kmc_runs_on_the_cluster(cluster: Cluster, tmp_path: Path) -> None:
    """`kmc check /elsewhere/model.py --engine spark` against the cluster: its files are
    shipped to the executors; 1,568 states with 4 RMs, as TLC (tests/reference/tlc-two-phase.md),
    and the same verdicts and trace lengths as the vector engine (one run, with --continue)."""
    model_file = str(_user_model_dir(tmp_path) / "model.py")
    got, _ = _check_equals_vector(cluster, model_file, ["--rms", "4", "--continue"], {"rms": 4})
    assert got["distinct_states"] == 1568


def test_a_model_file_outside_kmc_runs_on_local_spark(spark_session: Any, tmp_path: Path) -> None:
    """The same files on the test session's local[2]: equal to the vector engine."""
    from kmc import registry
    from kmc.engines.spark.engine import SparkOptions

    model, invariants = registry.build(str(_user_model_dir(tmp_path) / "model.py"), rms=4)
    search = SearchOptions(keep_going=True)
    spark = kmc_check(model, invariants, engine="spark", search=search,
                      options=SparkOptions(master="local[2]", partitions=2, threshold=0))
    vector = kmc_check(model, invariants, engine="vector", search=search)
    assert spark.distinct_states == vector.distinct_states == 1568
    assert {n: (v.holds, v.trace and [s.state for s in v.trace.steps]) for n, v in spark.invariants.items()} == \
           {n: (v.holds, v.trace and [s.state for s in v.trace.steps]) for n, v in vector.invariants.items()}
