"""The vector engine's peak memory on a large run: levels stored packed and expanded a chunk
at a time, and the visited set merged in place, keep the whole process's peak resident memory
at or below 40 bytes per distinct state (kmc/engines/vector/engine.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

KMC = str(Path(sys.executable).parent / "kmc")


@pytest.mark.slow
def test_three_replica_kip320_peaks_at_40_bytes_per_state() -> None:
    # a process of its own: its peak resident memory is this run's alone
    out = subprocess.run([KMC, "check", "replication", "--mode", "kip320", "--replicas", "3", "--log-size", "2",
                          "--max-records", "2", "--max-leader-epoch", "3", "--continue", "--no-properties", "--json",
                          "--quiet"],
                         capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    # TLC's count and depth on the published spec (tests/reference/tlc-replication.md)
    assert (result["distinct_states"], result["depth"]) == (9_985_570, 32)
    assert result["peak_memory_bytes"] / result["distinct_states"] <= 40
