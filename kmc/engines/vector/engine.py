"""The vector engine: breadth-first search a level at a time, over numpy arrays.

A level is stored compactly, as the packed words of its states (kmc/engines/vector/packing.py),
wide keys coded as the visited set codes them (kmc/engines/vector/levels.py; the compiled engine's
as one-word codes, kmc/engines/vector/treecodes.py), and expanded a chunk of states at a time (`chunk_states`: fewer states the more instances a
model has, as each instance's guard and effect run on the whole chunk; with `workers` N > 1,
N threads expand and deduplicate the next N chunks while this one is checked against the
visited set, since numpy and the compiled kernels release the GIL in their loops; with one
worker, chunk after chunk in this thread): each chunk is unpacked, the invariants are evaluated
on its states (kmc/engines/vector/verdicts.py) and it goes through the level step
(kmc/engines/vector/levelstep.py), every enabled instance on the whole chunk at once, giving
candidate successors with exact packed keys and their ranks in the scalar engine's order.
The candidates are deduplicated keeping each key's first occurrence in that order (parent's
position in its level, then instance id); the keys already visited, or found new by an earlier
chunk of the same level, are dropped; the rest, in that order, are the chunk's part of the
next level. Chunks run in rank order, so the level comes out exactly in the scalar engine's
order; at its end its keys are merged into the sorted visited set. Peak memory is the visited
keys and parent links plus two packed levels and one chunk's candidates, never a whole level's
successors.

Each state keeps its parent's index in the previous level and its instance id; a
counterexample is rebuilt from those and replayed forward from its concrete initial
state, so it is concrete even when states are stored by canonical key
(kmc/engines/vector/outcome.py).

Same distinct states, same order, same counts and the same counterexamples as the
reference engine, kmc/engines/explicit/bfs.py; the tests hold it to that.
"""

from __future__ import annotations

import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor, wait
from functools import partial
from typing import Any, Callable, Sequence

import numpy as np

from kmc.engines.simulation.coverage import Coverage
from kmc.engines import checkpoints
from kmc.engines.vector import checkpoint, outcome
from kmc.engines.vector.disk import Spill, spill
from kmc.engines.vector.edges import Steps
from kmc.model.temporal import Property
from kmc.engines.vector.keyset import New, Rows, Runs, Visited
from kmc.engines.vector.wordcodes import WordCodes
from kmc.engines.vector.levelkeys import LevelKeys, in_sort_order
from kmc.engines.vector.levelset import LevelSet
from kmc.engines.vector.nextlevel import DECODED_BYTES, NextLevel
from kmc.engines.vector.levels import Level
from kmc.engines.vector.links import Parents
from kmc.engines.vector.packed import PackedVisited
from kmc.engines.vector.fresh import Fresh, expand, fresh_of
from kmc.engines.vector.levelstep import Block, LevelStep
from kmc.engines.vector.prefilter import KeyFilter
from kmc.engines.vector.verdicts import Expansion, Verdicts, own_steps
from kmc.engines.result import CheckResult, Progress, anonymous_memory_bytes, release_freed_memory
from kmc.engines.interface import Checkpoint, Limits, ProgressHook, SearchOptions
from kmc.engines.search import Violations
from kmc.engines.symmetry import lexmin
from kmc.errors import BadInput
from kmc.model.core import Invariant, Model, State

U64 = np.uint64
CHUNK_WORK = 1 << 21  # states x instances expanded at once: bounds the candidates held at a time
_SHARES = 4  # with workers, a level is cut in at least this many chunks a worker ...
_SMALLEST_SHARE = 4096  # ... of at least this many states (each chunk costs some Python)
# chunks a worker expands ahead of the one this thread checks: 2PC 9, 2 workers, five pairs,
# 6.55-7.45 s with 2 against 7.07-8.34 s with 1 (the workers waited while this thread accepted);
# kraft v3.5's first 3M states, three pairs, 9.98-10.46 s with 3 against 10.55-10.77 s with 2
# (2PC 9: 3.63-3.84 s against 3.81-3.91 s; about 50 MiB more held)
_AHEAD = 3
_TRIM_FROM = 128 << 20  # a level's end gives freed memory back when the heaps hold this much of it


