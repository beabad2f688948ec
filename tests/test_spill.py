"""Past --memory-limit the vector and compiled engines go on with the visited set, the parent
links and the level on disk (kmc/engines/vector/disk.py): the same run as in memory.

Second computation: the same engine with no memory limit. A limit of one byte makes the search
spill at every chunk of every level (many small runs on disk, keys of a level found in runs
written by its earlier chunks, counterexamples rebuilt from links on disk), the hardest case
for the runs' bookkeeping."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from kmc.api import Limits, SearchOptions, check
from kmc.cli.main import main
from tests.conftest import build
from tests.test_vector_parity import outcome
from tests.test_workers import RUNS, small_chunks  # noqa: F401 (a fixture)


@pytest.mark.parametrize("engine", ["vector", "compiled"])
@pytest.mark.parametrize("name, settings, limits, search", RUNS,
                         ids=[f"{n.split('/')[-2] if '/' in n else n}-{s['mode'] if 'mode' in s else 'rms'}-{i}"
                              for i, (n, s, _, _) in enumerate(RUNS)])
def test_a_spilled_run_is_the_run_in_memory(small_chunks: None, engine: str, name: str, settings: dict[str, Any],
                                            limits: Limits, search: SearchOptions) -> None:
    model, invariants = build(name, **settings)
    want = outcome(check(model, invariants, engine=engine, limits=limits, search=search, workers=2))
    spilling = Limits(max_states=limits.max_states, memory_limit=1)
    got = check(model, invariants, engine=engine, limits=spilling, search=search, workers=2)
    assert outcome(got) == want  # counts, depth, how it stopped, verdicts and traces
    spill = got.engine_stats["spill"]
    assert spill["states_on_disk"] > 0 and spill["runs"] >= 1 and spill["disk_bytes"] > 0
    if got.stopped_by != "violation":  # (a violating state's level was found whole before it was checked)
        assert spill["states_on_disk"] <= got.distinct_states
    assert not Path(spill["directory"]).exists()  # removed when the run ended


def test_other_engines_stop_at_the_limit() -> None:
    model, invariants = build("replication", mode="kip320")
    result = check(model, invariants, engine="scalar", limits=Limits(memory_limit=1))
    assert result.stopped_by == "memory-limit"


def test_the_summary_says_what_went_to_disk(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # what $TMPDIR sets, once read
    code = main(["check", "replication", "--mode", "kip320", "--memory-limit", "1", "--workers", "1", "-q"])
    out = capsys.readouterr().out
    assert code == 0, out
    line = next(x for x in out.splitlines() if x.startswith("Spilled past --memory-limit"))
    assert "visited states in" in line and "MiB of disk" in line
    assert os.listdir(tmp_path) == []  # the spill directory went with the run


def test_runs_on_disk_are_merged_past_a_few(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_RUNS runs they are merged into one (in blocks smaller than a run, here), and
    the run is still the run in memory."""
    from kmc.engines.vector import disk

    monkeypatch.setattr(disk, "MAX_RUNS", 2)
    monkeypatch.setattr(disk, "_MERGE_BLOCK", 100)
    model, invariants = build("kraft", mode="kip966", brokers=2, replication_factor=2, init_isr_size=2,
                              unclean_shutdown_limit=1)
    want = outcome(check(model, invariants, workers=2))
    got = check(model, invariants, limits=Limits(memory_limit=1), workers=2)
    assert outcome(got) == want
    spill = got.engine_stats["spill"]
    assert spill["runs"] <= 2 and spill["spills"] > 2 and spill["states_on_disk"] > 0
