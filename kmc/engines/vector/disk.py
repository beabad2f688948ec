"""Past --memory-limit: the visited set, the parent links and the level on disk.

When the search's own memory (resident anonymous memory: what it allocated, not the file
pages it maps) reaches --memory-limit, the vector and compiled engines do not stop: they
*spill*. The visited keys held in memory are written out as one more sorted run (a file per
array, NumPy's .npy format) and mapped back read-only; the memory set starts empty again. The
parent links of finished levels and the level being expanded go to disk the same way: they
are read in order (a level) or only to rebuild a counterexample (links).

Duplicates against the runs on disk are detected a chunk at a time: a chunk's candidate keys
come sorted, so the searches into a run walk it from low keys to high, and the key filter in
front (kmc/engines/vector/prefilter.py, rebuilt over every run) lets most new keys skip them.
Each run keeps every 512th sort key in memory (kmc/engines/vector/bounds.py), so that a search
reads one page of its sort keys, and its files are read at random (`madvise`): a page a fault.
The operating system's page cache keeps the runs' hot pages in whatever memory is left: TLC's
disk-backed fingerprint set works the same way.

Runs are merged on disk, a block at a time, once there are more than `MAX_RUNS` of them (a key
is in one run only, so a merge keeps every key): a key is then searched in a few runs at most.

Runs go to a directory of their own, under `$TMPDIR` (a `kmc-spill-*` directory, removed when
the run ends); the disk they take is reported with the result. With `--checkpoint-dir` nothing
is written twice: the checkpoint already holds each level's keys sorted, its parent links and
the last level's states, so a spill maps those files instead (`keep`: a run per level, never
merged, searched newest first, as most duplicates are found in the last levels), and the spill
directory stays empty.
"""

from __future__ import annotations

import mmap
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from kmc.engines.result import CheckResult
from kmc.engines.vector import checkpoint
from kmc.engines.vector.keyset import Decode, KeyFormat, Rows, Visited, Words
from kmc.engines.vector.levels import Level
from kmc.engines.vector.links import Parents
from kmc.engines.vector.prefilter import KeyFilter, Marks

MAX_RUNS = 4
_MERGE_BLOCK = 1 << 22  # keys of a run merged at a time


class Spill:
    """The runs of visited keys on disk, and the arrays written next to them."""

    def __init__(self, fmt: KeyFormat, marks: Marks | None = None):
        self.fmt = fmt
        self.marks = marks  # the key filters' native kernels
        self._dir = tempfile.TemporaryDirectory(prefix="kmc-spill-")  # removed when the run lets it go
        self.path = Path(self._dir.name)
        self.runs: list[Visited] = []
        # a checkpoint's levels, newest first: its files, never merged here; each with a filter of
        # its keys alone, so that a key skips the levels that certainly do not hold it
        self.kept: list[tuple[Visited, KeyFilter]] = []
        self.spills = 0  # times memory reached the limit
        self.bytes = 0  # the most it held on disk
        self._files = 0

    def __len__(self) -> int:
        return sum(len(r) for r in self._all())

    def save(self, a: np.ndarray) -> np.ndarray:
        """`a` written to a file of its own and mapped back, read-only."""
        self._files += 1
        path = self.path / f"{self._files:06d}.npy"
        np.save(path, np.ascontiguousarray(a), allow_pickle=False)
        self._measure()
        return np.load(path, mmap_mode="r", allow_pickle=False)

    def add_run(self, visited: Visited) -> None:
        """The keys of `visited` (sorted) as one more run on disk; the runs merged into one when
        there are more than MAX_RUNS. The list of runs is replaced, never changed in place, so
        that other threads searching the runs see a whole list."""
        if len(visited):
            run = Visited.holding(self.fmt, self.save(visited.sort_key), [self.save(e) for e in visited.extras])
            self.runs = [*self.runs, _on_disk(run)]
        if len(self.runs) > MAX_RUNS:
            merged = self.runs[0]
            for run in self.runs[1:]:
                merged = self._merged(merged, run)
            self.runs = [merged]

    def keep(self, run: Visited) -> None:
        """A level's keys as a checkpoint holds them (sorted, its files mapped) as a run. The list
        is replaced, never changed in place, as `add_run`'s."""
        if len(run):
            only = KeyFilter.of(run.sort_key, self.marks)  # the sort keys read in order, then searched at random
            self.kept = [(_on_disk(run), only), *self.kept]

    def _all(self) -> list[Visited]:
        return [*self.runs, *(run for run, _ in self.kept)]

    def _merged(self, a: Visited, b: Visited) -> Visited:
        """Two runs as one, written a block of `a` at a time with the keys of `b` up to the
        block's last sort key (keys with equal sort keys may come in any order: a search looks
        at all of them)."""
        n = len(a) + len(b)
        _advise([*a.arrays(), *b.arrays()], mmap.MADV_SEQUENTIAL)
        dtypes = [np.promote_types(x.dtype, y.dtype) for x, y in zip(a.extras, b.extras)]
        self._files += 1
        stem = self.path / f"{self._files:06d}"
        out: list[np.ndarray] = [np.lib.format.open_memmap(f"{stem}-{i}.npy", mode="w+", dtype=dt, shape=(n,))
               for i, dt in enumerate([np.dtype(np.uint64), *dtypes])]
        i = j = at = 0
        while i < len(a) or j < len(b):
            i2 = min(i + _MERGE_BLOCK, len(a))
            j2 = len(b) if i2 == len(a) else int(np.searchsorted(b.sort_key, a.sort_key[i2 - 1], side="right"))
            keys = np.concatenate([a.sort_key[i:i2], b.sort_key[j:j2]])
            order = np.argsort(keys, kind="stable")
            out[0][at:at + len(keys)] = keys[order]
            for o, x, y in zip(out[1:], a.extras, b.extras):
                o[at:at + len(keys)] = np.concatenate([x[i:i2], y[j:j2]])[order]
            at, i, j = at + len(keys), i2, j2
        for o in out:
            if isinstance(o, np.memmap):
                o.flush()
        self._measure()
        for run in (a, b):
            for x in [run.sort_key, *run.extras]:
                if isinstance(x, np.memmap) and x.filename is not None:
                    Path(x.filename).unlink(missing_ok=True)  # searches under way keep their mapping
        return _on_disk(Visited.holding(self.fmt, out[0], out[1:]))

    def _measure(self) -> None:
        self.bytes = max(self.bytes, sum(f.stat().st_size for f in self.path.iterdir()))

    def find(self, sort_key: np.ndarray, extras: Words, decode: Decode | None = None) -> np.ndarray:
        """Whether each of distinct keys given in sort-key order is in a run on disk (`decode`:
        as `Visited.find`)."""
        found = np.zeros(len(sort_key), dtype=bool)
        for run, only in [*((r, None) for r in self.runs), *self.kept]:
            unsure = np.flatnonzero(~found)
            if not len(unsure):
                break
            if only is not None:
                unsure = unsure[only.maybe(sort_key[unsure])]
            found[unsure] = run.find(sort_key[unsure], [Rows(x, unsure) for x in extras], decode)[0]
        return found

    def sort_keys(self) -> list[np.ndarray]:
        return [r.sort_key for r in self._all()]

    def stats(self) -> dict[str, int | str]:
        return {"spills": self.spills, "runs": len(self.runs) + len(self.kept), "states_on_disk": len(self),
                "states_in_checkpoint": sum(len(r) for r, _ in self.kept), "disk_bytes": self.bytes,
                "directory": str(self.path)}

    def close(self) -> None:
        self.runs.clear()
        self.kept.clear()
        self._dir.cleanup()


