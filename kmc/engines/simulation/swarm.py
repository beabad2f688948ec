"""Swarm simulation: many random walks at once, over numpy columns.

For state spaces no exhaustive search finishes, `kmc simulate` runs N walkers together
through the vector interpretation, as the vector engine runs a level: the walkers' states
are the columns of one block. Each round evaluates every instance's guard over all walkers,
picks one enabled instance per walker (uniformly, or weighted per action family), applies
each chosen instance's effect to the walkers that chose it, and checks the invariants on the
new states. A walker whose walk reaches `depth` steps, or a state where nothing is enabled,
starts a new walk from an initial state. Every random choice comes from one generator seeded
by `seed`, so a run with the same seed, walkers and bounds is the same run.

The distinct states seen are counted exactly, through the vector engine's key set (the
progress hook too: the keys buffered since the last merge are merged before it is called). A
violation is replayed through the scalar interpretation (loops the walk made are cut out);
then a bounded breadth-first search (the vector engine, up to the walk's length) tries to
replace it by a shortest trace.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import numpy as np

from kmc.engines.simulation.coverage import Coverage
from kmc.engines.result import CheckResult, Progress, Verdict
from kmc.engines.interface import Limits, ProgressHook
from kmc.engines.search import Violations, finish
from kmc.engines.vector import engine as vector
from kmc.engines.vector.keyset import Visited, first_occurrences
from kmc.engines.vector.levelstep import LevelStep
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
    """A finished swarm's findings as plain data: the keys of the states it saw, its first
    violations with their walks, its figures and its coverage counts."""

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
    `walks` walks have ended or `time_limit` seconds have passed (whichever is first), or an
    invariant is violated (unless `keep_going`)."""

    walkers: int = 20_000
    depth: int = 100
    seed: int = 0
    walks: int | None = None
    time_limit: float | None = None
    weights: Mapping[str, float] = field(default_factory=dict)  # action family -> weight (default 1)
    keep_going: bool = False
    coverage: bool = False  # collect per-action and per-field coverage (kmc/engines/simulation/coverage.py)

    def shares(self, parts: int) -> list[Walks]:
        """The walks split `parts` ways (over Spark partitions or local processes): the walkers
        and walks as evenly as they go, each part with a seed of its own derived from this
        seed (`numpy.random.SeedSequence(seed).spawn(parts)`)."""
        seeds = np.random.SeedSequence(self.seed).spawn(parts)

        def split(total: int, p: int) -> int:
            return total // parts + (1 if p < total % parts else 0)

        return [replace(self, walkers=max(1, split(self.walkers, p)), seed=int(seeds[p].generate_state(1)[0]),
                        walks=None if self.walks is None else max(1, split(self.walks, p)))
                for p in range(parts)]


def simulate(model: Model, invariants: Sequence[Invariant], walks: Walks,
             progress: ProgressHook | None = None) -> CheckResult:
    """Run the walks; the result's `engine_stats` has walker_steps, walks, steps_per_second,
    deepest_walk, and per violated invariant whether its trace is "shortest" or "as walked"."""
    return Swarm(model, invariants, walks, progress).run()


