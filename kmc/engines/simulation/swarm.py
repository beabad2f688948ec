"""Swarm simulation: many random walks at once.

For state spaces no exhaustive search finishes, `kmc simulate` runs walkers together, as the
vector engine runs a level: the walkers' states are one block, stepped by one interpretation
(`moves`: the model's compiled kernels when llvmlite is installed, compiled_moves.py, else the
vector interpretation's numpy columns, moves.py; both take the same steps). Each round lists
every walker's enabled instances, picks one per walker (uniformly, or weighted per action
family), takes it, and checks the invariants on the new states. A walker whose walk reaches
`depth` steps, or a state where nothing is enabled, starts the next walk from an initial state.

Walks are numbered; each one's random choices come from its own stream (streams.py), seeded by
the run's seed and its number, so a walk goes the same way in any swarm. With `--walks N`
exactly walks 0 .. N-1 are walked, each to its end: the states seen, the steps and the walks
are the same for any number of walkers and of processes (`Walks.shares`). A run that ends by
`--time-limit` or at a violation depends on how far each walker got.

The distinct states seen are counted exactly, through the vector engine's key set (the
progress hook too: the keys buffered since the last merge are merged before it is called). A
violation is replayed through the scalar interpretation (loops the walk made are cut out);
then a bounded breadth-first search (the vector engine, up to the walk's length) tries to
replace it by a shortest trace.
"""

from __future__ import annotations

import importlib.util
import os
import time
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import numpy as np

from kmc.engines.simulation.coverage import Coverage
from kmc.engines.simulation.moves import VectorMoves
from kmc.engines.simulation.streams import draw, walk_keys
from kmc.engines.result import CheckResult, Progress, Verdict
from kmc.engines.interface import Limits, ProgressHook
from kmc.engines.search import Violations, finish
from kmc.engines.replay import replay_paths
from kmc.engines.vector import engine as vector
from kmc.engines.vector.keyset import Visited, first_occurrences
from kmc.errors import BadInput
from kmc.model.core import Invariant, Model, State

SHORTEN_STATES = 2_000_000  # the bounded search that shortens a trace gives up beyond this many states
SHORTEN_SECONDS = 60.0
_FLUSH = 1 << 20  # keys of new states buffered before they are merged into the seen set
MAX_SEED = 2**64 - 1  # numpy's seeds are non-negative; 64 bits is what a seed prints as in JSON tools
MAX_WEIGHT = 1e6  # a weight's ratio to 1; bounded so that sums over every instance stay finite
PROGRESS_SECONDS = 1.0  # the progress hook is called at most this often (each call merges the buffered keys)


@dataclass
class Findings:
    """A finished swarm's findings as plain data: the keys of the states it saw (sorted,
    distinct), its first violations with their walks, its figures and its coverage counts."""

    sort_key: np.ndarray
    extras: list[np.ndarray]
    first: dict[int, State]
    counts: dict[int, int]
    paths: dict[State, tuple[State, list[int]]]
    walker_steps: int
    walks: int
    deepest: int
    stopped_by: str | None
    coverage: tuple[np.ndarray, ...] | None


@dataclass(frozen=True)
class Walks:
    """How a simulation runs: `walkers` walks at a time, each up to `depth` steps, until
    walks 0 .. `walks`-1 have ended or `time_limit` seconds have passed (whichever is first),
    or an invariant is violated (unless `keep_going`). A share (`part` = (p, parts)) walks the
    walks numbered p, p + parts, p + 2 parts, ..."""

    walkers: int = 20_000
    depth: int = 100
    seed: int = 0
    walks: int | None = None
    time_limit: float | None = None
    weights: Mapping[str, float] = field(default_factory=dict)  # action family -> weight (default 1)
    keep_going: bool = False
    coverage: bool = False  # collect per-action and per-field coverage (kmc/engines/simulation/coverage.py)
    part: tuple[int, int] = (0, 1)

    def shares(self, parts: int) -> list[Walks]:
        """The walks split `parts` ways (over Spark partitions or local processes): the walkers
        as evenly as they go, the walks by number (share p walks p, p + parts, ...); every walk
        keeps its own random stream, so the shares together walk the same walks as one swarm."""

        def split(total: int, p: int) -> int:
            return total // parts + (1 if p < total % parts else 0)

        return [replace(self, walkers=max(1, split(self.walkers, p)), part=(p, parts)) for p in range(parts)]

    def own(self) -> int | None:
        """How many walks this share walks (None: until the time limit)."""
        if self.walks is None:
            return None
        p, parts = self.part
        return len(range(p, self.walks, parts))


