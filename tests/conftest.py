"""Shared fixtures: models by name, a CLI runner that returns (exit code, stdout, stderr), the
test session's one local Spark session, and a loopback standalone Spark cluster."""

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

from kmc import registry
from kmc.model.core import Invariant, Model
from kmc.registry import select
from kmc.traces.replay import replay


# CI's slow step is bounded (.ci/run): with KMC_SLOW_BUDGET=SECONDS, a slow test that would
# start after that many seconds of the test session is skipped, and says so in the summary.
# `make test-slow` sets no budget and runs every slow test.
_SESSION_START = time.monotonic()



def terminal_signals() -> None:
    """For `subprocess.Popen(preexec_fn=...)`: in the child, before it runs, SIGINT and SIGTERM
    handled by default and not blocked, as a terminal's process gets them, whatever this test
    process (an xdist worker, after other tests) has done with them: a child inherits ignored
    and blocked signals, and a kmc that ignores SIGINT never stops at Ctrl-C."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})

def pytest_runtest_setup(item: pytest.Item) -> None:
    budget = os.environ.get("KMC_SLOW_BUDGET")
    if budget and item.get_closest_marker("slow") is not None \
            and time.monotonic() - _SESSION_START > float(budget):
        pytest.skip(f"the slow suite's budget of {budget} s (KMC_SLOW_BUDGET) is spent; "
                    "`make test-slow` runs every slow test")


# `make test` runs the suite on two processes (pytest-xdist, `--dist loadgroup`): the tests that
# use a session-wide JVM or browser go to one process each, so the suite still starts one Spark
# session, one loopback cluster and one Chromium
_SHARED = {"spark_session": "spark", "cluster": "spark", "chromium": "chromium"}


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        groups = {_SHARED[f] for f in getattr(item, "fixturenames", ()) if f in _SHARED}
        if groups:
            item.add_marker(pytest.mark.xdist_group(min(groups)))


def build(name: str, **settings: Any) -> tuple[Model, list[Invariant]]:
    return registry.build(name, **settings)


def violated_lengths_replayed(result: Any, invariants: list[Invariant]) -> dict[str, int]:
    """The trace length of each violated invariant of a result, every trace replayed first."""
    for name, verdict in result.invariants.items():
        if verdict.trace is not None:
            replay(verdict.trace, *select(invariants, [name]))
    return {n: v.trace.length for n, v in result.invariants.items() if v.holds is False and v.trace is not None}


def states_within(model: Model, steps: int) -> set[tuple[int, ...]]:
    """Every state reachable in at most `steps` steps, by a plain BFS independent of the engines:
    tests use it to confirm that a counterexample is shortest."""
    from kmc.semantics.scalar import ScalarModel

    sm = ScalarModel(model)
    seen = set(model.initial_states())
    frontier = list(seen)
    for _ in range(steps):
        # dict.fromkeys: each new state once, however many parents reach it
        frontier = list(dict.fromkeys(n for s in frontier for _, n in sm.successors(s) if n not in seen))
        seen.update(frontier)
    return seen


@pytest.fixture
def run_kmc(capsys: pytest.CaptureFixture[str]):
    from kmc.cli.main import main

    def run(*argv: str) -> tuple[int, str, str]:
        rc = main(list(argv))
        out, err = capsys.readouterr()
        return rc, out, err

    return run


@pytest.fixture(scope="session")
def spark_session():
    """One Spark session for every Spark test: 2 local cores, quiet logs, the settings kmc
    itself uses. `local[2,4]` is local[2] allowing 4 attempts per task, so that the
    failed-task test can watch Spark retry (local masters default to a single attempt)."""
    from kmc.engines.spark.session import start

    session = start("local[2,4]", partitions=2).session
    yield session
    session.stop()


@pytest.fixture(scope="session")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium, driven over its DevTools pipe (tests/chromium_pipe.py), for every
    browser test: tests/test_trace_page_browser.py, tests/test_explore_browser.py and
    tests/test_trace_formats.py. Each test opens its own page; skipped without Debian's chromium
    (failed under CI=true)."""
    from chromium_pipe import Browser, chromium_or_skip

    browser = Browser(chromium_or_skip(), tmp_path_factory.mktemp("chromium-profile"))
    yield browser
    browser.close()


# -- a loopback standalone cluster (tests/test_spark_cluster.py, tests/test_spark_model_factory.py) --

READY_SECONDS = 90  # a cold JVM start on a loaded 2-core machine takes 5-20 s per process


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


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A master and two one-core workers started from the installed pyspark, bound to
    127.0.0.1; one for the test session (a cold start takes 25 to 45 s on a loaded 2-core
    machine), started by the first test that asks for it and stopped (process groups killed)
    at the end of the session, whatever happened."""
    from kmc.engines.spark.session import _LOG4J2

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
