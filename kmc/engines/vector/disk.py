"""Past --memory-limit: the visited set, the parent links and the level on disk.

When the search's own memory (resident anonymous memory: what it allocated, not the file
pages it maps) reaches --memory-limit, the vector and compiled engines do not stop: they
*spill*. The visited keys held in memory are written out as one more sorted run (a file per
array, NumPy's .npy format) and mapped back read-only; the memory set starts empty again. The
parent links of finished levels and the level being expanded go to disk the same way: they
are read in order (a level) or only to rebuild a counterexample (links).

Duplicates against the runs on disk are detected a chunk at a time: a chunk's candidate keys
come sorted, so the binary searches into a run walk it from low keys to high, and the key
filter in front (kmc/engines/vector/prefilter.py, rebuilt over every run) lets most new keys
skip them. The operating system's page cache keeps the runs' hot pages in whatever memory is
left: TLC's disk-backed fingerprint set works the same way.

Runs go to a directory of their own, under `$TMPDIR` (a `kmc-spill-*` directory, removed when
the run ends); the disk they take is reported with the result.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from kmc.engines.result import CheckResult
from kmc.engines.vector.keyset import KeyFormat, Visited


class Spill:
    """The runs of visited keys on disk, and the arrays written next to them."""

    def __init__(self, fmt: KeyFormat):
        self.fmt = fmt
        self._dir = tempfile.TemporaryDirectory(prefix="kmc-spill-")  # removed when the run lets it go
        self.path = Path(self._dir.name)
        self.runs: list[Visited] = []
        self.spills = 0  # times memory reached the limit
        self.bytes = 0  # on disk
        self._files = 0

    def __len__(self) -> int:
        return sum(len(r) for r in self.runs)

    def save(self, a: np.ndarray) -> np.ndarray:
        """`a` written to a file of its own and mapped back, read-only."""
        self._files += 1
        path = self.path / f"{self._files:06d}.npy"
        np.save(path, np.ascontiguousarray(a), allow_pickle=False)
        self.bytes += path.stat().st_size
        return np.load(path, mmap_mode="r", allow_pickle=False)

    def add_run(self, visited: Visited) -> None:
        """The keys of `visited` (sorted) as one more run on disk."""
        if len(visited):
            self.runs.append(Visited.holding(self.fmt, self.save(visited.sort_key),
                                             [self.save(e) for e in visited.extras]))

    def find(self, sort_key: np.ndarray, extras: list[np.ndarray]) -> np.ndarray:
        """Whether each of distinct keys given in sort-key order is in a run on disk."""
        found = np.zeros(len(sort_key), dtype=bool)
        for run in self.runs:
            unsure = np.flatnonzero(~found)
            if not len(unsure):
                break
            found[unsure] = run.find(sort_key[unsure], [x[unsure] for x in extras])[0]
        return found

    def sort_keys(self) -> list[np.ndarray]:
        return [r.sort_key for r in self.runs]

    def stats(self) -> dict[str, int | str]:
        return {"spills": self.spills, "runs": len(self.runs), "states_on_disk": len(self), "disk_bytes": self.bytes,
                "directory": str(self.path)}

    def close(self) -> None:
        self.runs.clear()
        self._dir.cleanup()


def notes(result: CheckResult) -> list[str]:
    """The lines the vector and compiled engines add under a run's summary: where it resumed, what it spilled."""
    out = []
    if result.engine_stats.get("resumed_at"):
        out.append(f"Resumed from --checkpoint-dir after level {result.engine_stats['resumed_at']}.")
    spill = result.engine_stats.get("spill")
    if not spill:
        return out
    return [*out, f"Spilled past --memory-limit {spill['spills']} times: {spill['states_on_disk']:,} visited states in "
            f"{spill['runs']} runs on disk, {spill['disk_bytes'] / 2**20:,.0f} MiB of disk with the links and levels."]
