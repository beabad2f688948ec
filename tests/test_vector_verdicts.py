"""The vector and compiled engines evaluate the invariants on a level's states when the level
is expanded (kmc/engines/vector/verdicts.py), one level after the states were found. The run
must still be the scalar engine's, which checks each state when it finds it: the same counts at
a violation (worked out from each parent's steps), and, at every other stop, the states found
but not expanded checked before it reports.

Second computation: the scalar engine on the same model, limits and options. Chunks of 50
states put violations and limits in the middle of levels and of chunks."""

from __future__ import annotations

from pathlib import Path

import pytest

from kmc.api import Checkpoint, Limits, SearchOptions, check
from kmc.engines.vector import engine as vector
from tests.conftest import build
from tests.test_vector_parity import outcome

# replication hw: the scalar engine stops at its first violation (weak-isr) after 1,294 states,
# at depth 9; with --continue it explores 10,131 states. Limits around those points put the cut
# before the violation's level, inside it, and in the level after it.
MAX_STATES = [900, 1100, 1293, 1294, 1295, 1400, 1700, 2100, 2600, 4000]
MAX_DEPTH = [7, 8, 9, 10, 12]


@pytest.fixture
def chunks_of_50(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vector, "chunk_states", lambda instances: 50)
    monkeypatch.setattr(vector, "_SMALLEST_SHARE", 7)


def _same_as_scalar(limits: Limits, search: SearchOptions, engine: str, workers: int) -> None:
    model, invariants = build("replication", mode="hw")
    want = outcome(check(model, invariants, engine="scalar", limits=limits, search=search))
    got = check(model, invariants, engine=engine, limits=limits, search=search, workers=workers)
    assert outcome(got) == want


@pytest.mark.parametrize("keep_going", [False, True])
@pytest.mark.parametrize("max_states", MAX_STATES)
def test_a_stop_at_max_states_is_the_scalar_engines(chunks_of_50: None, max_states: int, keep_going: bool) -> None:
    for workers in (1, 2):
        _same_as_scalar(Limits(max_states=max_states), SearchOptions(keep_going=keep_going), "vector", workers)


@pytest.mark.parametrize("keep_going", [False, True])
@pytest.mark.parametrize("max_depth", MAX_DEPTH)
def test_a_stop_at_max_depth_checks_the_last_level(chunks_of_50: None, max_depth: int, keep_going: bool) -> None:
    _same_as_scalar(Limits(max_depth=max_depth), SearchOptions(keep_going=keep_going), "vector", 2)


@pytest.mark.parametrize("limits", [Limits(), Limits(max_states=1700), Limits(max_depth=9)])
def test_the_compiled_engine_counts_the_same(chunks_of_50: None, limits: Limits) -> None:
    _same_as_scalar(limits, SearchOptions(), "compiled", 2)


def test_a_resumed_frontier_with_the_violation_counts_from_the_checkpoint(chunks_of_50: None, tmp_path: Path) -> None:
    """The first run stops at --max-depth 9 and finds the violation in the last level it kept;
    the resumed run finds it again when it expands that level, and counts the steps up to it
    from the checkpoint's frontier-steps (the level before was expanded by the first run)."""
    model, invariants = build("replication", mode="hw")
    want = outcome(check(model, invariants, engine="scalar"))
    first = check(model, invariants, limits=Limits(max_depth=9), checkpoint=Checkpoint(directory=tmp_path))
    assert outcome(first) == want
    resumed = check(model, invariants, checkpoint=Checkpoint(directory=tmp_path, resume=True))
    assert resumed.engine_stats["resumed_at"] == 9
    assert outcome(resumed) == want


def test_steps_counted_a_parent_at_a_time_are_the_counts_of_each_parent() -> None:
    """Second computation: np.bincount of rank // instances, on ranks given a parent at a time
    with each parent's own ranks in any order (the compiled kernels emit a template at a time)."""
    import numpy as np

    from kmc.engines.vector.levelstep import Candidates
    from kmc.engines.vector.verdicts import steps_per_state

    rng = np.random.default_rng(7)
    instances, states = 13, 400
    for _ in range(20):
        per = [rng.permutation(instances)[: rng.integers(0, instances + 1)] for _ in range(states)]
        rank = np.concatenate([p * 0 + s * instances + p for s, p in enumerate(per)]).astype(np.int64)
        stutter = np.sort(rng.choice(states * instances, size=rng.integers(0, 50), replace=False)).astype(np.int64)
        want = np.bincount(rank // instances, minlength=states) + np.bincount(stutter // instances, minlength=states)
        got = steps_per_state(Candidates(np.zeros((1, len(rank))), rank, lambda r: None, lambda r: None,  # type: ignore[arg-type, return-value]
                                         np.zeros(instances), stutter, by_parent=True), states, instances)
        assert got.tolist() == want.tolist()
