"""What Spark executors run for the Spark engine (kmc/engines/spark/engine.py): plain functions of
plain data, one element per partition, every array a numpy batch.

A task gets the run's `Job` (the model and its invariants as a `ModelFactory`: classes and
functions by module and name, settings, invariant names; kmc/engines/spark/factory.py) and
rebuilds the level step from it (cached per Python worker: a cache, never state a later
task depends on). Two kinds of data flow between the steps of a level:

- `Packed` (kmc/engines/spark/wire.py): states as their canonical keys (sort key and other
  words), path ranks (kmc/engines/spark/ranks.py) and, with symmetry, the packed states
  (without it the key is the packed state); the candidates bound for one owner,
  deduplicated map-side, or the states an owner found new in a level. States are unpacked
  into columns only where a step reads them, as the vector engine keeps its levels;
- `Owned`: an owner partition after a level: its part of the visited set (sorted runs,
  kmc/engines/spark/visited.py), the states new to it (the next level's share it expands)
  and the figures the driver collects. Spark keeps it as it is (pickled in its block
  manager) or, when the run has a `home` on the executors' host, as files there (`Parked`,
  kmc/engines/spark/parts.py): `keep` and `unpark`.
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

import numpy as np

from kmc.engines.spark import parts
from kmc.engines.spark import ranks as ranks_
from kmc.engines.spark import wire
from kmc.engines.spark.visited import VisitedRuns
from kmc.engines.spark.wire import Packed
from kmc.engines.spark.factory import ModelFactory
from kmc.engines.vector.engine import expansion_chunk
from kmc.engines.vector.fresh import argsort_unique
from kmc.engines.vector.keyset import mix
from kmc.engines.vector.levelstep import LevelStep

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

    factory: ModelFactory
    symmetry: bool
    partitions: int
    b0: int  # rank bits of the initial index
    b: int  # rank bits per step
    fault: Fault | None = None
    compiled: bool = False  # the level step on the model's native kernels (the driver compiled them)


@functools.lru_cache(maxsize=4)
def step_for(job: Job) -> LevelStep:
    model, invariants = job.factory.build()
    job.factory.check_rebuilt(model, invariants)
    if job.compiled:
        from kmc.engines.compiled.step import CompiledStep  # llvmlite, loaded where the kernels run

        return CompiledStep(model, invariants, False)
    return LevelStep(model, invariants, job.symmetry)


@dataclass
class Expanded:
    """Map-side figures of one partition's expansion, sent to owner 0 with the batches."""

    partition: int
    generated: int  # candidates before any deduplication
    shuffled_bytes: int
    encode_seconds: float  # writing the Arrow streams


@dataclass
class Found:
    """An invariant on one owner's new states: the violating state of smallest rank, and how
    many violate it."""

    rank: int
    row: tuple[int, ...]
    count: int


@dataclass
class Figures:
    """What the driver learns of an owner after a level."""

    size: int  # states new to this owner
    found: dict[int, Found]
    expanded: list[Expanded] = field(default_factory=list)  # owner 0: every map-side figure
    shuffled_bytes: int = 0
    decode_seconds: float = 0.0  # reading the Arrow streams received


@dataclass
class Owned:
    visited: VisitedRuns
    new: Packed
    figures: Figures


Held = Owned | parts.Parked  # an owner partition as Spark keeps it


def keep(home: str | None, level: int, index: int, owned: Owned) -> Held:
    """An owner partition as Spark is to keep it: its arrays parked as files under `home`
    (the run's directory on the executors' host), or, without one, the whole object."""
    if home is None:
        return owned
    return parts.park(home, level, index, owned.new.arrays(), owned.figures, owned.visited.runs_to_park())


def unpark(job: Job, x: Held) -> Owned:
    """An owner partition from what Spark kept (its arrays mapped from their files, if parked)."""
    if isinstance(x, Owned):
        return x
    fmt = step_for(job).fmt
    words = range(len(fmt.extra_dtypes))
    visited = VisitedRuns.unparked(fmt, x)
    new = Packed(parts.load(x, "sort_key"), [parts.load(x, f"extra{w}") for w in words],
                 parts.load(x, "ranks"), parts.load(x, "words") if job.symmetry else None)
    return Owned(visited, new, x.figures)


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


def by_rank(batch: Packed) -> Packed:
    """A batch in path-rank order (the order every owner keeps its share of a level in)."""
    if len(batch.ranks) < 2:
        return batch
    return batch.take(ranks_.lexorder(batch.ranks))


# -- step 1: expand the states new to a partition, deduplicate map-side, route to owners -------

