"""Owner partitions parked as files (kmc/engines/spark/parts.py): written atomically, read back
as they were (large arrays mapped read-only), refused on another host, dropped by level."""

from __future__ import annotations

import socket
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from kmc.engines.spark import parts


def test_parked_arrays_read_back_as_written(tmp_path: Path) -> None:
    root = str(tmp_path)
    big = np.arange(100_000, dtype=np.uint64)[::-1].copy()
    arrays = {"big": big, "rows": np.arange(12, dtype=np.int16).reshape(3, 4), "empty": np.zeros(0, dtype=np.uint32)}
    parked = parts.park(root, 3, 1, arrays, figures="figures")
    assert parked.figures == "figures" and parked.host == socket.gethostname()
    got = {name: parts.load(parked, name) for name in arrays}
    for name, a in arrays.items():
        assert got[name].dtype == a.dtype and np.array_equal(got[name], a)
    assert isinstance(got["big"], np.memmap) and not got["big"].flags.writeable  # mapped, never written through
    assert sorted(p.name for p in Path(parked.directory).iterdir()) == ["big.npy", "empty.npy", "rows.npy"]


def test_a_part_written_again_replaces_the_old_files(tmp_path: Path) -> None:
    """A retried task writes its level again: the same names, the files replaced whole."""
    first = parts.park(str(tmp_path), 0, 0, {"keys": np.arange(5, dtype=np.uint64)}, None)
    again = parts.park(str(tmp_path), 0, 0, {"keys": np.arange(5, dtype=np.uint64)}, None)
    assert first == again and np.array_equal(parts.load(again, "keys"), np.arange(5))
    assert [p.name for p in Path(again.directory).iterdir()] == ["keys.npy"]


def test_a_part_on_another_host_is_refused(tmp_path: Path) -> None:
    parked = parts.park(str(tmp_path), 0, 0, {"keys": np.arange(5, dtype=np.uint64)}, None)
    with pytest.raises(RuntimeError, match="on host elsewhere, but this task runs on"):
        parts.load(replace(parked, host="elsewhere"), "keys")


def test_a_part_is_found_by_its_level_and_index(tmp_path: Path) -> None:
    """An owner reads the level before by name (tasks.own_parked); a missing part (a task on
    another host, where the run's directory does not exist) is an error naming the path."""
    parked = parts.park(str(tmp_path), 2, 1, {"keys": np.arange(5, dtype=np.uint64)}, figures="kept by Spark")
    found = parts.at(str(tmp_path), 2, 1)
    assert found.directory == parked.directory and found.host == parked.host
    assert np.array_equal(parts.load(found, "keys"), np.arange(5))
    with pytest.raises(RuntimeError, match=r"no owner partition at .*level-0002/part-00000 on host"):
        parts.at(str(tmp_path), 2, 0)


def test_levels_are_dropped_one_at_a_time_then_all(tmp_path: Path) -> None:
    root = parts.new_root()
    try:
        for level in range(3):
            parts.park(root, level, 0, {"keys": np.arange(3, dtype=np.uint64)}, None)
        parts.drop_level(root, 0)
        assert sorted(p.name for p in Path(root).iterdir()) == ["level-0001", "level-0002"]
    finally:
        parts.drop(root)
    assert not Path(root).exists()
