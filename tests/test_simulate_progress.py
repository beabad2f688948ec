"""`kmc simulate`'s progress (issue 27, item 7): the distinct states it reports are exact (they
never exceed the model's reachable states and never go down), off a terminal it prints at most
one line every 10 seconds, and Ctrl-C prints one "interrupted" line.

10,131 is TLC's distinct state count for the replication spec in hw mode
(tests/reference/tlc-replication.md, table A)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kmc import registry
from kmc.cli.progress import WalkProgress
from kmc.engines.result import Progress
from kmc.engines.simulation.swarm import Swarm, Walks

HW_STATES = 10_131  # TLC, tests/reference/tlc-replication.md


def test_progress_counts_exact_distinct_states() -> None:
    model, _ = registry.build("replication", mode="hw")
    seen: list[int] = []
    swarm = Swarm(model, [], Walks(walkers=2_000, depth=40, walks=20_000), lambda p: seen.append(p.distinct_states))
    swarm.progress_seconds = 0.0  # a report every round
    swarm.walk()
    result = swarm.result()
    assert len(seen) >= 20
    # 2,000 walkers step 2,000 states a round: counted with duplicates, round 5 would pass 10,131
    assert all(n <= HW_STATES for n in seen)
    assert seen == sorted(seen)
    assert seen[-1] <= result.distinct_states <= HW_STATES


def _lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line]


def test_off_a_terminal_a_line_at_most_every_interval(capsys) -> None:
    ticks = iter([0.0, 1.0, 5.0, 10.5, 12.0, 20.0, 21.0, 30.0, 31.5])
    printer = WalkProgress("replication", every=10.0, clock=lambda: next(ticks))  # the first tick: at the start
    for k in range(1, 9):
        printer(Progress(k, 100 * k, 1000 * k, 5, float(k)))
    err = capsys.readouterr().err
    # lines at 10.5 (10.5 s after the start), 21.0 (10.5 after), 31.5 (10.5 after); not at 1, 5, 12, 20, 30
    assert _lines(err) == ["replication: round 3, 3,000 steps, 300 distinct states, 3 s",
                           "replication: round 6, 6,000 steps, 600 distinct states, 6 s",
                           "replication: round 8, 8,000 steps, 800 distinct states, 8 s"]


def test_the_interval_is_10_seconds_off_a_terminal() -> None:
    assert not sys.stderr.isatty()  # pytest captures it
    assert WalkProgress("x").every == 10.0


def test_ctrl_c_during_a_check_is_one_line(run_kmc, monkeypatch) -> None:
    from kmc import api

    def interrupted(*args: object, progress: object = None, **kw: object) -> None:
        progress(Progress(3, 1234, 5678, 10, 2.0))  # type: ignore[operator]
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "check", interrupted)
    rc, out, err = run_kmc("check", "replication", "--mode", "kip320", "--quiet")
    said = [line for line in _lines(err) if "interrupted" in line]
    assert rc == 130 and len(said) == 1 and len(_lines(err)) == 1
    assert said[0].startswith("kmc: interrupted: replication kip320, level 3, 1,234 distinct states (5,678 generated)")


def test_ctrl_c_during_a_simulation_is_one_line(run_kmc, monkeypatch) -> None:
    from kmc import api

    def interrupted(*args: object, **kw: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "simulate", interrupted)
    rc, out, err = run_kmc("simulate", "replication", "--quiet")
    assert (rc, _lines(err)) == (130, ["kmc: interrupted"])


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads a process's children from /proc (Linux)")
def test_ctrl_c_with_workers_is_one_line_and_no_traceback() -> None:
    """A real SIGINT to the process group (what a terminal's Ctrl-C sends): the forked walkers
    ignore it and the parent reports once."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    p = subprocess.Popen([sys.executable, "-m", "kmc.cli.main", "simulate", "replication", "--walks", "1000000000",
                          "--workers", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    children = Path(f"/proc/{p.pid}/task/{p.pid}/children")
    deadline = time.monotonic() + 120
    while not children.read_text().split() and time.monotonic() < deadline:  # until the walkers are forked
        time.sleep(0.2)
    time.sleep(1.0)  # walking (the first progress line is 10 s away off a terminal)
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert (p.returncode, _lines(err), out) == (130, ["kmc: interrupted"], "")
