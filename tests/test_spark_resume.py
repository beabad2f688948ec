"""--checkpoint-dir and --resume: a Spark run whose driver is killed mid-run (SIGKILL to the
driver's whole process group, JVM included) and then resumed gives the numbers of an
uninterrupted run; a directory holding a run is never silently reused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import build
from kmc import api as engines
from kmc.api import check as kmc_check
from kmc.api import Limits, SearchOptions

KMC = str(Path(sys.executable).parent / "kmc")
RUN = ["check", "fetch", "--mode", "hw", "--continue", "--engine", "spark", "--master", "local[2]",
       "--partitions", "2", "--json", "--quiet"]


def manifest_depth(root: Path) -> int:
    try:
        return int(json.loads((root / "manifest.json").read_text())["depth"])
    except (FileNotFoundError, json.JSONDecodeError, KeyError):
        return 0


@pytest.mark.slow
def test_resume_after_the_driver_is_killed_gives_the_uninterrupted_numbers(tmp_path: Path) -> None:
    root = tmp_path / "run"
    # a killed driver cannot remove its parked owner partitions: they go under tmp_path
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    driver = subprocess.Popen([KMC, *RUN, "--checkpoint-dir", str(root)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True, env=env)
    try:
        deadline = time.monotonic() + 300
        while manifest_depth(root) < 10 and driver.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert driver.poll() is None, "the run ended before it could be killed"
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait(timeout=60)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
    killed_at = manifest_depth(root)
    # fetch hw has 26 levels (regression pin: kmc's own output, first pinned in commit d502e20): killed mid-run
    assert 10 <= killed_at < 26

    again = subprocess.run([KMC, *RUN, "--checkpoint-dir", str(root)], capture_output=True, text=True)
    assert again.returncode == 2 and "holds a run already" in again.stderr  # never mixed with a new run
    other = subprocess.run([KMC, *RUN, "--checkpoint-dir", str(root), "--resume", "--acks", "1"],
                           capture_output=True, text=True)
    assert other.returncode == 2 and "resume with the same settings" in other.stderr

    resumed = subprocess.run([KMC, *RUN, "--checkpoint-dir", str(root), "--resume"], capture_output=True, text=True)
    assert resumed.returncode == 12, resumed.stderr
    got = json.loads(resumed.stdout)
    assert got["engine_stats"]["resumed_at"] == killed_at

    model, invariants = build("fetch", mode="hw")
    want = kmc_check(model, invariants, engine="vector", limits=Limits(), search=SearchOptions(keep_going=True)).to_json()
    for key in ("distinct_states", "generated_states", "depth", "complete", "stopped_by", "invariants"):
        assert got[key] == want[key], key


def test_resume_refuses_a_run_stored_in_an_older_format(tmp_path: Path) -> None:
    """Format 3 listed no files; format 4 lists every level's files with their SHA-256 under a
    digest. An older run is refused in one line naming both formats, before any Spark work."""
    from kmc.engines.spark import store
    from kmc.errors import BadInput

    (tmp_path / "manifest.json").write_text(json.dumps({"format": 3, "depth": 3}))
    with pytest.raises(BadInput, match=r"has format 3; this kmc reads format 4 \(spark engine\)$"):
        store.proved(tmp_path)