class Swarm:
    def __init__(self, model: Model, invariants: Sequence[Invariant], walks: Walks,
                 progress: ProgressHook | None):
        if walks.walks is None and walks.time_limit is None:
            raise BadInput("a simulation needs an end: --walks N or --time-limit SECONDS")
        if not 0 <= walks.seed <= MAX_SEED:
            raise BadInput(f"--seed {walks.seed}: a seed is an integer from 0 to 2**64-1")
        self.started = time.perf_counter()
        self.model, self.invariants, self.walks, self.progress = model, list(invariants), walks, progress
        self.step = LevelStep(model, invariants, symmetry=False)
        self.weight = self._weights(walks.weights)
        self.uniform = bool(np.all(self.weight == 1.0))
        self.count_dtype = np.uint8 if self.step.count < 2**8 else np.uint16 if self.step.count < 2**16 else np.uint32
        self.rng = np.random.default_rng(walks.seed)
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
        initial = np.array(self.model.initial_states(), dtype=np.int64)
        if not len(initial):
            raise BadInput(f"model {self.model.name} has no initial state")
        self.step.check_range(initial, "an initial state")
        n = self.walks.walkers
        start = self.rng.integers(len(initial), size=n)
        cols = np.ascontiguousarray(initial[start].T.astype(self.step.dtype))
        path = np.zeros((self.walks.depth, n), dtype=self.step.iid_dtype)
        length = np.zeros(n, dtype=np.int64)
        self._see(cols, np.full(n, self.step.count))
        every = np.arange(len(initial))
        if self.coverage is not None:
            self.coverage.reached(initial.T)
        self._check(np.ascontiguousarray(initial.T.astype(self.step.dtype)), every, initial, every,
                    path, np.zeros(len(initial), dtype=np.int64))
        rounds = 0
        reported = self.started
        while self.stopped_by is None:
            moved = self._round(cols, path, length)
            self._check(cols, moved, initial, start, path, length)
            self._see(cols[:, moved], path[length[moved] - 1, moved])
            rounds += 1
            ended = length == self.walks.depth
            stuck = np.ones(n, dtype=bool)
            stuck[moved] = False
            ended |= stuck  # nothing enabled: the walk stutters forever, so it ends here
            self.deepest = max(self.deepest, int(length.max()))
            if ended.any():
                self._restart(ended, initial, start, cols, length)
            self._stop_if_done()
            if self.progress is not None and time.perf_counter() - reported >= self.progress_seconds:
                self._flush()  # the distinct states so far, exactly: the buffered keys merged first
                reported = time.perf_counter()
                self.progress(Progress(rounds, len(self.seen), self.walker_steps, n, reported - self.started))
        self._flush()

    def _round(self, cols: np.ndarray, path: np.ndarray, length: np.ndarray) -> np.ndarray:
        """One step of every walker that has an enabled instance; the walkers that moved."""
        step, n = self.step, cols.shape[1]
        view = step.schema.view(list(cols))
        enabled = np.empty((step.count, n), dtype=bool)
        total: Any = np.zeros(n, dtype=self.count_dtype if self.uniform else np.float64)
        for i, inst in enumerate(step.instances):
            enabled[i] = inst.action.guard(view, step.X, *inst.args)
            total += enabled[i] if self.uniform else enabled[i] * self.weight[i]
        pick: Any = self.rng.random(n) * total
        if self.uniform:  # the k-th enabled instance, k uniform
            pick = pick.astype(self.count_dtype)
        # the first instance whose running total passes pick: the number of those that do not
        running: Any = np.zeros_like(total)
        choice: Any = np.zeros(n, dtype=self.count_dtype)
        for i in range(step.count):
            running += enabled[i] if self.uniform else enabled[i] * self.weight[i]
            choice += running <= pick
        moved = np.flatnonzero(total > 0)
        choice = choice[moved]
        for i in np.unique(choice).tolist():
            who = moved[choice == i]
            inst = step.instances[i]
            sub = cols[:, who]
            effect = inst.action.effect(step.schema.view(list(sub)), step.X, *inst.args)
            for pos, value in dict(step.schema.updates(effect)).items():
                values = np.broadcast_to(np.asarray(value), who.shape)
                if values.size and (values.min() < step.lo[pos] or values.max() > step.hi[pos]):
                    step._check_values(inst, pos, values)
                cols[pos, who] = values
        if self.coverage is not None:
            self.coverage.enabled += enabled.sum(axis=1)
            self.coverage.fired += np.bincount(choice, minlength=step.count)
            self.coverage.reached(cols[:, moved])
        path[length[moved], moved] = choice
        length[moved] += 1
        self.walker_steps += len(moved)
        return moved

    def _restart(self, ended: np.ndarray, initial: np.ndarray, start: np.ndarray, cols: np.ndarray,
                 length: np.ndarray) -> None:
        who = np.flatnonzero(ended)
        self.walks_done += len(who)
        start[who] = self.rng.integers(len(initial), size=len(who))
        cols[:, who] = initial[start[who]].T
        length[who] = 0

    def _stop_if_done(self) -> None:
        if self.stopped_by is not None:
            return
        if self.walks.walks is not None and self.walks_done >= self.walks.walks:
            self.stopped_by = "walks"
        elif self.halt is not None and self.halt.is_set():
            self.stopped_by = "halted"  # another swarm's violation ended the run
        elif Limits(time_limit=self.walks.time_limit).exhausted(self.started) is not None:
            self.stopped_by = "time-limit"

    # -- invariants and states seen ------------------------------------------------------------

    def _check(self, cols: np.ndarray, who: np.ndarray, initial: np.ndarray, start: np.ndarray,
               path: np.ndarray, length: np.ndarray) -> None:
        """Check the pending invariants on the walkers `who`; record the first violation of each
        (the lowest walker index, for a deterministic run) with its walk."""
        if not len(who):
            return
        sub = cols[:, who]
        for k in self.violations.pending:
            bad = self.step.violating(sub, k)
            if not bad.size:
                continue
            w = int(who[bad[0]])
            state = tuple(int(v) for v in cols[:, w])
            if k not in self.violations.first:
                first = tuple(int(v) for v in initial[start[w]])
                self.paths[state] = (first, [int(i) for i in path[: length[w], w]])
            self.violations.record_many(k, state, bad.size)
            if not self.invariants[k].report and not self.walks.keep_going:
                self.stopped_by = "violation"

    def _see(self, cols: np.ndarray, iids: np.ndarray) -> None:
        if cols.shape[1]:
            self.buffer.append(self.step.packing.pack_columns(cols))
            self.buffer_iids.append(iids)
        if sum(b.shape[1] for b in self.buffer) >= _FLUSH:
            self._flush()

    def _flush(self) -> None:
        if not self.buffer:
            return
        words = np.concatenate(self.buffer, axis=1)
        iids = np.concatenate(self.buffer_iids)
        self.buffer, self.buffer_iids = [], []
        s, e = self.step.fmt.split(words)
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
        for o in outcomes:
            self.buffer.append(self.step.fmt.join(o.sort_key, o.extras))
            self.buffer_iids.append(np.full(len(o.sort_key), self.step.count))
            self._flush()
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

    def result(self, engine: str = "simulate", extra: Mapping[str, Any] | None = None) -> CheckResult:
        links = vector.replay_paths(self.model, self.paths, "simulation")
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
            "deepest_walk": self.deepest, "traces": traces, **(extra or {}),
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
