"""The Spark engine: the vector engine's level step, run in Spark executors on partitions of
each level, with the visited set partitioned by key across the executors.

Partitioning (as in parallel Murphi and distributed TLC): every state is owned by the
partition its canonical key hashes to (kmc/checker/spark_tasks.owner_of). Each BFS level is
three steps, each one Python task per partition over numpy batches:

1. expand: each slice of the level (a range of it, in BFS order) runs the level step on its
   states (kmc/checker/levelstep.py), deduplicates its candidates map-side (each key once,
   with its smallest rank) and sends one batch per owner partition (the only shuffle of
   successors);
2. own: each owner lines up what it received with its part of the visited set (one sorted
   key array per partition, the same partitioner on both sides, so a `zip` and no join),
   keeps each key's smallest rank, drops the visited keys and merges the new ones in;
3. order: the new states go to the slice of the next level their rank falls in (slices are
   rank ranges), where they are sorted by rank and the invariants are evaluated.

A rank is (parent's index in its level) x instances + instance id, smallest over all the
ways a state is reached: the scalar engine's order. So the next level, slice after slice,
is in exactly the order the other engines put it in, the first violation is the same state,
and the counterexample is the same path. The driver holds only per-partition figures: level
sizes, offsets, each invariant's first violating state per slice. Each level's ranks stay in
the executors, sliced like the level; a counterexample is rebuilt by looking its ancestors'
ranks up level by level (one small job each) and replayed through the scalar backend.

Every level's RDDs are persisted and checkpointed locally (lineage cut at each level); a task
that fails is retried by Spark from the previous level's stored partitions, with the same
result. With a checkpoint directory each completed level is also written as Parquet
(kmc/checker/spark_store.py), so a run whose driver died can be resumed.
"""

from __future__ import annotations

import bisect
import statistics
import time
from dataclasses import dataclass, field
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from kmc import registry
from kmc.checker import spark_store as store
from kmc.checker import vector
from kmc.checker import spark_tasks as tasks
from kmc.checker.keyset import first_occurrences
from kmc.checker.levelstep import LevelStep
from kmc.checker.result import CheckResult, Progress
from kmc.checker.search import Limits, ProgressHook, Violations, finish
from kmc.checker.spark_session import DEFAULT_MASTER, start
from kmc.checker.symmetry import lexmin
from kmc.checker.vector import replay_paths
from kmc.errors import BadInput
from kmc.model.core import Invariant, Model, State


DEFAULT_THRESHOLD = 1_000_000  # the vector engine's work for about a second; a Spark level costs ~0.5 s


@dataclass(frozen=True)
class SparkOptions:
    master: str = DEFAULT_MASTER
    partitions: int | None = None  # default: the context's default parallelism
    conf: tuple[tuple[str, str], ...] = ()
    checkpoint_dir: Path | None = None
    resume: bool = False
    threshold: int = DEFAULT_THRESHOLD  # levels run in-process until this many states are known
    fault: tasks.Fault | None = None  # test-only: fail one task once


def check(
    model: Model,
    invariants: Sequence[Invariant],
    limits: Limits = Limits(),
    progress: ProgressHook | None = None,
    options: SparkOptions | None = None,
) -> CheckResult:
    return _Run(model, invariants, limits, progress, options or SparkOptions()).run()


@dataclass
class _Level:
    """A level as the driver knows it: slice sizes, and the RDDs its data lives in."""

    sizes: list[int]
    frontier: Any | None  # RDD of (Part, Slice), one per slice (the last level only)
    parents: Any | None  # RDD of (ranks, figures), one per slice (None for the initial states)
    local: tuple[np.ndarray, np.ndarray] | None = None  # parent index, instance id: a level run in-process
    offsets: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self.offsets = [0]
        for s in self.sizes[:-1]:
            self.offsets.append(self.offsets[-1] + s)

    @property
    def size(self) -> int:
        return sum(self.sizes)

    def slice_of(self, index: int) -> int:
        return bisect.bisect_right(self.offsets, index) - 1


