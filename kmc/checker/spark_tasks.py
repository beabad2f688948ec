"""What Spark executors run for the Spark engine (kmc/checker/spark.py): plain functions of
plain data, one element per partition, every array a numpy batch.

A task gets the run's `Job` (the model by registry name and settings, the invariants by name)
and rebuilds the level step from it (cached per Python worker: a cache, never state a later
task depends on). Three kinds of partition element flow between the steps of a level:

- `Part`, a slice of a level in BFS order: the states (rows) and their ranks;
- `Batch`, candidate successors bound for one owner partition: canonical keys (sort key and
  other words), global ranks and rows, deduplicated map-side;
- `Owned`, an owner partition after a level: its part of the visited set and the states new
  to it.

Ranks are the scalar engine's order: a state of level L+1 has rank (index of its first
parent in level L) x instances + instance id, the smallest over all the ways it is reached.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

import numpy as np

from kmc import registry
from kmc.checker.keyset import Visited, first_occurrences, mix
from kmc.checker.levelstep import LevelStep, transpose

U64 = np.uint64


@dataclass(frozen=True)
class Fault:
    """Test-only: fail the task that owns `partition` at `level`, once (the marker file records
    that it happened, so Spark's retry succeeds)."""

    level: int
    partition: int
    marker: str


@dataclass(frozen=True)
class Job:
    """Everything an executor needs, by name and value: no closures, no model objects."""

    model: str
    settings: tuple[tuple[str, Any], ...]
    invariants: tuple[str, ...]
    symmetry: bool
    partitions: int
    fault: Fault | None = None


@functools.lru_cache(maxsize=4)
def step_for(job: Job) -> LevelStep:
    model, invariants = registry.build(job.model, **dict(job.settings))
    return LevelStep(model, registry.select(invariants, list(job.invariants)), job.symmetry)


@dataclass
class Part:
    rows: np.ndarray  # states x positions, in BFS order
    ranks: np.ndarray  # int64, ascending


@dataclass
class Batch:
    sort_key: np.ndarray
    extras: list[np.ndarray]
    ranks: np.ndarray
    rows: np.ndarray

    @property
    def nbytes(self) -> int:
        return self.sort_key.nbytes + sum(e.nbytes for e in self.extras) + self.ranks.nbytes + self.rows.nbytes


@dataclass
class Expanded:
    """Map-side figures of one frontier partition, sent to owner 0 with the batches."""

    partition: int
    generated: int  # candidates before any deduplication
    shuffled_bytes: int


@dataclass
class Owned:
    visited: Visited
    new: Batch
    expanded: list[Expanded] = field(default_factory=list)  # owner 0 only
    received: int = 0  # candidates that reached this owner after map-side deduplication


@dataclass
class Found:
    """An invariant on one slice of a level: its first violating state (local index, row)
    and how many states violate it."""

    first: int
    row: tuple[int, ...]
    count: int


@dataclass
class OwnerFigures:
    """What an owner partition did in a level, sent on to slice 0 for the driver."""

    expanded: list[Expanded]  # the map-side figures (owner 0 receives them all)
    received: int  # candidates received after map-side deduplication
    new_bytes: int  # bytes of the new states sent on to their slices


@dataclass
class Slice:
    """Figures of a level's slice, for the driver."""

    size: int
    found: dict[int, Found]
    owners: list[OwnerFigures] = field(default_factory=list)


def owner_of(sort_key: np.ndarray, partitions: int) -> np.ndarray:
    """The partition owning each key: a mixed sort key modulo the partition count."""
    return (mix(sort_key) % U64(partitions)).astype(np.int64)


def same_partition(k: int) -> int:
    """The partitioner: records are keyed by their target partition already."""
    return k


def one(it: Iterable[Any]) -> Any:
    """The single element of a partition."""
    items = list(it)
    if len(items) != 1:
        raise RuntimeError(f"kmc spark engine: a partition holds {len(items)} elements, not 1")
    return items[0]


def gather(it: Iterable[Any]) -> list[list[Any]]:
    """All the records a partition received, as its one element."""
    return [[payload for _, payload in it]]


def _maybe_fail(job: Job, level: int, index: int) -> None:
    f = job.fault
    if f is None or (f.level, f.partition) != (level, index):
        return
    try:
        fd = os.open(f.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    raise RuntimeError(f"kmc test hook: task for partition {index} at level {level} fails on purpose")


# -- step 1: expand a slice of the frontier, deduplicate map-side, route to owners -------------

def expand(job: Job, level: int, offsets: list[int], index: int, it: Iterable[tuple[Part, Any]]
           ) -> Iterator[tuple[int, Any]]:
    step = step_for(job)
    part: Part = one(it)[0]
    _maybe_fail(job, level, index)
    batch, generated = candidates(step, part, offsets[index])
    sent = 0
    if batch is not None:
        owners = owner_of(batch.sort_key, job.partitions)
        order = np.argsort(owners, kind="stable")  # keeps each owner's keys in sort-key order
        bounds = np.searchsorted(owners[order], np.arange(job.partitions + 1))
        for o in range(job.partitions):
            sel = order[bounds[o]:bounds[o + 1]]
            if sel.size:
                b = Batch(batch.sort_key[sel], [e[sel] for e in batch.extras], batch.ranks[sel], batch.rows[sel])
                sent += b.nbytes
                yield o, b
    yield 0, Expanded(index, generated, sent)


def candidates(step: LevelStep, part: Part, offset: int) -> tuple[Batch | None, int]:
    """The distinct candidate successors of a slice starting at `offset` in its level, each
    with its smallest global rank; and how many candidates there were before deduplication."""
    if not len(part.rows):
        return None, 0
    found = step.expand(step.block(part.rows))
    if found is None:
        return None, 0
    sort_key, extras = step.fmt.split(found.canonical)
    s, e, first = first_occurrences(sort_key, extras, found.rank)
    rows = found.build(first).rows
    return Batch(s, e, first + offset * step.count, rows), len(found.rank)


def generated_up_to(job: Job, offset: int, last_rank: int, it: Iterable[tuple[Part, Any]]) -> list[int]:
    """How many candidates of this slice have a global rank <= last_rank (where a run stops)."""
    step = step_for(job)
    part: Part = one(it)[0]
    found = step.expand(step.block(part.rows)) if len(part.rows) else None
    if found is None:
        return [0]
    return [int(np.count_nonzero(found.rank + offset * step.count <= last_rank))]


# -- step 2: an owner merges what it received into its part of the visited set ----------------

def own(job: Job, level: int, index: int, it: Iterable[tuple[Owned, list[Any]]]) -> list[Owned]:
    step = step_for(job)
    held, received = one(it)
    visited: Visited = held.visited
    batches = [b for b in received if isinstance(b, Batch)]
    expanded = sorted((x for x in received if isinstance(x, Expanded)), key=lambda x: x.partition)
    width = step.schema.width
    if batches:
        s = np.concatenate([b.sort_key for b in batches])
        e = [np.concatenate([b.extras[w] for b in batches]) for w in range(len(step.fmt.extra_dtypes))]
        ranks = np.concatenate([b.ranks for b in batches])
        rows = np.concatenate([b.rows for b in batches])
    else:
        s, e = np.zeros(0, dtype=U64), [np.zeros(0, dtype=dt) for dt in step.fmt.extra_dtypes]
        ranks, rows = np.zeros(0, dtype=np.int64), np.zeros((0, width), dtype=step.dtype)
    ds, de, dmin = first_occurrences(s, e, ranks)
    by_rank = np.argsort(ranks)
    chosen = by_rank[np.searchsorted(ranks[by_rank], dmin)]  # the candidate giving each key its rank
    known, pos = visited.find(ds, de)
    new = np.flatnonzero(~known)
    visited.merge(ds[new], [x[new] for x in de], pos[new])
    _maybe_fail(job, level, index)
    fresh = Batch(ds[new], [x[new] for x in de], dmin[new], rows[chosen[new]])
    return [Owned(visited, fresh, expanded, len(s))]


def seed_owned(job: Job, index: int, it: Iterable[Batch]) -> list[Owned]:
    """An owner's part of the visited set from the initial states routed to it."""
    step = step_for(job)
    b: Batch = one(it)
    visited = Visited(step.fmt)
    order = np.lexsort([*reversed(b.extras), b.sort_key])
    visited.merge(b.sort_key[order], [x[order] for x in b.extras], np.zeros(len(order), dtype=np.int64))
    return [Owned(visited, b)]


# -- step 3: new states go to the slice of the next level their rank falls in ------------------

def to_slices(job: Job, space: int, it: Iterable[Owned]) -> Iterator[tuple[int, Any]]:
    """Route each new state to slice rank x partitions // space: slices are rank ranges, so
    the level, slice after slice, is in rank order."""
    owned: Owned = one(it)
    b = owned.new
    yield 0, OwnerFigures(owned.expanded, owned.received, b.ranks.nbytes + b.rows.nbytes)  # type: ignore[misc]
    if not len(b.ranks):
        return
    target = (b.ranks * job.partitions) // space
    order = np.argsort(target, kind="stable")
    bounds = np.searchsorted(target[order], np.arange(job.partitions + 1))
    for t in range(job.partitions):
        sel = order[bounds[t]:bounds[t + 1]]
        if sel.size:
            yield t, (b.ranks[sel], b.rows[sel])


def order_slice(job: Job, pending: tuple[int, ...], it: Iterable[tuple[int, Any]]) -> list[tuple[Part, Slice]]:
    """A slice of the next level in rank order, with its invariants evaluated (slice 0 also
    carries the owners' figures)."""
    step = step_for(job)
    got, owners = [], []
    for _, payload in it:
        (owners if isinstance(payload, OwnerFigures) else got).append(payload)
    if got:
        ranks = np.concatenate([r for r, _ in got])
        rows = np.concatenate([rw for _, rw in got])
        order = np.argsort(ranks)
        part = Part(np.ascontiguousarray(rows[order]), ranks[order])
    else:
        part = Part(np.zeros((0, step.schema.width), dtype=step.dtype), np.zeros(0, dtype=np.int64))
    figures = evaluate(step, part, pending)
    figures.owners = owners
    return [(part, figures)]


def evaluate(step: LevelStep, part: Part, pending: Iterable[int], upto: int | None = None) -> Slice:
    """Invariants `pending` on the first `upto` states of a slice (all by default)."""
    rows = part.rows if upto is None else part.rows[:upto]
    found: dict[int, Found] = {}
    if len(rows):
        cols = transpose(rows)
        for k in pending:
            bad = step.violating(cols, k)
            if bad.size:
                f = int(bad[0])
                found[k] = Found(f, tuple(int(v) for v in rows[f]), int(bad.size))
    return Slice(len(part.rows), found)


def count_violating(job: Job, k: int, upto: int, it: Iterable[tuple[Part, Slice]]) -> list[int]:
    part, _ = one(it)
    found = evaluate(step_for(job), part, [k], upto).found.get(k)
    return [0 if found is None else found.count]


def rank_at(local: int, it: Iterable[tuple[np.ndarray, Slice]]) -> list[int]:
    ranks, _ = one(it)
    return [int(ranks[local])]


# -- figures for the driver ------------------------------------------------------------------

def parents_of(element: tuple[Part, Slice]) -> tuple[np.ndarray, Slice]:
    """What a level keeps of a slice once the next level is built: ranks, and figures."""
    return element[0].ranks, element[1]


def figures(index: int, it: Iterable[tuple[np.ndarray, Slice]]) -> list[tuple[int, Slice]]:
    return [(index, one(it)[1])]


def materialized(index: int, it: Iterable[Any]) -> list[tuple[int, int]]:
    """Computes (and so stores) a partition, and says how many elements it holds (one)."""
    return [(index, sum(1 for _ in it))]