COMPILE_LIMIT = 1_000_000  # action instances x state positions: kraft's shipped 342,804 compile in about 30 s


def interpretation(model: Model, invariants: Sequence[Invariant], name: str | None = None) -> Any:
    """The walkers' interpretation: "compiled" (the model's native kernels) or "vector"; by
    default compiled when llvmlite is installed and the model compiles in a minute or so (at
    most COMPILE_LIMIT instances x positions: the quorum specification's shipped kip853
    configuration, 6.9 million, took 12.6 minutes), else vector. Both take the same steps
    (tests/test_simulate_workers.py)."""
    if name is None:
        small = len(model.instances()) * model.schema.width <= COMPILE_LIMIT
        name = "compiled" if small and importlib.util.find_spec("llvmlite") is not None else "vector"
    if name == "compiled":
        from kmc.engines.simulation.compiled_moves import CompiledMoves

        return CompiledMoves(model, invariants)
    return VectorMoves(model, invariants)


def simulate(model: Model, invariants: Sequence[Invariant], walks: Walks,
             progress: ProgressHook | None = None) -> CheckResult:
    """Run the walks; the result's `engine_stats` has walker_steps, walks, steps_per_second,
    deepest_walk, and per violated invariant whether its trace is "shortest" or "as walked"."""
    return Swarm(model, invariants, walks, progress).run()


