"""Owner partitions kept as files on the executors' host between levels.

Spark stores what a Python task returns in its block manager as the pickle the task wrote,
and streams the whole pickle back to a Python worker at every read. An owner partition holds
its part of the visited set and its share of the level, and a level reads the previous one
twice (expand, own) and the new one once (the figures): so every level moved the whole
visited set between the JVM and Python four times, at a cost that grew with it
(docs/spark.md). When every executor runs on the driver's host (a local or loopback master),
an owner's arrays are written once, as .npy files in a directory of the run's, and what
Spark keeps is a `Parked`: the directory, the host and the figures. A reader maps the files
(`np.load(mmap_mode="r")`: pages from the page cache, no copy, no unpickling) and reads only
the arrays it touches.

Each level's files are written by the task that builds the level, each file atomically (a
temporary name, then a rename), and never changed afterwards; a retried task writes the same
bytes again. The visited part is kept as runs (kmc/engines/spark/visited.py): a level writes
the runs it made and links in, by hard links, the ones it kept from the level before. The
driver deletes a level's directory once two newer levels are complete, and the whole
directory at the end of the run.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

_MAPPED = 1 << 16  # files at least this large are mapped; smaller ones (and empty arrays) are read


@dataclass(frozen=True)
class Parked:
    """Where an owner partition's arrays are, and what the driver reads without them."""

    directory: str
    host: str
    figures: Any  # tasks.Figures


def new_root() -> str:
    """A fresh directory for a run's parts, on the driver's host."""
    return tempfile.mkdtemp(prefix="kmc-spark-parts-")


def _level(root: str, level: int) -> Path:
    return Path(root) / f"level-{level:04d}"


def level_dir(root: str, level: int, index: int) -> Path:
    return _level(root, level) / f"part-{index:05d}"


def park(root: str, level: int, index: int, arrays: dict[str, np.ndarray], figures: Any,
         runs: Sequence[tuple[str, dict[str, np.ndarray] | str]] = ()) -> Parked:
    """Write a partition's arrays, and its runs (kmc/engines/spark/visited.py) each in a
    directory of its name: written when given arrays, linked from the run's directory in an
    earlier level (a hard link: the file is kept until no level holds it) when given one."""
    d = level_dir(root, level, index)
    d.mkdir(parents=True, exist_ok=True)
    _write(d, arrays)
    for name, run in runs:
        r = d / name
        r.mkdir(exist_ok=True)
        if isinstance(run, str):
            for f in os.listdir(run):
                tmp = r / f".{f}.link"
                tmp.unlink(missing_ok=True)
                os.link(os.path.join(run, f), tmp)
                os.replace(tmp, r / f)
        else:
            _write(r, run)
    return Parked(str(d), socket.gethostname(), figures)


def _write(d: Path, arrays: dict[str, np.ndarray]) -> None:
    for name, a in arrays.items():
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            np.save(f, np.ascontiguousarray(a), allow_pickle=False)
        os.replace(tmp, d / f"{name}.npy")


def runs(parked: Parked) -> list[tuple[str, str]]:
    """The runs parked with a partition: (name, directory), in name order (oldest first)."""
    return [(name, os.path.join(parked.directory, name))
            for name in sorted(os.listdir(parked.directory)) if name.startswith("run-")]


def at(root: str, level: int, index: int) -> Parked:
    """The partition parked at (level, index) under `root`, found by its name (its figures
    stay with the record Spark keeps)."""
    d = level_dir(root, level, index)
    if not d.is_dir():
        raise RuntimeError(f"kmc spark engine: no owner partition at {d} on host {socket.gethostname()}: parts are "
                           "kept as files only when every executor shares the driver's host (a local or "
                           "loopback master)")
    return Parked(str(d), socket.gethostname(), None)


def load(parked: Parked, name: str) -> np.ndarray:
    """One array of a parked partition (read-only: mapped from its file)."""
    if parked.host != socket.gethostname():
        raise RuntimeError(f"kmc spark engine: an owner partition's arrays are on host {parked.host}, but this "
                           f"task runs on {socket.gethostname()}: parts are kept as files only when every "
                           "executor shares the driver's host (a local or loopback master)")
    path = os.path.join(parked.directory, f"{name}.npy")
    if os.path.getsize(path) < _MAPPED:
        return np.load(path, allow_pickle=False)
    return np.load(path, mmap_mode="r", allow_pickle=False)


def drop_level(root: str, level: int) -> None:
    shutil.rmtree(_level(root, level), ignore_errors=True)


def drop(root: str) -> None:
    shutil.rmtree(root, ignore_errors=True)