def expand(job: Job, level: int, index: int, it: Iterable[Held]) -> Iterator[tuple[int, Any]]:
    """`level` is the level being expanded (its children are in level + 1). Each owner's
    candidates go as one Arrow stream (kmc/engines/spark/wire.py)."""
    step = step_for(job)
    owned = unpark(job, one(it))
    _maybe_fail(job, level, index)
    batch, generated = candidates(job, step, owned.new, level)
    sent, encoding = 0, 0.0
    if batch is not None:
        owners = owner_of(batch.sort_key, job.partitions)
        order = np.argsort(owners, kind="stable")
        bounds = np.searchsorted(owners[order], np.arange(job.partitions + 1))
        for o in range(job.partitions):
            sel = order[bounds[o]:bounds[o + 1]]
            if sel.size:
                began = time.perf_counter()
                data = wire.encode(batch.take(sel))
                encoding += time.perf_counter() - began
                sent += len(data)
                yield o, data
    yield 0, Expanded(index, generated, sent, encoding)


def candidates(job: Job, step: LevelStep, states: Packed, level: int) -> tuple[Packed | None, int]:
    """The distinct successors of some states of `level` (in rank order), each with its
    smallest path rank, in rank order; and how many candidates there were before
    deduplication. A candidate's index (parent index x instances + instance id) orders the
    candidates as their path ranks do, since the parents are in rank order: so each key's
    smallest index is its smallest rank, found by the step's first-occurrence deduplication
    (native on compiled kernels). The states are expanded and deduplicated in chunks
    (`expansion_chunk`, the vector engine's; each unpacked from its packed words; sorts and
    tables that fit in the caches), then the chunks' distinct keys are deduplicated together.
    Without symmetry the key is the state, and no states are packed here."""
    chunk = expansion_chunk(step)
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = []  # keys (words x keys), first index, states
    generated = 0
    packed_states = states.packed(step)
    for start in range(0, len(states), chunk):
        block = step.unpack(np.ascontiguousarray(packed_states[:, start:start + chunk]))
        c = step.expand(block, drop_stutter=True)
        if c is None:
            continue
        generated += len(c.rank) + len(c.stutter)  # a step to the parent itself: generated, never new
        if step.symmetry is None:
            words, first = step.distinct_words(c.canonical, c.rank)
            found.append((np.ascontiguousarray(words), first + start * step.count, None))  # as kernels read keys
        else:  # the canonical keys, and the states themselves (not their canonical keys) to send
            s, e, first = step.distinct(c.canonical, c.rank)
            found.append((step.fmt.join(s, e), first + start * step.count, c.words(first).T))
    if not found:
        return None, generated
    words, first = found[0][0], found[0][1]
    if len(found) > 1:  # a key found by several chunks: its smallest index wins
        words, first = step.distinct_words(np.concatenate([f[0] for f in found], axis=1),
                                           np.concatenate([f[1] for f in found]))
    ranked = argsort_unique(first)  # sent in rank order: each owner merges one run per sender
    first = first[ranked]
    s, e = step.split(_gathered(words, ranked))
    packed = None
    if step.symmetry is not None:  # each key's state: that of the candidate of its smallest index
        index = np.concatenate([f[1] for f in found])
        order = np.argsort(index)
        packed = np.concatenate([f[2] for f in found if f[2] is not None])[order[np.searchsorted(index[order], first)]]
    rank_words = ranks_.words_for(ranks_.bits_at(job.b0, job.b, level + 1))
    child_ranks = ranks_.extend(states.ranks[first // step.count], first % step.count, job.b, rank_words)
    return Packed(s, e, child_ranks, packed), generated


def _gathered(words: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The keys at `at` of `words` (words x keys), laid out words x keys in C order (as the
    kernels read keys): a key-major array is gathered by whole keys, then transposed once."""
    if words.flags.f_contiguous and not words.flags.c_contiguous:
        return np.ascontiguousarray(words.T[at].T)
    return np.take(words, at, axis=1)


def generated_up_to(job: Job, level: int, last: int, it: Iterable[Held]) -> list[int]:
    """How many candidates (before deduplication) the states of `level` held here give with
    a rank <= last (where a run stops)."""
    step = step_for(job)
    states = unpark(job, one(it)).new
    found = step.expand(step.unpack(np.ascontiguousarray(states.packed(step)))) if len(states) else None
    if found is None:
        return [0]
    words = ranks_.words_for(ranks_.bits_at(job.b0, job.b, level + 1))
    child = ranks_.extend(states.ranks[found.rank // step.count], found.rank % step.count, job.b, words)
    return [ranks_.count_le(child, last)]


# -- step 2: an owner merges what it received into its part of the visited set ----------------

def own(job: Job, home: str | None, level: int, pending: tuple[int, ...], index: int,
        it: Iterable[tuple[Held, list[Any]]]) -> list[Held]:
    """`level` is the level being built: the owner's new states, and their invariants. Each
    element pairs the owner partition of the level before with what the shuffle brought it."""
    held, received = one(it)
    return [merged(job, home, level, pending, index, unpark(job, held).visited, received)]


def own_parked(job: Job, home: str, level: int, pending: tuple[int, ...], index: int,
               it: Iterable[tuple[int, Any]]) -> list[Held]:
    """`own` when the owner partitions are files under `home`: the owner reads its part of
    the visited set from the files of the level before, so the shuffle's records come to it
    directly, with no zip with that level's partitions (and no second Python worker)."""
    visited = unpark(job, parts.at(home, level - 1, index)).visited
    return [merged(job, home, level, pending, index, visited, [payload for _, payload in it])]


def merged(job: Job, home: str | None, level: int, pending: tuple[int, ...], index: int,
           visited: VisitedRuns, received: list[Any]) -> Held:
    """The owner partition after a level: the received candidates (Arrow streams, and the
    senders' figures) lined up with the owner's part of the visited set."""
    step = step_for(job)
    expanded = sorted((x for x in received if isinstance(x, Expanded)), key=lambda x: x.partition)
    words = ranks_.words_for(ranks_.bits_at(job.b0, job.b, level))
    began = time.perf_counter()
    got = wire.concat([wire.decode(x) for x in received if isinstance(x, bytes)], empty(step, words))
    decoding = time.perf_counter() - began
    order = ranks_.lexorder(got.ranks) if len(got) > 1 else np.arange(len(got))
    keys = step.fmt.join(got.sort_key[order], [x[order] for x in got.extras])  # in rank order
    s, e, first = step.distinct(keys, np.arange(len(got), dtype=np.int64)) if len(got) else (got.sort_key, got.extras, order)
    new = np.flatnonzero(~visited.find(s, e))
    visited.add_levels((level, level), s[new], [x[new] for x in e])
    _maybe_fail(job, level, index)
    fresh = got.take(order[np.sort(first[new])])  # the new states, in rank order
    figures = evaluate(step, fresh, pending)
    figures.expanded = expanded
    figures.shuffled_bytes = sum(x.shuffled_bytes for x in expanded)
    figures.decode_seconds = decoding
    return keep(home, level, index, Owned(visited, fresh, figures))


def empty(step: LevelStep, words: int) -> Packed:
    return Packed(np.zeros(0, dtype=U64), [np.zeros(0, dtype=dt) for dt in step.fmt.extra_dtypes],
                  np.zeros((0, words), dtype=U64),
                  None if step.symmetry is None else np.zeros((0, step.packing.words), dtype=U64))


def seed(job: Job, level: int, it: Iterable[tuple[Packed, Packed]]) -> list[Owned]:
    """An owner's part of the visited set (from keys) and of the last level (from states),
    handed over by the driver (when the partitions are not parked as files: the driver parks
    those itself)."""
    keys, states = one(it)
    return [seeded(step_for(job), level, keys, states)]


def seeded(step: LevelStep, level: int, keys: Packed, states: Packed) -> Owned:
    """An owner partition after `level`, holding the visited keys `keys` (those of every level
    up to it, as one run) and the level's `states`."""
    visited = VisitedRuns.of(step.fmt, (0, level), keys.sort_key, keys.extras)
    return Owned(visited, by_rank(states), Figures(len(states), {}))


def evaluate(step: LevelStep, states: Packed, pending: Iterable[int], upto: int | None = None) -> Figures:
    """Invariants `pending` on some states (those of rank <= upto, with `upto`), unpacked into
    columns a slice of states at a time."""
    pending = list(pending)
    if not len(states) or not pending:
        return Figures(len(states), {})
    violating: dict[int, list[np.ndarray]] = {k: [] for k in pending}
    for start, cols in states.slices(step):
        for k in pending:
            violating[k].append(step.violating(cols, k) + start)
    found: dict[int, Found] = {}
    for k in pending:
        bad = np.concatenate(violating[k])
        if upto is not None and bad.size:
            bad = bad[[ranks_.count_le(states.ranks[i:i + 1], upto) == 1 for i in bad.tolist()]]
        if bad.size:
            f = ranks_.smallest(states.ranks, bad)
            found[k] = Found(ranks_.to_int(states.ranks[f]), states.state(step, f), int(bad.size))
    return Figures(len(states), found)


# -- for the driver --------------------------------------------------------------------------

def figures(index: int, it: Iterable[Held]) -> list[tuple[int, Figures]]:
    return [(index, one(it).figures)]


def materialized(index: int, it: Iterable[Any]) -> list[tuple[int, int]]:
    """Computes (and so stores) a partition, and says how many elements it holds (one)."""
    return [(index, sum(1 for _ in it))]


def up_to(job: Job, last: int, reports: tuple[int, ...], it: Iterable[Held]) -> list[tuple[int, dict[int, int]]]:
    """States new here with a rank <= last, and how many of them fail each report."""
    states = unpark(job, one(it)).new
    kept = ranks_.count_le(states.ranks, last)
    counts = {k: f.count for k, f in evaluate(step_for(job), states, reports, last).found.items()}
    return [(kept, counts)]


def sample(job: Job, lo: int | None, hi: int | None, most: int, it: Iterable[Held]) -> list[tuple[int, list[int]]]:
    return [ranks_.Sorted(unpark(job, one(it)).new.ranks).sample(lo, hi, most)]


def counts_le(job: Job, values: list[int], it: Iterable[Held]) -> list[list[int]]:
    s = ranks_.Sorted(unpark(job, one(it)).new.ranks)
    return [[s.count_le(v) for v in values]]