class _Run:
    def __init__(self, model: Model, invariants: Sequence[Invariant], limits: Limits,
                 progress: ProgressHook | None, options: SparkOptions):
        self.started = time.perf_counter()
        self.model = model
        self.invariants = list(invariants)
        self.limits = limits
        self.progress = progress
        self.options = options
        _check_rebuildable(model, self.invariants)
        self.step = LevelStep(model, self.invariants, limits.symmetry)
        self.violations = Violations(self.invariants)
        self.found_at: dict[State, tuple[int, int]] = {}
        self.initial: list[State] = []
        self.levels: list[_Level] = []
        self.owned: Any = None  # RDD of Owned (a part of the visited set), one per owner partition
        self.distinct = 0
        self.generated = 0
        self.stopped_by: str | None = None
        self.level_seconds: list[float] = []
        self.shuffled = 0
        self.resumed_at: int | None = None
        self.in_process_levels = 0

    def _start_spark(self) -> None:
        options = self.options
        begun = start(options.master, options.partitions, dict(options.conf))
        self.session_seconds = begun.seconds
        self.session = begun.session
        self.sc = begun.session.sparkContext
        self.partitions = options.partitions or max(self.sc.defaultParallelism, 1)
        self.job = tasks.Job(self.model.name, tuple(sorted(self.model.settings.items())),
                             tuple(i.name for i in self.invariants), self.limits.symmetry, self.partitions,
                             options.fault)
        self.identity = {"model": self.model.name, "settings": dict(self.model.settings),
                         "invariants": [i.name for i in self.invariants], "symmetry": self.limits.symmetry,
                         "keep_going": self.limits.keep_going, "partitions": self.partitions}

    # -- the search ----------------------------------------------------------------------

    def run(self) -> CheckResult:
        from pyspark import StorageLevel

        self.storage = StorageLevel.MEMORY_AND_DISK
        root = self.options.checkpoint_dir
        if not self.options.resume and root is None and self.options.threshold > 0:
            search = vector.Search(self.model, self.invariants, self.limits, self.progress)
            level, depth = search.explore(handoff=self.options.threshold)
            if level is None or not level.size or search.stopped_by is not None:
                done = search.result(depth)  # the whole run stayed below --spark-threshold
                done.engine = "spark"
                done.engine_stats = {"in_process_levels": depth, "spark_levels": 0}
                return done
            self._start_spark()
            self._from_vector(search, level, depth)
        elif self.options.resume:
            assert root is not None
            self._start_spark()
            depth = self._resume(root)
        else:
            self._start_spark()
            if root is not None:
                store.check_fresh(root)
            depth = self._initial()
            self._save(depth)
        while self.stopped_by is None and self.levels and self.levels[-1].size:
            if self.limits.max_depth is not None and depth >= self.limits.max_depth:
                self.stopped_by = "max-depth"
                break
            if (exhausted := self.limits.exhausted(self.started)) is not None:  # the driver's memory
                self.stopped_by = exhausted
                break
            began = time.perf_counter()
            size = self._next(depth)
            self.level_seconds.append(time.perf_counter() - began)
            if size:
                depth += 1
                self._save(depth)
            if self.progress is not None:
                self.progress(Progress(depth, self.distinct, self.generated, size,
                                       time.perf_counter() - self.started, self.shuffled))
        links = replay_paths(self.model, self._paths(), "spark")
        extra_words = sum(np.dtype(dt).itemsize for dt in self.step.fmt.extra_dtypes)
        result = finish(self.model, "spark", self.started, self.violations, links.get,
                        distinct=self.distinct, generated=self.generated, depth=depth,
                        stopped_by=self.stopped_by, symmetry=self.step.symmetry is not None,
                        bytes_per_state=8 + extra_words + 8)
        result.engine_stats = {
            "master": self.sc.master,
            "partitions": self.partitions,
            "session_start_seconds": round(self.session_seconds, 2),
            "levels": len(self.level_seconds),
            "in_process_levels": self.in_process_levels,
            "median_level_seconds": round(statistics.median(self.level_seconds), 3) if self.level_seconds else None,
            "shuffle_bytes": self.shuffled,
            **({"resumed_at": self.resumed_at} if self.resumed_at else {}),
        }
        return result

    def _pin(self, rdd: Any) -> Any:
        """Keep an RDD's partitions (memory, spilling to disk) and cut its lineage there."""
        rdd.persist(self.storage)
        rdd.localCheckpoint()
        return rdd

    def _initial(self) -> int:
        """Level 1, the initial states: deduplicated and checked on the driver (they are
        few), then sliced into the executors."""
        initial = self.model.initial_states()
        if not initial:
            return 0
        step, P = self.step, self.partitions
        rows = np.array(initial, dtype=np.int64)
        step.check_range(rows, "an initial state")
        block = step.block(rows)
        s, e = step.fmt.split(lexmin(block.keys))
        s, e, first = first_occurrences(s, e, np.arange(len(initial), dtype=np.int64))
        order = np.argsort(first)
        part = tasks.Part(block.rows[first[order]], np.arange(len(order), dtype=np.int64))
        found = tasks.evaluate(step, part, self.violations.pending)
        cut = self._limit([found], [0], 0, lambda k, upto: tasks.evaluate(step, part, [k], upto).found[k].count)
        self.distinct = cut
        self.generated = len(initial) if self.stopped_by is None else int(first[order][cut - 1]) + 1
        self.initial = [tuple(int(v) for v in row) for row in part.rows[:cut]]
        keep = np.sort(order[:cut])
        self._distribute(part.rows[:cut], s[keep], [x[keep] for x in e], None)
        return 1

    def _distribute(self, rows: np.ndarray, sort_key: np.ndarray, extras: list[np.ndarray],
                    local: tuple[np.ndarray, np.ndarray] | None) -> None:
        """Hand the executors a level known on the driver (its states in BFS order, sliced)
        and every key visited so far (each to its owner)."""
        P, n = self.partitions, len(rows)
        bounds = [n * i // P for i in range(P + 1)]
        slices = [tasks.Part(rows[a:b], np.arange(a, b, dtype=np.int64)) for a, b in zip(bounds, bounds[1:])]
        frontier = self._pin(self.sc.parallelize([(p, None) for p in slices], P))
        owners = tasks.owner_of(sort_key, P)
        batches = [tasks.Batch(sort_key[owners == o], [x[owners == o] for x in extras], np.zeros(0, dtype=np.int64),
                               rows[:0]) for o in range(P)]
        seeded = self.sc.parallelize(batches, P).mapPartitionsWithIndex(partial(tasks.seed_owned, self.job))
        self.owned = self._pin(seeded)
        stored = self.sc.union([frontier.mapPartitionsWithIndex(tasks.materialized),
                                self.owned.mapPartitionsWithIndex(tasks.materialized)]).collect()
        if [c for _, c in stored] != [1] * (2 * P):
            raise RuntimeError("kmc spark engine: the partitions handed over are not one element each")
        self.levels.append(_Level([b - a for a, b in zip(bounds, bounds[1:])], frontier, None, local))

    def _from_vector(self, search: vector.Search, level: Any, depth: int) -> None:
        """Go on from where the in-process search stopped (below --spark-threshold): its
        earlier levels' parent links stay on the driver (they are small), its last level and
        its visited keys go to the executors."""
        self.initial = search.initial
        self.distinct, self.generated = len(search.visited), search.generated
        self.violations, self.found_at = search.violations, search.found_at
        count = len(self.initial)
        self.levels.append(_Level([count], None, None))
        for parents, iids in list(zip(search.parents, search.iids))[:-1]:
            self.levels.append(_Level([len(parents)], None, None, (parents, iids)))
        last = (search.parents[-1], search.iids[-1]) if depth > 1 else None
        self._distribute(level.rows, search.visited.sort_key, search.visited.extras, last)
        self.in_process_levels = depth

    def _next(self, depth: int) -> int:
        """Level depth + 1 from level depth: the three steps, then the figures in one job.
        Returns the size kept."""
        job, P, prev = self.job, self.partitions, self.levels[-1]
        space = max(prev.size * self.step.count, 1)
        pending = tuple(self.violations.pending)
        shuffled = (prev.frontier.mapPartitionsWithIndex(partial(tasks.expand, job, depth, prev.offsets))
                    .partitionBy(P, tasks.same_partition)
                    .mapPartitions(tasks.gather))
        owned = self._pin(_zip_single(self.owned, shuffled).mapPartitionsWithIndex(partial(tasks.own, job, depth)))
        frontier = self._pin(owned.mapPartitions(partial(tasks.to_slices, job, space))
                             .partitionBy(P, tasks.same_partition)
                             .mapPartitions(partial(tasks.order_slice, job, pending)))
        parents = self._pin(frontier.map(tasks.parents_of))
        # one job per level: it runs the three steps, stores (and cuts the lineage of) the
        # owners' visited parts, the new level and its ranks, and returns the figures
        self.sc.setLocalProperty("spark.checkpoint.checkpointAllMarkedAncestors", "true")
        slices = sorted(parents.mapPartitionsWithIndex(tasks.figures).collect(), key=lambda x: x[0])
        if [i for i, _ in slices] != list(range(P)):
            raise RuntimeError("kmc spark engine: a level's partitions are not one element each")
        owners = [o for _, s in slices for o in s.owners]
        expanded = sorted((e for o in owners for e in o.expanded), key=lambda e: e.partition)
        self.shuffled += sum(e.shuffled_bytes for e in expanded) + sum(o.new_bytes for o in owners)
        level = _Level([s.size for _, s in slices], frontier, parents)

        def count_below(k: int, upto: int, p: int) -> int:
            return self.sc.runJob(frontier, partial(tasks.count_violating, job, k, upto), [p])[0]

        cut = self._limit([s for _, s in slices], level.offsets, depth, None, count_below)
        if self.stopped_by is None:
            self.generated += sum(e.generated for e in expanded)
        else:  # as the scalar engine: count the candidates up to the last state kept
            last_rank = self._rank(level, cut - 1)
            q = prev.slice_of(last_rank // self.step.count)
            before = sum(e.generated for e in expanded if e.partition < q)
            here = self.sc.runJob(prev.frontier, partial(tasks.generated_up_to, job, prev.offsets[q], last_rank), [q])
            self.generated += before + here[0]
        self.distinct += cut
        prev.frontier.unpersist()
        prev.frontier = None
        self.owned.unpersist()
        self.owned = owned
        level.sizes = _cut_sizes(level.sizes, cut)
        self.levels.append(level)
        return cut

    def _limit(self, slices: list[tasks.Slice], offsets: list[int], depth: int,
               count_local: Any = None, count_in: Any = None) -> int:
        """How many states of the new level the run keeps (as the other engines: all, or up
        to the first violation unless --continue, or up to --max-states), recording the
        violations among them."""
        m = sum(s.size for s in slices)
        cut, full = m, False
        if self.limits.max_states is not None and self.distinct + m >= self.limits.max_states:
            cut, full = self.limits.max_states - self.distinct, True
        first: dict[int, tuple[int, tasks.Found]] = {}
        for p, s in enumerate(slices):
            for k, f in s.found.items():
                if k not in first or offsets[p] + f.first < first[k][0]:
                    first[k] = (offsets[p] + f.first, f)
        safety = [g for k, (g, _) in first.items() if not self.invariants[k].report and g < cut]
        if safety and not self.limits.keep_going:
            cut = min(safety) + 1
            self.stopped_by = "violation"
        for k, (g, f) in sorted(first.items()):
            if g >= cut:
                continue
            count = 0
            if self.invariants[k].report:  # only reports count their states
                for p, s in enumerate(slices):
                    if k in s.found and offsets[p] + s.size <= cut:
                        count += s.found[k].count
                    elif k in s.found and offsets[p] < cut:
                        upto = cut - offsets[p]
                        count += count_local(k, upto) if count_local else count_in(k, upto, p)
            if k not in self.violations.first:
                self.found_at[f.row] = (depth, g)
            self.violations.record_many(k, f.row, count)
        if full and self.stopped_by is None:
            self.stopped_by = "max-states"
        return cut

    # -- checkpoints ---------------------------------------------------------------------------

    def _save(self, depth: int) -> None:
        """With --checkpoint-dir, write the level just completed, then the manifest naming it
        (a run that stopped writes nothing more: resuming it redoes its last level)."""
        root = self.options.checkpoint_dir
        if root is None or self.stopped_by is not None or not self.levels or not self.levels[-1].size:
            return
        last = self.levels[-1]
        store.write_level(self.session, root, depth, self.owned, last.parents, last.frontier)
        store.write_manifest(root, {
            **self.identity,
            "depth": depth,
            "sizes": [lv.sizes for lv in self.levels],
            "distinct": self.distinct,
            "generated": self.generated,
            "shuffle_bytes": self.shuffled,
            "initial": [list(s) for s in self.initial],
            "first": {str(k): list(v) for k, v in self.violations.first.items()},
            "counts": {str(k): v for k, v in self.violations.counts.items()},
            "found_at": [[list(st), lv, ix] for st, (lv, ix) in self.found_at.items()],
        })

    def _resume(self, root: Path) -> int:
        """The state of the run kept in `root`, back in the executors and the driver."""
        m = store.read_manifest(root, self.identity)
        depth = int(m["depth"])
        self.distinct, self.generated, self.shuffled = m["distinct"], m["generated"], m["shuffle_bytes"]
        self.initial = [tuple(s) for s in m["initial"]]
        self.violations.first = {int(k): tuple(v) for k, v in m["first"].items()}
        self.violations.counts = {int(k): v for k, v in m["counts"].items()}
        self.found_at = {tuple(st): (lv, ix) for st, lv, ix in m["found_at"]}
        P = self.partitions
        self.owned = self._pin(store.load_owned(self.session, root, depth, self.job))
        pinned = [self.owned]
        for level, sizes in enumerate(m["sizes"], start=1):
            parents = None if level == 1 else self._pin(store.load_ranks(self.session, root, level, P))
            frontier = self._pin(store.load_frontier(self.session, root, level, P)) if level == depth else None
            pinned += [r for r in (parents, frontier) if r is not None]
            self.levels.append(_Level(sizes, frontier, parents))
        stored = self.sc.union([r.mapPartitionsWithIndex(tasks.materialized) for r in pinned]).collect()
        if [n for _, n in stored] != [1] * (len(pinned) * P):
            raise RuntimeError(f"kmc spark engine: the run in {root} does not load as one element per partition")
        self.resumed_at = depth
        return depth

    # -- counterexamples ---------------------------------------------------------------------

    def _rank(self, level: _Level, index: int) -> int:
        if level.local is not None:
            parents, iids = level.local
            return int(parents[index]) * self.step.count + int(iids[index])
        p = level.slice_of(index)
        local = index - level.offsets[p]
        return self.sc.runJob(level.parents, partial(tasks.rank_at, local), [p])[0]

    def _paths(self) -> dict[State, tuple[State, list[int]]]:
        """For each violating state: its initial state and the instance ids leading to it,
        looked up level by level in the executors."""
        paths = {}
        count = self.step.count
        for state, (depth, index) in self.found_at.items():
            path: list[int] = []
            while depth > 0:
                rank = self._rank(self.levels[depth], index)
                path.append(rank % count)
                index = rank // count
                depth -= 1
            paths[state] = (self.initial[index], path[::-1])
        return paths


def _zip_single(a: Any, b: Any) -> Any:
    """Two RDDs of one element per partition, zipped in the JVM as they are: RDD.zip would
    re-serialize both sides first (an extra Python pass over the visited set every level)."""
    from pyspark import RDD
    from pyspark.serializers import PairDeserializer

    return RDD(a._jrdd.zip(b._jrdd), a.ctx, PairDeserializer(a._jrdd_deserializer, b._jrdd_deserializer))


def _cut_sizes(sizes: list[int], cut: int) -> list[int]:
    """Slice sizes once a level is cut after `cut` states."""
    out, left = [], cut
    for s in sizes:
        out.append(min(s, left))
        left -= out[-1]
    return out


def _check_rebuildable(model: Model, invariants: list[Invariant]) -> None:
    """Executors rebuild the model from the registry by name and settings: make sure that
    gives this very model."""
    if model.name not in registry.MODELS or type(model) is not registry.model_class(model.name):
        raise BadInput(f"the spark engine rebuilds models by name in executors; {type(model).__name__} is not "
                       f"the registered {model.name!r} model (registered: {', '.join(registry.MODELS)})")
    _, known = registry.build(model.name, **model.settings)
    names = {i.name for i in known}
    missing = [i.name for i in invariants if i.name not in names]
    if missing:
        raise BadInput(f"the spark engine rebuilds invariants by name; not registered for {model.name}: "
                       f"{', '.join(missing)}")
