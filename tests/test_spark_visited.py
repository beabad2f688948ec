"""An owner's part of the visited set as runs (kmc/engines/spark/visited.py): it holds exactly
the keys added, its runs merge as a binary counter over the levels' spans, and parked at each
level it writes only the runs that level made, linking the others from the level before."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from kmc.engines.spark import parts
from kmc.engines.spark.visited import VisitedRuns
from kmc.engines.vector.keyset import KeyFormat

FMT = KeyFormat([40, 12])  # a sort key and one other word


def _level_keys(rng: np.random.Generator, n: int) -> tuple[np.ndarray, list[np.ndarray]]:
    s = rng.integers(0, 1 << 10, n, dtype=np.uint64)  # few sort keys: many keys share one
    e = rng.integers(0, 1 << 12, n, dtype=np.uint64).astype(FMT.extra_dtypes[0])
    return s, [e]


def _add_new(runs: VisitedRuns, level: int, s: np.ndarray, e: list[np.ndarray]) -> set[tuple[int, int]]:
    """What an owner does with a level's candidates: the distinct ones no run holds are added."""
    rows = np.unique(np.stack([s, e[0].astype(np.uint64)], axis=1), axis=0)  # distinct, in key order
    s, e = rows[:, 0].copy(), [rows[:, 1].astype(FMT.extra_dtypes[0])]
    new = np.flatnonzero(~runs.find(s, e))
    runs.add_levels((level, level), s[new], [x[new] for x in e])
    return {(int(a), int(b)) for a, b in zip(s[new], e[0][new])}


def _held(runs: VisitedRuns) -> set[tuple[int, int]]:
    return {(int(a), int(b)) for r in runs.runs for a, b in zip(r.sort_key, r.extras[0])}


def test_runs_hold_exactly_the_keys_added_with_spans_that_tile_the_levels() -> None:
    rng = np.random.default_rng(7)
    runs = VisitedRuns.of(FMT, (0, 0), *_level_keys(rng, 1))
    expected = _held(runs)
    for level in range(1, 12):
        got = _add_new(runs, level, *_level_keys(rng, int(50 * 1.5 ** level)))
        assert not got & expected  # new means not held before
        expected |= got
        assert _held(runs) == expected and len(runs) == len(expected)
        assert runs.spans[0][0] == 0 and all(a[1] + 1 == b[0] for a, b in zip(runs.spans, runs.spans[1:]))
        sizes = [len(r) for r in runs.runs]
        assert all(older > 2 * newer for older, newer in zip(sizes, sizes[1:]))  # a binary counter
        for r in runs.runs:  # each run sorted by sort key
            assert np.all(np.diff(r.sort_key.astype(np.int64)) >= 0)


def test_a_level_writes_the_runs_it_made_and_links_the_rest(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    root = str(tmp_path)
    runs = VisitedRuns.of(FMT, (0, 0), *_level_keys(rng, 4000))
    parked = parts.park(root, 0, 0, {}, None, runs.runs_to_park())
    for level in range(1, 4):
        runs = VisitedRuns.unparked(FMT, parts.at(root, level - 1, 0))
        before = {name: os.stat(Path(d) / "key.npy").st_ino for name, d in parts.runs(parked)}
        _add_new(runs, level, *_level_keys(rng, 300))
        parked = parts.park(root, level, 0, {}, None, runs.runs_to_park())
        after = {name: os.stat(Path(d) / "key.npy").st_ino for name, d in parts.runs(parked)}
        assert [name for name, _ in parts.runs(parked)] == [f"run-{a:04d}-{b:04d}" for a, b in runs.spans]
        for name, inode in after.items():  # a run the level kept is the same file; a new one is new
            assert (inode == before.get(name)) == (name in before)
        assert _held(VisitedRuns.unparked(FMT, parked)) == _held(runs)
    kept = _held(runs)
    for level in range(3):  # the driver drops older levels: the linked files stay readable
        parts.drop_level(root, level)
    assert _held(VisitedRuns.unparked(FMT, parts.at(root, 3, 0))) == kept