def chunk_states(instances: int) -> int:
    """The states of a level expanded at once: 36,792 for 3-replica replication's 57 instances,
    9,078 for 3-broker kraft's 231 (its rows are wide too)."""
    return max(1024, CHUNK_WORK // max(1, instances))


def expansion_chunk(step: LevelStep) -> int:
    """`chunk_states`, halved (down to a quarter) until a chunk's candidate ranks fit beside a
    one-word key in 64 bits, where `first_occurrences` sorts key and rank as one word, about
    five times as fast as its argsort (2PC 10 RMs: a 44-bit key; 2**21 candidates a chunk did
    not fit, 2**20 do: 14 % of the workers' time was that argsort)."""
    widest = chunk = chunk_states(step.count)
    if step.fmt.words == 1 and step.packing.words == 1:
        fits = 1 << (64 - step.packing.word_bits[0])  # candidate ranks that fit beside the key
        while chunk * step.count > fits and chunk > widest // 4:
            chunk //= 2
    return chunk


def check(
    model: Model,
    invariants: Sequence[Invariant],
    limits: Limits = Limits(),
    search: SearchOptions = SearchOptions(),
    progress: ProgressHook | None = None,
    properties: Sequence[Property] = (),
    workers: int = 1,
    checkpoint: Checkpoint | None = None,
) -> CheckResult:
    return Search(model, invariants, limits, search, progress, properties, workers=workers,
                  checkpoint=checkpoint).run()


class Search:
    engine = "vector"  # the name results and errors give

    def __init__(self, model: Model, invariants: Sequence[Invariant], limits: Limits, options: SearchOptions,
                 progress: ProgressHook | None, properties: Sequence[Property] = (), *, workers: int = 1,
                 checkpoint: Checkpoint | None = None):
        self.started = time.perf_counter()
        self.checkpoint = checkpoint  # each completed level kept on disk (kmc/engines/vector/checkpoint.py)
        self.in_memory: list[tuple[int, int]] = []  # (number, keys) of the kept levels the visited set holds in memory
        self.kept_last = 0  # the last level kept in the checkpoint
        self.resumed_at: int | None = None
        self.resumed_states = 0  # the states a resumed run loaded
        self.workers = workers
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="kmc-expand") if workers > 1 else None
        self.cpu_started = time.process_time()
        self.properties = list(properties)
        self.levels: list[np.ndarray] = []  # with properties: every level's packed words (kmc/engines/vector/edges.py)
        self.steps = Steps()  # with properties: every step expanded
        self.model = model
        self.invariants = list(invariants)
        self.limits = limits
        self.options = options
        self.progress = progress
        self.step = self.level_step(model, invariants, options)
        self.schema = model.schema
        # wide keys coded as one word each, where the step has the kernels (the compiled engine):
        # the visited set and the levels hold the codes (kmc/engines/vector/treecodes.py)
        self.tree = self.step.tree_codes() if self.step.symmetry is None else None
        self.fmt = self.step.fmt if self.tree is None else self.step.code_format()
        # else keys of three words or more are stored with their other words coded (about 8x smaller for kraft)
        self.codes = WordCodes(self.fmt) if self.fmt.words >= 3 else None
        # levels hold states: as keys only when a key is the state (no symmetry)
        self.coded_levels = self.codes is not None and self.step.symmetry is None
        self.keep_decoded = False  # with tree codes: whether the level being built keeps its words
        self.visited = self.new_visited()
        # the visited keys (and, but for levels in a hash table, the next level's so far): most new keys skip their search
        self.seen = KeyFilter(self.step.marks)
        self.spill: Spill | None = None  # past --memory-limit: visited runs, links and levels on disk
        self.spills = True  # False while a run is to be handed to another engine (Spark), which stops at the limit
        self.verdicts = Verdicts(invariants, options.keep_going)  # the violations and where they are
        self.expansion: Expansion | None = None  # of the level before the last (its states' steps)
        self.stopped_at: tuple[int, int] | None = None  # at a violation: (distinct, generated) up to it
        self.initial: list[State] = []  # level 1, concrete
        self.parents: list[Parents] = []  # per level after the first: parent links
        self.iids: list[np.ndarray] = []  # per level after the first: instance id
        self.generated = 0
        self.level_before = 0  # the states of the level before the last (0: not known, as at --resume)
        self.check_seconds, self.checked_states = 0.0, 0  # the time the workers took to check the states expanded
        self.stopped_by: str | None = None
        self.coverage = Coverage(model) if options.coverage else None
        if checkpoint is not None and (self.properties or self.coverage is not None):
            raise BadInput(f"--checkpoint-dir: the {self.engine} engine keeps levels, not liveness graphs or coverage: "
                           "drop the checkpoint, or --property/--properties/--coverage (--no-properties checks safety "
                           "only)")

    @property
    def level_rows(self) -> int:
        """The rows of a level held as words: the packed words, or one, the code."""
        return self.step.packing.words if self.tree is None else 1

    @property
    def decode(self) -> Callable[[np.ndarray], np.ndarray] | None:
        """The words of codes, where a level holds codes."""
        return None if self.tree is None else self.tree.decode

    def new_visited(self) -> Visited:
        """An empty visited set: coded keys bit-packed (kmc/engines/vector/packed.py)."""
        return Visited(self.fmt) if self.codes is None else PackedVisited(self.fmt, self.codes)

    def level_step(self, model: Model, invariants: Sequence[Invariant], options: SearchOptions) -> LevelStep:
        """How a chunk of a level is expanded (the compiled engine's runs native kernels)."""
        return LevelStep(model, invariants, options.symmetry)

    # -- the search ----------------------------------------------------------------------

    def run(self) -> CheckResult:
        try:
            _, depth = self.explore()
            return self.result(depth)
        finally:
            if self.pool is not None:
                self.pool.shutdown(cancel_futures=True)
            if self.spill is not None:
                self.spill.close()

    @property
    def violations(self) -> Violations:
        return self.verdicts.violations

    @property
    def found_at(self) -> dict[State, tuple[int, int]]:
        """Violating state -> (level, index), the end of its path."""
        return self.verdicts.found_at

    @property
    def distinct(self) -> int:
        """The states found so far, in memory and on disk."""
        return len(self.visited) + (0 if self.spill is None else len(self.spill))

    def explore(self, handoff: int | None = None) -> tuple[np.ndarray | None, int]:
        """Search level by level until the end, a limit, or (with `handoff`) until that many
        distinct states are known: then the last level's keys (states x layouts x words) and
        the depth are returned for another engine to go on from (kmc/engines/spark/engine.py)."""
        limits = self.limits
        self.spills = handoff is None
        initial = self.model.initial_states()
        depth = 0
        level: Level | None = None  # the last level
        if self.checkpoint is not None and self.checkpoint.resume:
            level, depth = checkpoint.resume(self, self.checkpoint.directory)
        elif self.checkpoint is not None:
            checkpoints.check_fresh(self.checkpoint.directory)
        if initial and level is None:
            rows = np.array(initial, dtype=np.int64)
            self.step.check_range(rows, "an initial state")
            first = self.step.block(rows)
            rank = np.arange(len(initial), dtype=np.int64)

            def build(order: np.ndarray) -> Block:
                return self.step.block(first.rows[order])

            def words(order: np.ndarray) -> np.ndarray:
                return np.ascontiguousarray(first.keys[order, 0, :].T)

            level = self._close(self._accept(fresh_of(self, lexmin(first.keys), rank, build, words), rank,
                                             0, NextLevel(self), 0), 0)
            depth = 1

        while level is not None and len(level) and self.stopped_by is None:
            if handoff is not None and self.distinct >= handoff:
                self._check_unexpanded(level, depth)
                break
            if limits.max_depth is not None and depth >= limits.max_depth:
                self.stopped_by = "max-depth"
            elif (exhausted := self._exhausted(level, len(level))) is not None:
                self.stopped_by = exhausted
            if self.stopped_by is not None:
                self._check_unexpanded(level, depth)
                break
            nxt = self._next(level, depth)  # stopped within the level, the rest of it is checked
            self.level_before = len(level)
            level = None  # expanded: let it go before the next level is merged into the visited set
            level = self._close(nxt, depth)
            if len(level):
                depth += 1
            if self.stopped_by not in (None, "violation"):
                self._check_unexpanded(level, depth)  # what was found of the next level
            if self.progress is not None:
                self.progress(Progress(depth, self.distinct, self.generated, len(level),
                                       time.perf_counter() - self.started, resumed_states=self.resumed_states))
        if level is None or handoff is None:
            return None, depth
        if self.step.symmetry is None:  # a state's one layout: its words (unpacked rows are wide: 3 KB on kraft)
            return np.ascontiguousarray(level.words().T)[:, None, :], depth
        return self.step.unpack(level.words()).keys, depth

    def result(self, depth: int) -> CheckResult:
        return outcome.result(self, depth)

    def path_of(self, level: int, index: int) -> tuple[int, list[int]]:
        return outcome.path_of(self, level, index)

    def _next(self, level: Level, depth: int) -> NextLevel:
        """The next level, not yet merged into the visited set: every enabled instance on every
        state of `level`, a chunk at a time, in order. With N workers, the next N chunks are
        expanded and deduplicated in N threads while this one is checked against the visited
        set (numpy and the kernels release the GIL in their loops): the same level for any N."""
        growth = min(2.0, max(0.5, len(level) / self.level_before)) if self.level_before else 1.0
        nxt = NextLevel(self, int(len(level) * growth))  # its table made for as many states as levels grow
        self.keep_decoded = nxt.decoded is not None  # the workers give the new states' words too
        numbered = self.distinct - len(level)  # the number of the level's first state
        chunk = expansion_chunk(self.step)
        # every level on the workers, in chunks of at least _SMALLEST_SHARE states: 2 brokers of
        # kraft (levels of 7,000 states on average), 2 workers, took 3.0 s with 4,096 and 4.0 s
        # when levels shorter than a chunk a worker (9,078) stayed in this thread
        workers = self.workers
        if workers > 1:  # every worker a few chunks of the level
            chunk = max(_SMALLEST_SHARE, min(chunk, -(-len(level) // (_SHARES * workers))))
        starts = list(range(0, len(level), chunk))
        ahead: deque[Future] = deque()

        def submit(i: int) -> None:
            if i < len(starts):
                ahead.append(self._submit(workers > 1, expand, self, level, starts[i], starts[i] + chunk))

        ahead_of = workers * _AHEAD if workers > 1 else 1  # chunks expanded ahead of the one checked
        for i in range(min(ahead_of, len(starts))):
            submit(i)
        checked_to = 0  # the states of `level` checked so far
        for i, start in enumerate(starts):
            if start and (exhausted := self._exhausted(pending=len(level) - start + nxt.size)) is not None:
                self.stopped_by = exhausted
                break
            candidates, fresh, states = ahead.popleft().result()
            self.check_seconds += states.seconds
            self.checked_states += len(states.rows)
            if workers > 1:
                submit(i + ahead_of)
            checked_to = start + len(states.rows)
            if self._record(states.bad, states.rows, depth - 1, numbered, start):
                break
            nxt.steps.append(states.steps)
            if candidates is not None and self.properties:
                self.steps.record(self.step, candidates, numbered + start)
            if candidates is not None and self.coverage is not None:
                self.coverage.enabled += candidates.enabled
                self.coverage.fired += candidates.enabled  # breadth-first search takes every enabled step
            if candidates is not None and fresh is not None:
                self._accept(fresh, candidates.rank, depth, nxt, start, candidates.stutter)
            if self.stopped_by is not None:
                break
            if self.progress is not None:  # a level under way: levels of 60 million states take an hour
                self.progress(Progress(depth, self.distinct + nxt.size, self.generated, len(level),
                                       time.perf_counter() - self.started, resumed_states=self.resumed_states,
                                       expanded=checked_to))
            if workers == 1:
                submit(i + 1)
        wait(ahead)  # a stopped level: the chunks expanded ahead are dropped, their errors too
        if self.stopped_by not in (None, "violation"):
            self._check_unexpanded(level, depth, checked_to, then=nxt.size)
        return NextLevel(self) if self.stopped_by == "violation" else nxt  # the scalar engine found none of it

    def _check_unexpanded(self, level: Level, depth: int, start: int = 0, then: int = 0) -> None:
        """Check the states of `level` (the depth-th, from `start` on) that the run found and will
        not expand, as it stops: with N workers, N chunks at a time (`then`: the states to check
        after these, of the next level, counted in the progress reports)."""
        numbered = self.distinct - len(level)
        size = chunk_states(self.step.count)
        starts = list(range(start, len(level), size))

        def check(at: int) -> tuple[dict[int, np.ndarray], np.ndarray]:
            block = self.step.unpack(level.words(at, min(at + size, len(level))))
            return self.violating(block), block.rows

        ahead = deque(self._submit(True, check, at) for at in starts[:self.workers])
        for i, at in enumerate(starts):
            if self.progress is not None:
                self.progress(Progress(depth, self.distinct, self.generated, len(level),
                                       time.perf_counter() - self.started, to_check=len(level) - at + then))
            bad, rows = ahead.popleft().result()
            if i + self.workers < len(starts):
                ahead.append(self._submit(True, check, starts[i + self.workers]))
            if self._record(bad, rows, depth - 1, numbered, at):
                break
        wait(ahead)

    def violating(self, block: Block) -> dict[int, np.ndarray]:
        """Per invariant still pending, the states of `block` that break it (on a worker thread)."""
        return {k: self.step.violating(block.cols, k) for k in self.violations.pending}

    def _record(self, bad: dict[int, np.ndarray], rows: np.ndarray, level: int, numbered: int, offset: int) -> bool:
        """Record the violations of a chunk of states (`rows`) of level `level` (0 the initial
        states; its first state is the run's `numbered`-th), the chunk starting at `offset` in it.
        True when the run stops at one: then the counts are the scalar engine's at that state."""
        stop = self.verdicts.record(bad, rows, level, offset)
        if stop is None:
            return False
        self.stopped_by = "violation"
        index = offset + stop
        if level == 0:  # the initial states are the steps before it
            generated = self.model.initial_states().index(tuple(int(v) for v in rows[stop])) + 1
        else:
            assert self.expansion is not None
            first, path = self.path_of(level, index)
            parent = int(self.parents[level - 1][index])
            generated = self.expansion.generated_through(parent, own_steps(self.model, self.initial[first], path))
        self.stopped_at = (numbered + index + 1, generated)
        return True

    def _submit(self, shared: bool, fn: Any, *args: Any) -> Future:
        """`fn(*args)` on a worker thread (`shared`), or here and now."""
        if shared and self.pool is not None:
            return self.pool.submit(fn, *args)
        done: Future = Future()
        try:
            done.set_result(fn(*args))
        except Exception as e:  # raised where the result is taken, as from a thread
            done.set_exception(e)
        return done

    def _accept(self, fresh: Fresh, rank: np.ndarray, depth: int, nxt: NextLevel, start: int,
                stutter: np.ndarray | None = None) -> NextLevel:
        """From a chunk's candidates in no earlier level (`fresh`; `rank`: the ranks of all the
        chunk's candidates; the chunk starts at `start` in its level) drop those an earlier
        chunk of this level found and apply --max-states; add the new states to the next level."""
        s, e = fresh.sort_key, fresh.extras
        if self.tree is not None and len(fresh.late):  # keys with parts the tree's tables learn now
            s = s.copy()
            s[fresh.late] = self.tree.code(*fresh.raw)
        elif self.codes is not None and len(fresh.late):  # words the dictionaries learn now
            stores: list[Visited | Runs] = [self.visited, nxt.keys]
            coded = self.codes.code(fresh.raw, stores)
            e = [x if x.dtype.itemsize >= c.dtype.itemsize else x.astype(c.dtype) for x, c in zip(e, coded)]
            for x, c in zip(e, coded):
                x[fresh.late] = c
        # a level in a hash table: one probe a key finds it and adds it, where --max-states
        # cannot drop any (no dearer than the filter's test)
        keys = nxt.keys
        added = isinstance(keys, LevelSet) and self.limits.max_states is None
        if isinstance(keys, LevelSet):
            earlier = keys.insert(s) if added else keys.find(s, e)
        else:
            maybe = np.flatnonzero(self.seen.maybe(s))  # the others were not found earlier in this level
            earlier = np.zeros(len(s), dtype=bool)
            earlier[maybe] = nxt.keys.find(s[maybe], [Rows(x, maybe) for x in e])
        stutters = 0 if stutter is None else len(stutter)  # steps to the parent itself: generated, never new
        keep = np.flatnonzero(~earlier[fresh.order])  # positions in the block (scalar order) of the new keys
        if not len(keep):
            self.generated += len(rank) + stutters
            return nxt
        order = fresh.order[keep]  # the new keys (indices into s), in the scalar engine's order
        level_rank = fresh.first[order]
        cut = self._limit(len(keep), len(nxt))
        every = cut == len(fresh.order)  # each of the chunk's states in no earlier level is kept
        if not added:
            kept = np.sort(order[:cut])
            placed: list[np.ndarray] = []
            if nxt.placed:  # each new key's position in the level
                at = np.empty(len(s), dtype=np.int64)
                at[order[:cut]] = np.arange(nxt.size, nxt.size + cut)
                placed = [at[kept]]
            nxt.keys.add(s[kept], [*(x[kept] for x in e), *placed])
            if not nxt.hashed:  # else the level's keys go in at its end
                self.seen.add(s[kept])
        nxt.size += cut
        if self.stopped_by is None:
            self.generated += len(rank) + stutters
        else:  # the scalar engine stops right after the last state kept
            last = level_rank[cut - 1]
            self.generated += int(np.count_nonzero(rank <= last))
            if stutter is not None:
                self.generated += int(np.count_nonzero(stutter <= last))
        count = self.step.count
        block = None  # the states kept, where the run needs them: the initial states, coverage
        if fresh.block is not None:
            block = fresh.block if every else fresh.block.take(keep[:cut])
        if self.coverage is not None:
            assert block is not None
            self.coverage.reached(block.cols)
            if depth > 0:
                self.coverage.credit(level_rank[:cut] % count)
        if depth == 0:
            assert block is not None
            self.initial = [tuple(int(v) for v in row) for row in block.rows]
        else:
            nxt.parents.append((level_rank[:cut] // count + start).astype(np.int32))
            nxt.iids.append((level_rank[:cut] % count).astype(self.step.iid_dtype))
        if self.tree is not None:  # a level of codes, and while it is small its states' words
            nxt.words.append(s[order[:cut]][None, :])
            if nxt.decoded is not None:
                if fresh.words is None or nxt.size * fresh.words.shape[0] * 8 > DECODED_BYTES:
                    nxt.decoded = None  # it grew past the bound: decoded as it is expanded
                else:
                    nxt.decoded.append(fresh.words if every else fresh.words[:, keep[:cut]])
        elif not self.coded_levels:
            assert fresh.words is not None
            nxt.words.append(fresh.words if every else np.ascontiguousarray(fresh.words[:, keep[:cut]]))
        return nxt

    def _close(self, nxt: NextLevel, depth: int) -> Level:
        """Merge a finished level's keys into the visited set; the level: its keys, sorted, read
        in the order its states were found (or its words, joined)."""
        sorted_keys: tuple[np.ndarray, Sequence[New]]  # the level's keys in sort-key order
        if self.coded_levels:
            assert self.codes is not None and isinstance(nxt.keys, LevelKeys)
            sort_key, place, in_order, lanes, layout = nxt.keys.in_order()
            level = Level(len(in_order), coded=(in_order, lanes), fmt=self.fmt, codes=self.codes, layout=layout,
                          unpack=self.step.unpack_words)
            sorted_keys = (sort_key, [partial(in_sort_order, layout, lanes, w, place)  # a word at a time
                                      for w in range(self.fmt.words - 1)])
        else:
            keys = nxt.keys.merged()
            sorted_keys = (keys.sort_key, keys.extras)
            level = Level.of_words(np.concatenate(nxt.words, axis=1) if len(nxt.words) > 1 else nxt.words[0]
                                   if nxt.words else np.zeros((self.level_rows, 0), dtype=U64), self.decode,
                                   np.concatenate(nxt.decoded, axis=1) if nxt.decoded else None)
        nxt.words.clear()
        nxt.decoded = None
        self.expansion = Expansion(nxt.generated_before, _concat(nxt.steps, np.min_scalar_type(self.step.count))) \
            if depth > 0 else None
        nxt.steps.clear()
        if depth > 0:
            assert self.expansion is not None
            self.parents.append(Parents.of(_concat(nxt.parents, np.int32), len(self.expansion.steps), self.step.count))
            self.iids.append(_concat(nxt.iids, self.step.iid_dtype))
            nxt.parents.clear()
            nxt.iids.clear()
        self.visited.merge(sorted_keys[0], sorted_keys[1], pool=self.pool, ways=self.workers)  # the workers are idle
        if self.tree is not None:
            self.tree.settle()  # the level's codes, now in the visited set, found by the workers from now on
        if nxt.hashed:  # the level's keys, for the workers' searches of the visited set
            self.seen.add(sorted_keys[0])
        self._fit()
        if self.properties and len(level):
            self.levels.append(level.words())
        if self.checkpoint is not None and self.stopped_by is None and len(level):
            checkpoint.keep(self, depth + 1, sorted_keys, level)
            self.in_memory.append((depth + 1, len(level)))
            self.kept_last = depth + 1
        release_freed_memory(at_least=_TRIM_FROM)  # the level's chunks and merges, freed
        return level

    def _fit(self) -> None:
        self.seen.fit([self.visited.sort_key, *([] if self.spill is None else self.spill.sort_keys())])

    # -- limits ------------------------------------------------------------------------------

    def _exhausted(self, level: Level | None = None, pending: int = 0, coming: int = 0) -> str | None:
        """What ends the run now, if anything. Past --memory-limit (less the `coming` bytes the
        caller is about to take) the run goes on (unless it is to be handed to another engine):
        what memory holds of the visited set and the parent links, and `level` (the level about
        to be expanded, at a level's start), go to disk.
        --time-limit keeps time for checking the `pending` states found and not expanded, at
        the rate this run has checked states so far (`_check_unexpanded` runs as it stops)."""
        limits = self.limits
        reserve = pending * self.check_seconds / self.checked_states / self.workers if self.checked_states else 0.0
        if not self.spills or limits.memory_limit is None:
            return limits.exhausted(self.started, reserve)
        if limits.out_of_time(self.started, reserve):
            return "time-limit"
        if anonymous_memory_bytes() + coming >= limits.memory_limit:
            release_freed_memory()  # what the heaps hold freed, first
            if anonymous_memory_bytes() + coming >= limits.memory_limit:
                spill(self, level)
        return None

    def _limit(self, m: int, offset: int) -> int:
        """How many of a chunk's m new states (the level's from `offset` on) the run keeps: all,
        or up to --max-states, where the scalar engine would stop."""
        known = self.distinct + offset
        if self.limits.max_states is not None and known + m >= self.limits.max_states:
            self.stopped_by = "max-states"
            return self.limits.max_states - known
        return m

def _concat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=dtype)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]

