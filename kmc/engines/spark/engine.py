"""The Spark engine: the vector engine's level step, run in Spark executors on partitions of
each level, with the visited set partitioned by key across the executors.

Partitioning (as in parallel Murphi and distributed TLC): every state is owned by the
partition its canonical key hashes to (kmc/engines/spark_tasks.owner_of). An owner keeps its
part of the visited set (one sorted key array) and the states of the last level it found new.
Each BFS level is one shuffle between two steps, each one Python task per partition over
numpy batches:

1. expand: each owner runs the level step (kmc/engines/vector/levelstep.py) on its states of the
   level, deduplicates the candidates map-side (each key once, with its smallest path rank)
   and sends one batch per owner partition (the only shuffle);
2. own: each owner lines up what it received with its part of the visited set (the same
   partitioner on both sides, so a `zip` and no join), keeps each key's smallest rank, drops
   the visited keys, merges the new ones in and evaluates the invariants on its new states.

A path rank (kmc/engines/spark/ranks.py) is a state's smallest path from an initial state
written as a number, so ranks order each level exactly as the scalar and vector engines do:
the first violation is the violating state of smallest rank, the same state they report, and
its rank spells the counterexample, which is replayed through the scalar backend. The driver
holds only per-partition figures (sizes, each invariant's smallest violating rank and state)
and loops over levels.

Executors get the model as a `ModelFactory` (kmc/engines/spark/factory.py): the model's class
and the function making its invariants by module and name, its settings and the invariant
names; modules they cannot import are shipped to them. No model catalogue is involved.

Every level's owner partitions are persisted and checkpointed locally (lineage cut at each
level); a task that fails is retried by Spark from the previous level's stored partitions,
with the same result. On a local or loopback master their arrays are kept as files on the
host instead, and Spark keeps only their names (kmc/engines/spark/parts.py). With a
checkpoint directory each completed level is also written as Parquet
(kmc/engines/spark/store.py), so a run whose driver died can be resumed. Below
--spark-threshold states, levels run in-process through the vector engine first.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from kmc.engines.compiled import engine as compiled
from kmc.engines import checkpoints
from kmc.engines.spark import failures, parts
from kmc.engines.spark.defaults import DEFAULT_MASTER, DEFAULT_THRESHOLD
from kmc.engines.spark import ranks as ranks_
from kmc.engines.spark import store
from kmc.engines.spark import tasks
from kmc.engines.spark.factory import ModelFactory
from kmc.engines.spark.wire import Packed
from kmc.engines.vector import engine as vector
from kmc.engines.vector.keyset import first_occurrences
from kmc.engines.vector.levelstep import LevelStep
from kmc.engines.result import CheckResult, Progress
from kmc.engines.interface import Limits, ProgressHook, SearchOptions
from kmc.engines.search import Violations, finish
from kmc.engines.spark.session import is_loopback, start, zip_single
from kmc.errors import BadInput
from kmc.engines.symmetry import lexmin
from kmc.engines.replay import replay_paths
from kmc.model.core import Invariant, Model, State

_SAMPLE = 1024  # ranks per partition per round when selecting the state where --max-states cuts a level


@dataclass(frozen=True)
class SparkOptions:
    master: str = DEFAULT_MASTER
    partitions: int | None = None  # default: the context's default parallelism
    conf: tuple[tuple[str, str], ...] = ()
    checkpoint_dir: Path | None = None
    resume: bool = False
    threshold: int | None = None  # levels run in-process until this many states are known (default
    # DEFAULT_THRESHOLD; 0, every level on Spark, with a checkpoint_dir)
    factory: ModelFactory | None = None  # how executors rebuild the model; default ModelFactory.of(model, invariants)
    fault: tasks.Fault | None = None  # test-only: fail one task once
    park: bool | None = None  # owner partitions as files on the host; None: when the master is local or loopback


def check(
    model: Model,
    invariants: Sequence[Invariant],
    limits: Limits = Limits(),
    search: SearchOptions = SearchOptions(),
    progress: ProgressHook | None = None,
    options: SparkOptions | None = None,
) -> CheckResult:
    options = options or SparkOptions()
    try:
        return _Run(model, invariants, limits, search, progress, options).run()
    except Exception as e:
        failed = failures.explained(e, options.checkpoint_dir is not None)
        if failed is None:
            raise
        raise failed from e


class _Run:
    def __init__(self, model: Model, invariants: Sequence[Invariant], limits: Limits, search: SearchOptions,
                 progress: ProgressHook | None, options: SparkOptions):
        self.started = time.perf_counter()
        self.model = model
        self.invariants = list(invariants)
        self.limits = limits
        self.search = search
        self.progress = progress
        self.options = options
        if options.checkpoint_dir is not None and options.threshold:
            raise BadInput("--spark-threshold: a checkpointed run keeps every level on Spark (it must be 0 or absent "
                           "with --checkpoint-dir)")
        self.threshold = (0 if options.checkpoint_dir is not None else DEFAULT_THRESHOLD) \
            if options.threshold is None else options.threshold
        if options.factory is None:
            self.factory = ModelFactory.of(model, self.invariants)
        else:
            self.factory = options.factory
            self.factory.check(model, self.invariants)
        self.step = LevelStep(model, self.invariants, search.symmetry)
        self.compiled = compiled.compiles(model, self.invariants, search.symmetry)  # the executors' level step
        self.violations = Violations(self.invariants)
        self.found_at: dict[State, tuple[int, int]] = {}  # violating state -> (level, path rank)
        self.initial: list[State] = []
        self.owned: Any = None  # RDD of Owned, one per owner partition: the visited set and the last level
        self.level_size = 0  # states in the last level
        self.distinct = 0
        self.generated = 0
        self.stopped_by: str | None = None
        self.level_seconds: list[float] = []
        self.shuffled = 0
        self.wire_seconds: list[float] = []  # per Spark level: Arrow encoding and decoding, all tasks
        self.resumed_at: int | None = None
        self.in_process_levels = 0
        self.b = max(1, (self.step.count - 1).bit_length())
        self.home: str | None = None  # where owner partitions are kept as files (executors on this host)

    def _start_spark(self, initial_count: int) -> None:
        from pyspark import StorageLevel

        self.storage = StorageLevel.MEMORY_AND_DISK
        options = self.options
        begun = start(options.master, options.partitions, dict(options.conf))
        self.session_seconds = begun.seconds
        self.session = begun.session
        self.sc = begun.session.sparkContext
        self.partitions = options.partitions or max(self.sc.defaultParallelism, 1)
        if options.park if options.park is not None else is_loopback(self.sc.master):
            self.home = parts.new_root()
        self.factory.ship(self.sc)
        self.b0 = max(1, (initial_count - 1).bit_length())
        self.job = tasks.Job(self.factory, self.search.symmetry, self.partitions, self.b0, self.b, options.fault,
                             self.compiled)
        self.identity = {**self.factory.identity(), "symmetry": self.search.symmetry,
                         "keep_going": self.search.keep_going, "partitions": self.partitions}

    # -- the search ----------------------------------------------------------------------

    def run(self) -> CheckResult:
        try:
            return self._search()
        finally:
            if self.home is not None:
                parts.drop(self.home)

    def _search(self) -> CheckResult:
        root = self.options.checkpoint_dir
        if self.options.resume:
            assert root is not None
            manifest = store.proved(root)  # before Spark starts: a checkpoint that does not prove itself is refused
            self._start_spark(len(self.model.initial_states()))
            depth = self._resume(root, manifest)
        elif root is None and self.threshold > 0:
            engine = compiled.Search if self.compiled else vector.Search
            search = engine(self.model, self.invariants, self.limits, self.search, self.progress)
            level, depth = search.explore(handoff=self.threshold)
            if level is None or not len(level) or search.stopped_by is not None:
                done = search.result(depth)  # the whole run stayed below --spark-threshold
                done.engine = "spark"
                done.engine_stats = {"in_process_levels": depth, "spark_levels": 0, "kernels": self._kernels()}
                return done
            self._start_spark(len(search.initial))
            self._from_vector(search, level, depth)
            del search, level  # the in-process search's tables and level: the executors hold the states now
        else:
            if root is not None:
                store.check_fresh(root)
            depth = self._initial()
            self._save(depth)
        while self.stopped_by is None and self.level_size:
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
                                       time.perf_counter() - self.started,
                                       figures={"MiB shuffled": round(self.shuffled / 2**20, 1)}))
        links = replay_paths(self.model, self._paths(), "spark")
        extra_words = sum(np.dtype(dt).itemsize for dt in self.step.fmt.extra_dtypes)
        result = finish(self.model, "spark", self.started, self.violations, links.get,
                        distinct=self.distinct, generated=self.generated, depth=depth,
                        stopped_by=self.stopped_by, symmetry=self.step.symmetry is not None,
                        bytes_per_state=8 + extra_words)
        result.engine_stats = {
            "master": self.sc.master,
            "partitions": self.partitions,
            "kernels": self._kernels(),
            "session_start_seconds": round(self.session_seconds, 2),
            "levels": len(self.level_seconds),
            "in_process_levels": self.in_process_levels,
            "median_level_seconds": round(statistics.median(self.level_seconds), 3) if self.level_seconds else None,
            "shuffle_bytes": self.shuffled,
            "parts": "files" if self.home is not None else "block manager",
            "median_level_arrow_seconds": round(statistics.median(self.wire_seconds), 4) if self.wire_seconds else None,
            **({"resumed_at": self.resumed_at} if self.resumed_at else {}),
        }
        return result

    def _kernels(self) -> str:
        """What ran the model in the executors: its compiled kernels, or numpy over columns."""
        return "compiled" if self.compiled else "numpy"

    def _pin(self, rdd: Any) -> Any:
        """Keep an RDD's partitions (memory, spilling to disk) and cut its lineage there."""
        rdd.persist(self.storage)
        rdd.localCheckpoint()
        return rdd

    def _initial(self) -> int:
        """Level 1, the initial states: deduplicated and checked on the driver (they are
        few), then handed to their owners."""
        initial = self.model.initial_states()
        self._start_spark(len(initial))
        if not initial:
            return 0
        step = self.step
        rows = np.array(initial, dtype=np.int64)
        step.check_range(rows, "an initial state")
        block = step.block(rows)
        s, e = step.fmt.split(lexmin(block.keys))
        s, e, first = first_occurrences(s, e, np.arange(len(initial), dtype=np.int64))
        order = np.argsort(first)  # the distinct initial states in the scalar engine's order
        n = len(order)
        words = None if step.symmetry is None else block.keys[first[order], 0, :]  # the states packed
        level = Packed(s[order], [x[order] for x in e], ranks_.initial(n, 1), words)
        cut = self._cut_local(level, depth=0)
        self.distinct = cut
        self.generated = len(initial) if self.stopped_by is None else int(first[order][cut - 1]) + 1
        self.initial = [tuple(int(v) for v in row) for row in block.rows[first[order[:cut]]]]
        self._distribute(level.take(np.arange(cut)), level.take(np.arange(cut)), 1)
        return 1

    def _cut_local(self, level: Packed, depth: int) -> int:
        """The cut of a level held on the driver (the initial states), as _limit does it."""
        figures = tasks.evaluate(self.step, level, self.violations.pending)

        def up_to(last: int, reports: tuple[int, ...]) -> tuple[int, dict[int, int]]:
            kept = ranks_.count_le(level.ranks, last)
            found = tasks.evaluate(self.step, level, reports, last).found
            return kept, {k: f.count for k, f in found.items()}

        def kth(k: int) -> int:
            return ranks_.to_int(level.ranks[ranks_.lexorder(level.ranks)[k - 1]])

        return self._limit([figures], depth, up_to, kth)

    def _distribute(self, visited: Packed, level: Packed, depth: int) -> None:
        """Hand the executors states known on the driver: every visited key to its owner, and
        the states of the last level (level `depth`, counted from 1, with their ranks) to theirs."""
        P = self.partitions
        key_owner = tasks.owner_of(visited.sort_key, P)
        level_owner = tasks.owner_of(level.sort_key, P)
        batches = []
        for o in range(P):
            keys = visited.take(np.flatnonzero(key_owner == o))
            mine = level.take(np.flatnonzero(level_owner == o))
            batches.append((keys, mine))
        if self.home is not None:  # the executors share this host: park the partitions here
            held = [tasks.keep(self.home, depth - 1, o, tasks.seeded(self.step, depth - 1, keys, mine))
                    for o, (keys, mine) in enumerate(batches)]
            seeded = self.sc.parallelize(held, P)
        else:
            seeded = self.sc.parallelize(batches, P).mapPartitions(partial(tasks.seed, self.job, depth - 1))
        self.owned = self._pin(seeded)
        stored = self.owned.mapPartitionsWithIndex(tasks.materialized).collect()
        if [c for _, c in stored] != [1] * P:
            raise RuntimeError("kmc spark engine: the partitions handed over are not one element each")
        self.level_size = len(level)

    def _from_vector(self, search: vector.Search, keys: np.ndarray, depth: int) -> None:
        """Go on from where the in-process search stopped (below --spark-threshold): its last
        level (`keys`: states x layouts x words), with path ranks rebuilt from its parent links,
        and its visited keys go to the executors; the violations it found keep their paths as
        ranks."""
        self.initial = search.initial
        self.distinct, self.generated = len(search.visited), search.generated
        self.violations = search.violations
        step, b, b0 = self.step, self.b, self.b0
        ranks = ranks_.initial(len(self.initial), ranks_.words_for(b0))
        for d, (parents, iids) in enumerate(zip(search.parents, search.iids), start=1):
            ranks = ranks_.extend(ranks[parents.indices()], iids, b, ranks_.words_for(ranks_.bits_at(b0, b, d)))
        s, e = step.fmt.split(lexmin(keys))
        last = Packed(s, e, ranks, None if step.symmetry is None else keys[:, 0, :])
        sort_key, extras = search.visited.sort_key, list(search.visited.extras)
        if search.codes is not None:  # the vector engine stores wide keys coded: Spark takes them whole
            extras = search.codes.decode(extras)
        elif search.tree is not None:  # the compiled engine stores wide keys as tree codes: the same
            sort_key, extras = search.step.split(search.tree.decode(sort_key))  # native sort keys
            # by owner, then by sort key: each owner's share is one slice, gathered in order
            order = np.lexsort((sort_key, tasks.owner_of(sort_key, self.partitions)))
            sort_key, extras = sort_key[order], [x[order] for x in extras]
        visited = Packed(sort_key, extras, np.zeros((len(search.visited), 1), dtype=np.uint64), None)
        for state, (lv, index) in search.found_at.items():
            init, path = search.path_of(lv, index)
            rank = init
            for iid in path:
                rank = (rank << b) | iid
            self.found_at[state] = (lv, rank)
        self._distribute(visited, last, depth)
        self.in_process_levels = depth

    def _next(self, depth: int) -> int:
        """Level depth + 1 from level depth (both counted from 1): the two steps, then the
        figures in one job. Returns the size kept."""
        job, P, prev = self.job, self.partitions, self.owned
        pending = tuple(self.violations.pending)
        sent = prev.mapPartitionsWithIndex(partial(tasks.expand, job, depth - 1)).partitionBy(P, tasks.same_partition)
        if self.home is not None:  # owners read the level before from its files: one Python task each
            owned = self._pin(sent.mapPartitionsWithIndex(partial(tasks.own_parked, job, self.home, depth, pending)))
            figures = [parked.figures for parked in owned.collect()]  # small records: no Python task
        else:
            owned = self._pin(zip_single(prev, sent.mapPartitions(tasks.gather)).mapPartitionsWithIndex(
                partial(tasks.own, job, self.home, depth, pending)))
            figures = [f for _, f in sorted(owned.mapPartitionsWithIndex(tasks.figures).collect(), key=lambda x: x[0])]
        if len(figures) != P:
            raise RuntimeError("kmc spark engine: a level's partitions are not one element each")
        expanded = sorted((e for f in figures for e in f.expanded), key=lambda e: e.partition)
        self.shuffled += sum(f.shuffled_bytes for f in figures)
        self.wire_seconds.append(sum(e.encode_seconds for e in expanded) + sum(f.decode_seconds for f in figures))

        def up_to(last: int, reports: tuple[int, ...]) -> tuple[int, dict[int, int]]:
            got = owned.mapPartitions(partial(tasks.up_to, job, last, reports)).collect()
            counts: dict[int, int] = {}
            for _, c in got:
                for k, v in c.items():
                    counts[k] = counts.get(k, 0) + v
            return sum(kept for kept, _ in got), counts

        cut = self._limit(figures, depth, up_to, partial(self._kth, owned))
        if self.stopped_by is None:
            self.generated += sum(e.generated for e in expanded)
        else:  # as the scalar engine: count the candidates up to the last state kept
            assert self.cut_rank is not None  # _limit sets it whenever it stops the run
            self.generated += sum(prev.mapPartitions(partial(tasks.generated_up_to, job, depth - 1,
                                                             self.cut_rank)).collect())
        self.distinct += cut
        prev.unpersist()
        if self.home is not None:  # the files of the level before prev's: no task reads them again
            parts.drop_level(self.home, depth - 2)
        self.owned = owned
        self.level_size = cut
        return cut

    def _limit(self, figures: list[tasks.Figures], depth: int, up_to: Any, kth: Any) -> int:
        """How many states of the new level the run keeps (as the other engines: all, or up
        to the first violation unless --continue, or up to --max-states), recording the
        violations among them. `up_to(rank, reports)` counts the states of rank <= rank and
        the reports they fail; `kth(k)` is the rank of the k-th state of the level."""
        m = sum(f.size for f in figures)
        last: int | None = None  # the rank of the last state kept, when the level is cut
        full = False
        if self.limits.max_states is not None and self.distinct + m >= self.limits.max_states:
            last, full = kth(self.limits.max_states - self.distinct), True
        first: dict[int, tasks.Found] = {}
        for f in figures:
            for k, found in f.found.items():
                if k not in first or found.rank < first[k].rank:
                    first[k] = found
        safety = [f.rank for k, f in first.items()
                  if not self.invariants[k].report and (last is None or f.rank <= last)]
        if safety and not self.search.keep_going:
            last = min(safety)
            self.stopped_by = "violation"
        kept, counts = m, {}
        if last is not None:
            reports = tuple(k for k in first if self.invariants[k].report)
            kept, counts = up_to(last, reports)
        for k, found in sorted(first.items()):
            if last is not None and found.rank > last:
                continue
            count = counts.get(k, 0) if last is not None else sum(f.found[k].count for f in figures if k in f.found)
            if k not in self.violations.first:
                self.found_at[found.row] = (depth, found.rank)
            self.violations.record_many(k, found.row, count)
        if full and self.stopped_by is None:
            self.stopped_by = "max-states"
        self.cut_rank = last
        return kept

    def _kth(self, owned: Any, k: int) -> int:
        """The rank of the k-th smallest state of the level held by `owned` (1-based),
        narrowing (lo, hi] by samples: the driver never holds more than a few thousand ranks."""
        lo: int | None = None
        hi: int | None = None
        below = 0  # states of rank <= lo
        while True:
            got = owned.mapPartitions(partial(tasks.sample, self.job, lo, hi, _SAMPLE)).collect()
            inside = sum(n for n, _ in got)
            values = sorted({v for _, vs in got for v in vs})
            if inside <= _SAMPLE * len(got) and all(n == len(vs) for n, vs in got):
                return sorted(v for _, vs in got for v in vs)[k - below - 1]
            per = owned.mapPartitions(partial(tasks.counts_le, self.job, values)).collect()
            totals = [sum(c[i] for c in per) for i in range(len(values))]
            i = next(i for i, t in enumerate(totals) if t >= k)
            if totals[i] == k:
                return values[i]
            if i > 0:
                lo, below = values[i - 1], totals[i - 1]
            hi = values[i]

    # -- checkpoints ---------------------------------------------------------------------------

    def _save(self, depth: int) -> None:
        """With --checkpoint-dir, write the level just completed, then the manifest naming it
        (a run that stopped writes nothing more: resuming it redoes its last level)."""
        root = self.options.checkpoint_dir
        if root is None or self.stopped_by is not None or not self.level_size:
            return
        store.write_level(self.session, root, depth, self.owned, self.job)
        store.write_manifest(root, {
            **self.identity,
            "depth": depth,
            "level_size": self.level_size,
            "distinct": self.distinct,
            "generated": self.generated,
            "shuffle_bytes": self.shuffled,
            **checkpoints.violations_record(self.initial, self.violations, self.found_at),
        })

    def _resume(self, root: Path, m: dict[str, Any]) -> int:
        """The state of the run kept in `root` (its manifest `m`, proved), back in the executors
        and the driver."""
        store.same_run(root, m, self.identity)
        depth = int(m["depth"])
        self.distinct, self.generated, self.shuffled = m["distinct"], m["generated"], m["shuffle_bytes"]
        self.level_size = m["level_size"]
        self.initial = [tuple(s) for s in m["initial"]]
        self.violations.first = {int(k): tuple(v) for k, v in m["first"].items()}
        self.violations.counts = {int(k): v for k, v in m["counts"].items()}
        self.found_at = {tuple(st): (lv, rank) for st, lv, rank in m["found_at"]}
        self.owned = self._pin(store.load_owned(self.session, root, depth, self.job, self.home))
        stored = self.owned.mapPartitionsWithIndex(tasks.materialized).collect()
        if [n for _, n in stored] != [1] * self.partitions:
            raise RuntimeError(f"kmc spark engine: the run in {root} does not load as one element per partition")
        store.check_loaded(self.owned, self.job, root, m)
        self.resumed_at = depth
        return depth

    # -- counterexamples ---------------------------------------------------------------------

    def _paths(self) -> dict[State, tuple[State, list[int]]]:
        """For each violating state: its initial state and the instance ids leading to it,
        spelled by its path rank."""
        paths = {}
        for state, (level, rank) in self.found_at.items():
            init, steps = ranks_.path(rank, self.b0, self.b, level)
            paths[state] = (self.initial[init], steps)
        return paths

