"""The Spark engine on a real standalone cluster: a master and two one-core workers started
from the installed pyspark, bound to 127.0.0.1, and `kmc check --engine spark --master
spark://127.0.0.1:PORT` run against it in a subprocess (the test session's own Spark context
is a local one, and a Python process can hold only one SparkContext). The results must equal
the vector engine's, run in-process: distinct states, depth, verdicts, trace lengths.

The master is not local, so kmc ships its own sources to the executors as a zip
(spark_session.start, addPyFile); the probe test checks that the executors import kmc from
that zip and not from the driver's checkout. The cluster is stopped (process groups killed)
at the end of the module, whatever happened.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import build
from kmc.engines import run as engines
from kmc.engines.run import check as kmc_check
from kmc.engines.search import Limits
from kmc.engines.spark.session import _LOG4J2

REPO = Path(__file__).resolve().parents[1]
READY_SECONDS = 90  # a cold JVM start on a loaded 2-core machine takes 5-20 s per process
RUN_SECONDS = 300


@dataclass
class Cluster:
    url: str  # spark://127.0.0.1:PORT
    env: dict[str, str]  # the environment a driver of this cluster runs with
    processes: list[subprocess.Popen[bytes]]
    logs: Path

    def log_tail(self) -> str:
        return "\n".join(f"--- {f.name}\n" + "\n".join(f.read_text(errors="replace").splitlines()[-20:])
                         for f in sorted(self.logs.glob("*.log")))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through an http_proxy


def _alive_workers(webui_port: int) -> int:
    """ALIVE workers in the master's status (its web UI's JSON)."""
    try:
        with _DIRECT.open(f"http://127.0.0.1:{webui_port}/json/", timeout=2) as r:
            status = json.load(r)
    except (OSError, ValueError):
        return 0
    return sum(1 for w in status.get("workers", []) if w.get("state") == "ALIVE")


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    """Workers first (each takes its executors and their Python workers with it: they are in
    its process group), then the master; SIGKILL for whatever outlives SIGTERM by 15 s."""
    for p in reversed(processes):
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 15
    for p in reversed(processes):
        try:
            p.wait(max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(p.pid, signal.SIGKILL)  # the group may outlive its leader
        except ProcessLookupError:
            pass
        p.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    home = _spark_home()
    base = tmp_path_factory.mktemp("spark-cluster")
    conf_dir, work_dir, logs = base / "conf", base / "work", base / "logs"
    for d in (conf_dir, work_dir, logs):
        d.mkdir()
    (conf_dir / "log4j2.properties").write_text(_LOG4J2)
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_CONF_DIR": str(conf_dir),
           "SPARK_WORKER_DIR": str(work_dir), "PYSPARK_PYTHON": sys.executable,
           "PYSPARK_DRIVER_PYTHON": sys.executable, "PYTHONHASHSEED": "0"}
    spark_class = str(home / "bin" / "spark-class")
    port, webui = _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    commands = [
        ("master", [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(port), "--webui-port", str(webui)]),
        *[(f"worker{k}", [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                          "--cores", "1", "--memory", "1g", "--webui-port", str(_free_port()),
                          "--work-dir", str(work_dir)]) for k in (1, 2)],
    ]
    processes: list[subprocess.Popen[bytes]] = []
    c = Cluster(url, env, processes, logs)
    try:
        for name, argv in commands:
            with open(logs / f"{name}.log", "wb") as log:
                processes.append(subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                                                  stdin=subprocess.DEVNULL, start_new_session=True))
        deadline = time.monotonic() + READY_SECONDS
        while _alive_workers(webui) < 2:
            dead = [name for (name, _), p in zip(commands, processes) if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                pytest.fail(f"the loopback cluster did not come up ({', '.join(dead) or 'timeout'}):\n{c.log_tail()}")
            time.sleep(0.5)
        yield c
    finally:
        _stop(processes)


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
                         probe: bool = False) -> list[str] | None:
    got, files = _kmc(c, [name, *flags], probe)
    assert got["engine"] == "spark"
    assert got["engine_stats"]["master"] == c.url and got["engine_stats"]["partitions"] == 2
    model, invariants = build(name, **settings)
    vector = kmc_check(model, invariants, engine="vector", limits=Limits())
    expected = _figures(vector.distinct_states, vector.depth,
                        {n: (v.holds, None if v.trace is None else v.trace.length) for n, v in vector.invariants.items()})
    spark = _figures(got["distinct_states"], got["depth"],
                     {n: (v["holds"], v["trace_length"]) for n, v in got["invariants"].items()})
    assert spark == expected
    return files


def test_kmc_check_on_the_cluster_equals_vector(cluster: Cluster) -> None:
    """replication hw: 1,294 states, weak-isr broken in 8 steps (the vector engine, in-process;
    TLC's figures too, tests/reference/tlc-replication.md, table B)."""
    _check_equals_vector(cluster, "replication", ["--mode", "hw"], {"mode": "hw"})


def test_executors_import_kmc_from_the_shipped_zip(cluster: Cluster) -> None:
    """A non-local master gets kmc's sources through addPyFile: the executors' sys.path has the
    zip ahead of the driver's editable install, so they import kmc from it. Then fetch hw runs
    in that application (4,515 states, no-log-divergence broken in 9 steps, as the vector engine:
    figures the test recomputes in-process, not literals it asserts)."""
    files = _check_equals_vector(cluster, "fetch", ["--mode", "hw"], {"mode": "hw"}, probe=True)
    assert files and all("kmc.zip" in f for f in files), files