class Swarm:
    def __init__(self, model: Model, invariants: Sequence[Invariant], walks: Walks,
                 progress: ProgressHook | None, moves: Any = None):
        if walks.walks is None and walks.time_limit is None:
            raise BadInput("a simulation needs an end: --walks N or --time-limit SECONDS")
        if not 0 <= walks.seed <= MAX_SEED:
            raise BadInput(f"--seed {walks.seed}: a seed is an integer from 0 to 2**64-1")
        self.model, self.invariants, self.walks, self.progress = model, list(invariants), walks, progress
        self.moves = moves if moves is not None else interpretation(model, invariants)  # built before the clock starts
        self.started = time.perf_counter()
        self.step = self.moves.step
        self.weight = self._weights(walks.weights)
        self.uniform = bool(np.all(self.weight == 1.0))
        self.seen = Visited(self.step.fmt)
        self.buffer: list[np.ndarray] = []  # words x states, not yet merged into `seen`
        self.buffer_iids: list[np.ndarray] = []  # the instance that found each (count: an initial state)
        self.coverage = Coverage(model) if walks.coverage else None
        self.violations = Violations(invariants)
        self.paths: dict[State, tuple[State, list[int]]] = {}  # violating state -> (initial state, instance ids)
        self.walker_steps = 0
        self.walks_done = 0
        self.deepest = 0
        self.stopped_by: str | None = None
        self.halt: Any = None  # an event another swarm sets at its violation (kmc/engines/simulation/processes.py)
        self.progress_seconds = PROGRESS_SECONDS
        self.next_walk = walks.part[0]  # the number of the next walk this swarm starts
        self.merge_seconds = 0.0  # taking in other swarms' findings (merge)

    def _weights(self, given: Mapping[str, float]) -> np.ndarray:
        families = {inst.action.name for inst in self.step.instances}
        unknown = sorted(set(given) - families)
        if unknown:
            raise BadInput(f"--weight: no action {unknown[0]!r} in model {self.model.name}; "
                           f"actions: {', '.join(sorted(families))}")
        bad = [name for name, w in given.items() if not 0 <= w <= MAX_WEIGHT]  # nan fails too
        if bad:
            raise BadInput(f"--weight {bad[0]}={given[bad[0]]:g}: a weight is a finite number from 0 (never) "
                           f"to {MAX_WEIGHT:,.0f}")
        weight = np.array([float(given.get(inst.action.name, 1.0)) for inst in self.step.instances])
        if not weight.any():
            raise BadInput("--weight: every action has weight 0, so no walk could take a step; give one a weight above 0")
        return weight

    def walk_bytes(self, walkers: int) -> int:
        """About the memory `walkers` walkers take before the first state is seen: per walker its
        path (an instance id per step), its state (the columns and a few copies of them), its
        guards' answers, the choice arrays, and its keys buffered before a merge."""
        step = self.step
        per_walker = (self.walks.depth * np.dtype(step.iid_dtype).itemsize
                      + step.schema.width * (3 * np.dtype(step.dtype).itemsize + 8) + step.count
                      + 10 * 8 + 4 * 8 * step.packing.words)
        return walkers * per_walker

    def check_memory(self, walkers: int) -> None:
        """BadInput when `walkers` walkers would not fit in this machine's memory."""
        need, have = self.walk_bytes(walkers), physical_memory()
        if have is not None and need > have:
            raise BadInput(f"--walkers {walkers:,} with --depth {self.walks.depth:,} needs about "
                           f"{need / 2**30:,.1f} GiB before the first state is seen; this machine has "
                           f"{have / 2**30:,.1f} GiB of memory: use fewer walkers or a smaller depth")

    # -- the walks ---------------------------------------------------------------------------

    def run(self) -> CheckResult:
        self.walk()
        return self.result()

    def walk(self) -> None:
        """Run the walks until they end (a violation, --walks, --time-limit)."""
        self.check_memory(self.walks.walkers)
        self.initial = np.array(self.model.initial_states(), dtype=np.int64)
        if not len(self.initial):
            raise BadInput(f"model {self.model.name} has no initial state")
        self.step.check_range(self.initial, "an initial state")
        own = self.walks.own()
        n = self.walks.walkers if own is None else min(self.walks.walkers, own)
        self.walk_id = self._take(n)
        self.key = walk_keys(self.walks.seed, self.walk_id)
        self.start = self._starts(self.key)
        self.moves.begin(self.initial)
        self.moves.place(None, self.start)
        self.path = np.zeros((self.walks.depth, n), dtype=self.step.iid_dtype)
        self.length = np.zeros(n, dtype=np.int64)
        everyone = np.arange(n)
        self._see(self.moves.words(everyone), np.full(n, self.step.count))
        if self.coverage is not None:
            self.coverage.reached(self.initial.T)
        self._check_initial()
        rounds = 0
        reported = self.started
        self._stop_if_done()
        while self.stopped_by is None:
            moved, choice = self._round()
            self._check(moved)
            self._see(self.moves.words(moved), choice)
            rounds += 1
            ended = self.length == self.walks.depth
            stuck = np.ones(len(ended), dtype=bool)
            stuck[moved] = False
            ended |= stuck  # nothing enabled: the walk stutters forever, so it ends here
            self.deepest = max(self.deepest, int(self.length.max()))
            if ended.any():
                self._restart(ended)
            self._stop_if_done()
            if self.progress is not None and time.perf_counter() - reported >= self.progress_seconds:
                self._flush()  # the distinct states so far, exactly: the buffered keys merged first
                reported = time.perf_counter()
                self.progress(Progress(rounds, len(self.seen), self.walker_steps, len(self.length),
                                       reported - self.started))
        self._flush()

    def _take(self, n: int) -> np.ndarray:
        """The numbers of this swarm's next (up to) `n` walks."""
        parts = self.walks.part[1]
        stop = self.next_walk + n * parts
        if self.walks.walks is not None:
            stop = min(stop, self.walks.walks)
        taken = np.arange(self.next_walk, max(stop, self.next_walk), parts, dtype=np.int64)
        self.next_walk += len(taken) * parts
        return taken

    def _starts(self, keys: np.ndarray) -> np.ndarray:
        """Each walk's initial state (an index into the initial states): its draw 0."""
        return np.minimum((draw(keys, 0) * len(self.initial)).astype(np.int64), len(self.initial) - 1)

    def _round(self) -> tuple[np.ndarray, np.ndarray]:
        """One step of every walker that has an enabled instance: the walkers that moved and the
        instance each took."""
        u = draw(self.key, self.length + 1)
        moved, choice, enabled = self.moves.round(u, None if self.uniform else self.weight, self.violations.pending)
        if self.coverage is not None:
            self.coverage.enabled += enabled
            self.coverage.fired += np.bincount(choice, minlength=self.step.count)
            self.coverage.reached(self.moves.columns(moved))
        self.path[self.length[moved], moved] = choice
        self.length[moved] += 1
        self.walker_steps += len(moved)
        return moved, choice.astype(np.int64)

    def _restart(self, ended: np.ndarray) -> None:
        """The walkers whose walk ended start this swarm's next walks; those left without one
        (every walk of --walks started) leave the swarm."""
        who = np.flatnonzero(ended)
        self.walks_done += len(who)
        ids = self._take(len(who))
        again = who[: len(ids)]
        self.walk_id[again] = ids
        self.key[again] = walk_keys(self.walks.seed, ids)
        self.start[again] = self._starts(self.key[again])
        self.moves.place(again, self.start[again])
        self.length[again] = 0
        self._see(self.moves.words(again), np.full(len(again), self.step.count))
        if len(ids) < len(who):
            alive = np.ones(len(ended), dtype=bool)
            alive[who[len(ids):]] = False
            self.walk_id, self.key, self.start = self.walk_id[alive], self.key[alive], self.start[alive]
            self.length, self.path = self.length[alive], np.ascontiguousarray(self.path[:, alive])
            self.moves.keep(alive)

    def _stop_if_done(self) -> None:
        if self.stopped_by is not None:
            return
        if not len(self.length):
            self.stopped_by = "walks"  # every one of this swarm's walks has ended
        elif self.halt is not None and self.halt.is_set():
            self.stopped_by = "halted"  # another swarm's violation ended the run
        elif Limits(time_limit=self.walks.time_limit).exhausted(self.started) is not None:
            self.stopped_by = "time-limit"

    # -- invariants and states seen ------------------------------------------------------------

    def _check_initial(self) -> None:
        cols = np.ascontiguousarray(self.initial.T.astype(self.step.dtype))
        for k in self.violations.pending:
            bad = self.step.violating(cols, k)
            if bad.size:
                state = tuple(int(v) for v in self.initial[bad[0]])
                if k not in self.violations.first:
                    self.paths[state] = (state, [])
                self.violations.record_many(k, state, bad.size)
                if not self.invariants[k].report and not self.walks.keep_going:
                    self.stopped_by = "violation"

    def _check(self, who: np.ndarray) -> None:
        """Check the pending invariants on the walkers `who`; record the first violation of each
        (of the lowest-numbered walk, for a deterministic run) with its walk."""
        if not len(who):
            return
        for k in self.violations.pending:
            bad = self.moves.violating(who, k)
            if not bad.size:
                continue
            w = int(who[bad][np.argmin(self.walk_id[who[bad]])])
            state = self.moves.state(w)
            if k not in self.violations.first:
                first = tuple(int(v) for v in self.initial[self.start[w]])
                self.paths[state] = (first, [int(i) for i in self.path[: self.length[w], w]])
            self.violations.record_many(k, state, bad.size)
            if not self.invariants[k].report and not self.walks.keep_going:
                self.stopped_by = "violation"

    def _see(self, words: np.ndarray, iids: np.ndarray) -> None:
        if words.shape[1]:
            self.buffer.append(words)
            self.buffer_iids.append(iids)
        if sum(b.shape[1] for b in self.buffer) >= _FLUSH:
            self._flush()

    def _flush(self) -> None:
        if not self.buffer:
            return
        words = np.concatenate(self.buffer, axis=1)
        iids = np.concatenate(self.buffer_iids)
        self.buffer, self.buffer_iids = [], []
        s, e = self.step.split(words)
        s, e, first = first_occurrences(s, e, np.arange(len(s), dtype=np.int64))
        known, pos = self.seen.find(s, e)
        new = ~known
        self.seen.merge(s[new], [x[new] for x in e], pos[new])
        if self.coverage is not None:
            found_by = iids[first[new]].astype(np.int64)
            self.coverage.credit(found_by[found_by < self.step.count])

    # -- the result --------------------------------------------------------------------------

    def outcome(self) -> Findings:
        """What a finished swarm found, as plain data (a Spark task sends it to the driver)."""
        cov = self.coverage
        return Findings(self.seen.sort_key.copy(), [e.copy() for e in self.seen.extras], dict(self.violations.first),
                       dict(self.violations.counts), dict(self.paths), self.walker_steps, self.walks_done,
                       self.deepest, self.stopped_by,
                       None if cov is None else (cov.enabled, cov.fired, cov.new_states, cov.lo, cov.hi))

    def merge(self, outcomes: Sequence[Findings]) -> None:
        """Take in the outcomes of swarms run elsewhere (in order: the first one's violations
        come first), as if this swarm had walked them all."""
        merging = time.perf_counter()
        self._flush()
        for o in outcomes:
            self._adopt(o.sort_key, o.extras)
            for k, state in o.first.items():
                if k not in self.violations.first:
                    self.violations.first[k] = state
                    self.paths[state] = o.paths[state]
            for k, c in o.counts.items():
                self.violations.counts[k] += c
            self.walker_steps += o.walker_steps
            self.walks_done += o.walks
            self.deepest = max(self.deepest, o.deepest)
            if o.stopped_by == "violation" or self.stopped_by is None:
                self.stopped_by = o.stopped_by
            if self.coverage is not None and o.coverage is not None:
                enabled, fired, new, lo, hi = o.coverage
                self.coverage.enabled += enabled
                self.coverage.fired += fired
                self.coverage.new_states += new
                np.minimum(self.coverage.lo, lo, out=self.coverage.lo)
                np.maximum(self.coverage.hi, hi, out=self.coverage.hi)
        self.merge_seconds = time.perf_counter() - merging

    def _adopt(self, sort_key: np.ndarray, extras: list[np.ndarray]) -> None:
        """Merge another swarm's seen keys (sorted and distinct already, so not sorted again):
        the first set is taken as it is, the others merged in one pass each."""
        if not len(self.seen):
            self.seen = Visited.holding(self.step.fmt, sort_key, extras)
            return
        known, pos = self.seen.find(sort_key, extras)
        new = ~known
        self.seen.merge(sort_key[new], [x[new] for x in extras], pos[new])

    def result(self, engine: str = "simulate", extra: Mapping[str, Any] | None = None) -> CheckResult:
        links = replay_paths(self.model, self.paths, "simulation")
        result = finish(self.model, engine, self.started, self.violations, links.get,
                        distinct=len(self.seen), generated=self.walker_steps, depth=self.deepest + 1,
                        stopped_by=self.stopped_by or "walks")
        seconds = time.perf_counter() - self.started
        traces = {}
        for name, verdict in result.invariants.items():
            if verdict.trace is not None and not verdict.report:
                traces[name] = self._shorten(name, verdict)
        if self.coverage is not None:
            result.coverage = self.coverage.to_json()
        result.engine_stats = {
            "walkers": self.walks.walkers, "depth": self.walks.depth, "seed": self.walks.seed,
            "walker_steps": self.walker_steps, "walks": self.walks_done,
            "steps_per_second": round(self.walker_steps / seconds) if seconds > 0 else None,
            "deepest_walk": self.deepest, "traces": traces, "interpretation": self.moves.name, **(extra or {}),
        }
        return result

    def _shorten(self, name: str, verdict: Verdict) -> str:
        """Replace a walked trace by a shortest one when a bounded breadth-first search up to its
        length finishes in time; "shortest" or "as walked"."""
        trace = verdict.trace
        assert trace is not None
        [inv] = [i for i in self.invariants if i.name == name]
        limits = Limits(max_depth=trace.length + 1, max_states=SHORTEN_STATES, time_limit=SHORTEN_SECONDS)
        found = vector.check(self.model, [inv], limits).invariants[name]
        if found.trace is not None and found.trace.length <= trace.length:
            verdict.trace = found.trace
            return "shortest"
        return "as walked"


def physical_memory() -> int | None:
    """This machine's memory in bytes (None where the system does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
