"""A Spark run of a few million states (docs/spark.md has the 61,515,776-state one, too long for
CI): two-phase commit with 8 RMs on local[2], every level on Spark and checkpointed, gives TLC's
count, and its driver stays as small as on a tiny run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

KMC = str(Path(sys.executable).parent / "kmc")
MODEL = str(Path(__file__).parent.parent / "examples" / "two_phase_commit" / "model.py")


def spark_run(rms: int, root: Path) -> dict:
    out = subprocess.run([KMC, "check", MODEL, "--rms", str(rms), "--continue", "--engine", "spark",
                          "--master", "local[2]", "--partitions", "2", "--checkpoint-dir", str(root),
                          "--json", "--quiet"], capture_output=True, text=True)
    assert out.returncode == 12, out.stderr  # prepared-never-aborts is the example's violated invariant
    return json.loads(out.stdout)


@pytest.mark.slow
def test_two_phase_commit_8_rms_on_spark(tmp_path: Path) -> None:
    big = spark_run(8, tmp_path / "rms8")
    # TLC's count and depth (tests/reference/tlc-two-phase.md)
    assert (big["distinct_states"], big["depth"], big["complete"]) == (1_745_408, 26, True)
    assert big["engine_stats"]["in_process_levels"] == 0  # every level ran on Spark
    small = spark_run(3, tmp_path / "rms3")
    assert small["distinct_states"] == 288  # TLC's count at 3 RMs (tests/reference/tlc-two-phase.md)
    # the driver holds per-level figures only: 6,000 times the states, about the same memory
    assert big["peak_memory_bytes"] <= 1.2 * small["peak_memory_bytes"]
