"""Long runs: --time-limit and --memory-limit end a run cleanly with partial verdicts in every
engine; Ctrl-C prints the statistics so far and exits 130 with no output file written."""

from __future__ import annotations

import dataclasses
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kmc import registry
from kmc import api as engines
from kmc.api import check as kmc_check
from kmc.api import Limits, SearchOptions
from kmc.cli.progress import ProgressPrinter, remaining_states
from tests.conftest import terminal_signals

BIG = ["fetch", "--mode", "epoch", "--replicas", "3"]  # millions of states: no engine finishes it in seconds


@pytest.mark.parametrize("engine", list(engines.ENGINES))
def test_time_limit_ends_every_engine_cleanly(engine: str, request: pytest.FixtureRequest) -> None:
    if engine == "spark":
        request.getfixturevalue("spark_session")  # the shared session, not one of its own
    model, invariants = registry.build("fetch", mode="epoch", replicas=3)
    started = time.perf_counter()
    result = kmc_check(model, invariants, engine=engine, limits=Limits(time_limit=0.3), search=SearchOptions(keep_going=True))
    assert time.perf_counter() - started < 30
    assert result.stopped_by == "time-limit" and result.complete is False
    safety = [v for v in result.invariants.values() if not v.report]
    assert all(v.holds is None for v in safety)  # partial: nothing claimed to hold


@pytest.mark.parametrize("engine", list(engines.ENGINES))
def test_memory_limit_ends_every_engine_cleanly_or_spills(engine: str, request: pytest.FixtureRequest) -> None:
    if engine == "spark":
        request.getfixturevalue("spark_session")
    model, invariants = registry.build("replication", mode="kip320")
    result = kmc_check(model, invariants, engine=engine, limits=Limits(memory_limit=1))  # already above one byte
    if engines.ENGINES[engine].capabilities.spills:  # the vector and compiled engines go on on disk
        assert result.complete and result.distinct_states == 5973 and result.engine_stats["spill"]["spills"] > 0
        return  # 5,973: TLC's count (tests/test_replication_verdicts.py)
    assert result.stopped_by == "memory-limit" and result.complete is False
    assert all(v.holds is None for v in result.invariants.values())


@pytest.mark.parametrize("engine", ["vector", "compiled"])
def test_a_stopping_run_says_it_checks_the_states_it_found(engine: str, capsys: pytest.CaptureFixture) -> None:
    """Past --time-limit the vector engines check the states found and not expanded: the
    progress reports how many are left, fewer each time, and the printer shows it."""
    model, invariants = registry.build(*BIG[:1], mode="epoch", replicas=3)
    reports: list = []
    result = kmc_check(model, invariants, engine=engine, limits=Limits(time_limit=0.3),
                       search=SearchOptions(keep_going=True), progress=reports.append)
    assert result.stopped_by == "time-limit"
    stopping = [p for p in reports if p.to_check]
    left = [p.to_check for p in stopping]
    assert left and left == sorted(left, reverse=True) and left[0] <= result.distinct_states
    printer = ProgressPrinter("fetch epoch")
    printer(dataclasses.replace(stopping[0], seconds=5.0))
    printer(dataclasses.replace(stopping[-1], seconds=5.1))  # within two seconds of the line before: not shown
    err = capsys.readouterr().err
    assert err == (f"fetch epoch: stopping: checking the states found and not expanded, {left[0]:,} left, "
                   f"{err.rsplit(', ', 1)[1]}")
    assert printer.latest is None  # a stopping report is not a level's


def test_time_limit_on_the_command_line(run_kmc, tmp_path: Path) -> None:
    rc, out, _ = run_kmc("check", *BIG, "--time-limit", "0.3", "--quiet", "--json", "--itf-dir", str(tmp_path / "t"))
    data = json.loads(out)
    assert rc == 4 and data["complete"] is False and data["stopped_by"] == "time-limit"
    rc, out, _ = run_kmc("check", *BIG, "--time-limit", "0.3", "--quiet")
    assert "Stopped by --time-limit: the search is incomplete" in out and "not decided" in out


def test_limits_are_validated(run_kmc) -> None:
    for argv, message in [(["--time-limit", "0"], "'--time-limit'"), (["--memory-limit", "5X"], "'5X' is not a size")]:
        rc, _, err = run_kmc("check", "fetch", *argv)
        assert rc == 2 and message in err