def _on_disk(run: Visited) -> Visited:
    """`run`, a run on disk, as it is searched from now on: through a sparse index of its sort
    keys (kmc/engines/vector/bounds.py), built first, as it reads them in order; then its files
    read at random, a page fault reading its page alone, not the 128 KiB around it that Linux
    reads for a mapping read in order. On kraft v3.5's goal run, searching 40 levels on disk,
    the read-around read 200-580 MB/s and filled the page cache with pages no search wanted."""
    run.indexed()
    _advise(run.arrays(), mmap.MADV_RANDOM)
    return run


def _advise(arrays: list[np.ndarray], advice: int) -> None:
    """madvise(`advice`) on the mappings of the arrays that map a file (the others: nothing)."""
    for a in arrays:
        base: object = a
        while isinstance(base, np.ndarray):
            base = base.base
        if isinstance(base, mmap.mmap):
            base.madvise(advice)


def spill(search: Any, level: Level | None) -> None:
    """Past --memory-limit: the visited keys `search` (kmc/engines/vector/engine.py:Search) holds
    in memory as one more run on disk, its parent links and `level` too; with a checkpoint that
    holds them, its files are mapped instead of written again."""
    if search.spill is None:
        search.spill = Spill(search.fmt, search.step.marks)
    disk = search.spill
    held = (search.visited.nbytes
            + sum(a.nbytes for a in [*(p.children for p in search.parents), *search.iids] if not isinstance(a, np.memmap))
            + (0 if level is None else level.memory_bytes))
    assert search.limits.memory_limit is not None
    if held < search.limits.memory_limit // 4:
        return  # too little left in memory to be worth a run on disk: go on over the limit
    disk.spills += 1
    # the checkpoint's directory when it holds every level in memory: its files are the runs
    kept = search.checkpoint.directory if search.checkpoint is not None and \
        sum(size for _, size in search.in_memory) == len(search.visited) else None
    if kept is not None:
        for number, size in search.in_memory:
            if size:
                disk.keep(checkpoint.kept_keys(kept, number, size, search.fmt, search.codes))
    else:
        disk.add_run(search.visited)

    def on_disk(name: str, a: np.ndarray, number: int) -> np.ndarray:
        """Array `name` of level `number`, on disk: as the checkpoint keeps it, or saved by the spill."""
        if isinstance(a, np.memmap):
            return a
        if kept is not None and name != "frontier-words":
            return checkpoint.kept_array(kept, number, name, len(a))
        return disk.save(a)

    search.parents = [Parents(on_disk("links-children", p.children, n + 2)) for n, p in enumerate(search.parents)]
    search.iids = [on_disk("links-action", a, n + 2) for n, a in enumerate(search.iids)]
    if level is not None:
        level.store(lambda name, a: on_disk(f"frontier-{name}", a, search.kept_last))
    search.visited = search.new_visited()
    search.in_memory = []


def notes(result: CheckResult) -> list[str]:
    """The lines the vector and compiled engines add under a run's summary: where it resumed, what it spilled."""
    out = []
    if result.engine_stats.get("resumed_at"):
        out.append(f"Resumed from --checkpoint-dir after level {result.engine_stats['resumed_at']}.")
    spill = result.engine_stats.get("spill")
    if not spill:
        return out
    kept = spill.get("states_in_checkpoint", 0)
    line = (f"Spilled past --memory-limit {spill['spills']} times: {spill['states_on_disk']:,} visited states in "
            f"{spill['runs']} runs on disk, {spill['disk_bytes'] / 2**20:,.0f} MiB of disk with the links and levels")
    if kept:
        line += f" ({kept:,} states are read from the checkpoint's files, which take no more disk)"
    return [*out, line + "."]