def test_ctrl_c_prints_statistics_exits_130_and_writes_nothing(tmp_path: Path) -> None:
    itf_dir = tmp_path / "traces"
    argv = [sys.executable, "-m", "kmc.cli.main", "check", *BIG, "--engine", "scalar", "--continue",
            "--itf-dir", str(itf_dir)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={"PYTHONPATH": str(Path(__file__).resolve().parent.parent), "PATH": "/usr/bin:/bin"},
                            preexec_fn=terminal_signals)
    time.sleep(2.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert out == ""
    assert "kmc: interrupted: fetch epoch, level " in err and "distinct states" in err
    assert "the search is incomplete" in err
    assert not itf_dir.exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no temporary file either


def test_sigterm_stops_a_spilling_run_as_ctrl_c_does_and_its_spill_goes(tmp_path: Path) -> None:
    """CI's `timeout` and `kill` send SIGTERM: the run stops as at Ctrl-C (exit 130, its
    statistics), and the levels it spilled past --memory-limit leave the disk with it."""
    spills = tmp_path / "tmp"
    spills.mkdir()
    argv = [sys.executable, "-m", "kmc.cli.main", "check", *BIG, "--engine", "vector", "--workers", "1",
            "--memory-limit", "1", "--continue"]
    env = {"PYTHONPATH": str(Path(__file__).resolve().parent.parent), "PATH": "/usr/bin:/bin", "TMPDIR": str(spills)}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env,
                            preexec_fn=terminal_signals)
    deadline = time.monotonic() + 60
    while not any(spills.glob("kmc-spill-*/*.npy")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert any(spills.glob("kmc-spill-*/*.npy")), "the run never spilled"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "kmc: interrupted: fetch epoch" in err  # a spill may come before the first level's report
    assert list(spills.iterdir()) == []


def _kept_depth(directory: Path) -> int:
    try:
        return int(json.loads((directory / "manifest.json").read_text())["depth"])
    except (OSError, ValueError, KeyError):
        return 0  # not there yet, or being replaced


def test_an_interrupted_checkpointed_run_says_where_it_resumes_from(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    argv = [sys.executable, "-m", "kmc.cli.main", "check", *BIG, "--engine", "vector", "--workers", "1",
            "--checkpoint-dir", str(kept)]
    env = {"PYTHONPATH": str(Path(__file__).resolve().parent.parent), "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env,
                            preexec_fn=terminal_signals)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None and _kept_depth(kept) < 3:
        time.sleep(0.1)  # past the first levels: their progress has been reported
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.rstrip().endswith(f"the search is incomplete, --resume goes on from the last level kept in {kept}")


def test_a_resumed_run_stopped_before_its_first_new_level_says_where_it_resumes_from(tmp_path: Path) -> None:
    """Resuming a large checkpoint takes minutes: a stop then still names the directory."""
    line = ProgressPrinter("kraft v3.5-avoid-lrs", quiet=True).interrupted(tmp_path)
    assert line.endswith(f"before the first level was done; --resume goes on from the last level kept in {tmp_path}")
    assert ProgressPrinter("kraft v3.5-avoid-lrs", quiet=True).interrupted().endswith("before the first level was done")


def test_eta_only_once_levels_shrink() -> None:
    assert remaining_states([1, 10, 100]) is None
    assert remaining_states([100, 50]) is None
    assert remaining_states([400, 200, 100]) == pytest.approx(100.0)  # 50 + 25 + ... = 100
    assert remaining_states([1000, 500, 400]) == pytest.approx(1600.0)  # ratio 0.8: 400 * 0.8 / 0.2


@pytest.mark.parametrize("engine", ["vector", "compiled"])
def test_a_level_under_way_is_reported_as_it_is_expanded(engine: str, capsys: pytest.CaptureFixture) -> None:
    """Within a level the vector engines report how much of it is expanded: more each time, the
    states found so far counted; off a terminal the printer shows such a line at most once a
    minute, and never takes it for a level's end."""
    model, invariants = registry.build("fetch", mode="epoch", replicas=3)
    reports: list = []
    kmc_check(model, invariants, engine=engine, limits=Limits(time_limit=2.0), progress=reports.append, workers=2)
    ends = {p.level: p for p in reports if not p.expanded and not p.to_check}
    under_way = [p for p in reports if p.expanded]
    levels = sorted({p.level for p in under_way if p.level in ends and p.level + 1 in ends})
    assert levels and max(sum(1 for p in under_way if p.level == level) for level in levels) > 1
    for level in levels:
        mine = [p for p in under_way if p.level == level]
        assert [p.expanded for p in mine] == sorted(p.expanded for p in mine)
        assert mine[-1].expanded <= ends[level].frontier
        assert all(ends[level].distinct_states <= p.distinct_states <= ends[level + 1].distinct_states for p in mine)
    printer = ProgressPrinter("fetch epoch")
    p = dataclasses.replace(under_way[0], seconds=5.0)
    printer(p)
    printer(dataclasses.replace(under_way[-1], seconds=50.0))  # within a minute of the line before: not shown
    err = capsys.readouterr().err
    share = f"{100 * p.expanded / p.frontier:.0f}"
    assert err == (f"fetch epoch: level {p.level + 1} under way, {share}% of level {p.level}'s {p.frontier:,} "
                   f"states expanded, {p.distinct_states:,} states, {p.rate:,.0f} states/s, {err.rsplit(', ', 1)[1]}")
    assert printer.latest is None and printer.sizes == []  # not a level's end
