"""The vector engine: breadth-first search a whole level at a time, over numpy arrays.

A level is a block of states (states x positions, small ints), held both column by column
(each position one contiguous array, for the model's code) and row by row (for gathering
states). For each instance, in instance order, the guard over the whole level gives the
enabled rows and the effect over those rows the positions it changes. A successor's packed key is its parent's key plus (new - old) x multiplier at
those positions (under every replica permutation with --symmetry, keeping the smallest).
The level's candidates are deduplicated keeping each key's first occurrence in the scalar
engine's order (parent's position in its level, then instance id), the keys already visited
are dropped, and the new states, in that order, are the next level; their keys are merged
into the sorted visited set. Invariants are evaluated on each whole new level.

Each state keeps its parent's index in the previous level and its instance id; a
counterexample is rebuilt from those and replayed forward from its concrete initial
state, so it is concrete even when states are stored by canonical key.

Same distinct states, same order, same counts and the same counterexamples as the
reference engine, kmc/checker/bfs.py; the tests hold it to that.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from kmc.checker.backends import Vector
from kmc.checker.keyset import KeyFormat, Visited, first_occurrences
from kmc.checker.packing import Layout, Packing
from kmc.checker.result import CheckResult, Progress
from kmc.checker.scalar import ScalarModel
from kmc.checker.search import Limits, ProgressHook, Violations, finish
from kmc.checker.symmetry import for_model, lexmin
from kmc.errors import ReplayError
from kmc.model.core import Instance, Invariant, Model, State

U64 = np.uint64


def check(
    model: Model,
    invariants: Sequence[Invariant],
    limits: Limits = Limits(),
    progress: ProgressHook | None = None,
) -> CheckResult:
    return _Search(model, invariants, limits, progress).run()


def level_dtype(lo: Sequence[int], hi: Sequence[int]) -> np.dtype:
    """The smallest of int16, int32, int64 that holds every value (int16 at least, so that
    model arithmetic on small fields does not wrap)."""
    for dt in (np.int16, np.int32):
        info = np.iinfo(dt)
        if min(lo) >= info.min and max(hi) <= info.max:
            return np.dtype(dt)
    return np.dtype(np.int64)


@dataclass
class _Level:
    """States of one BFS level, twice: a column per position (for the lifted operations)
    and a row per state (for gathering states); and their keys under every layout."""

    cols: np.ndarray  # positions x states
    rows: np.ndarray  # states x positions
    keys: np.ndarray  # states x layouts x words, uint64 (a row per state, for gathering)

    @property
    def size(self) -> int:
        return self.rows.shape[0]

    def head(self, n: int) -> _Level:
        if n == self.size:
            return self
        return _Level(self.cols[:, :n], self.rows[:n], self.keys[:n])


@dataclass
class _Successors:
    """The successors one instance gives a level: enabled parents, changed positions, values."""

    iid: int
    parents: np.ndarray  # indices of the enabled parents in the level, ascending
    positions: np.ndarray  # changed positions (u,)
    values: np.ndarray  # their new values (u x successors)
    keys: np.ndarray  # keys under every layout (successors x layouts x words)
    canonical: np.ndarray  # the smallest of those (words x successors)


class _Search:
    def __init__(self, model: Model, invariants: Sequence[Invariant], limits: Limits,
                 progress: ProgressHook | None):
        self.started = time.perf_counter()
        self.model = model
        self.invariants = list(invariants)
        self.limits = limits
        self.progress = progress
        schema = self.schema = model.schema
        self.packing = Packing.for_schema(schema)
        self.fmt = KeyFormat(self.packing.word_bits)
        self.symmetry = for_model(model, invariants) if limits.symmetry else None
        self.layouts: list[Layout] = (self.symmetry.layouts(self.packing) if self.symmetry
                                      else [self.packing.identity])
        self.dtype = level_dtype(schema.lo, schema.hi)
        self.X = Vector(self.dtype)
        self.instances: list[Instance] = model.instances()
        self.lo = np.array(schema.lo, dtype=np.int64)
        self.hi = np.array(schema.hi, dtype=np.int64)
        self.visited = Visited(self.fmt)
        self.violations = Violations(invariants)
        self.found_at: dict[State, tuple[int, int]] = {}  # violating state -> (level, index)
        self.initial: list[State] = []  # level 1, concrete
        self.parents: list[np.ndarray] = []  # per level after the first: parent index
        self.iids: list[np.ndarray] = []  # per level after the first: instance id
        n = len(self.instances)
        self.iid_dtype = np.uint8 if n <= 2**8 else np.uint16 if n <= 2**16 else np.uint32
        self.generated = 0
        self.stopped_by: str | None = None
        self.word_of = np.stack([lay.word for lay in self.layouts])  # layouts x positions
        self.mult_of = np.stack([lay.mult for lay in self.layouts])
        self.mapped = np.zeros(schema.width, dtype=bool)
        if self.symmetry is not None:
            self.mapped[self.symmetry.holds] = True

    # -- the search ----------------------------------------------------------------------

    def run(self) -> CheckResult:
        limits = self.limits
        initial = self.model.initial_states()
        depth = 0
        level: _Level | None = None
        if initial:
            rows = np.array(initial, dtype=np.int64)
            self._check_range(rows, "an initial state")
            rows = rows.astype(self.dtype)
            keys = self._pack_all(_transpose(rows))
            rank = np.arange(len(initial), dtype=np.int64)

            def build(order: np.ndarray) -> _Level:
                chosen = np.ascontiguousarray(rows[order])
                return _Level(_transpose(chosen), chosen, keys[order])

            level = self._accept(lexmin(keys), rank, build, depth=0)
            depth = 1

        while level is not None and level.size and self.stopped_by is None:
            if limits.max_depth is not None and depth >= limits.max_depth:
                self.stopped_by = "max-depth"
                break
            if (exhausted := limits.exhausted(self.started)) is not None:
                self.stopped_by = exhausted
                break
            level = self._step(level, depth)
            if level.size:
                depth += 1
            if self.progress is not None:
                self.progress(Progress(depth, len(self.visited), self.generated, level.size,
                                       time.perf_counter() - self.started))

        stored = self.visited.nbytes + sum(a.nbytes for a in self.parents) + sum(a.nbytes for a in self.iids)
        distinct = len(self.visited)
        links = self._traces()
        return finish(self.model, "vector", self.started, self.violations, links.get,
                      distinct=distinct, generated=self.generated, depth=depth, stopped_by=self.stopped_by,
                      symmetry=self.symmetry is not None,
                      bytes_per_state=stored / distinct if distinct else None)

    def _step(self, level: _Level, depth: int) -> _Level:
        """The next level: every enabled instance on every state of `level`."""
        view = self.schema.view(list(level.cols))
        found: list[_Successors] = []
        for inst in self.instances:
            parents = _enabled(inst.action.guard(view, self.X, *inst.args), level.size)
            if parents.size:
                found.append(self._successors(inst, level, parents))
        if not found:
            return _Level(level.cols[:, :0], level.rows[:0], level.keys[:0])
        count = len(self.instances)
        canonical = np.concatenate([s.canonical for s in found], axis=1)
        rank = np.concatenate([s.parents.astype(np.int64) * count + s.iid for s in found])

        def build(order_rank: np.ndarray) -> _Level:
            parents = order_rank // count
            iids = (order_rank % count).astype(self.iid_dtype)  # small ints: a radix sort below
            rows = np.take(level.rows, parents, axis=0)
            keys = np.empty((len(order_rank),) + level.keys.shape[1:], dtype=U64)
            by_iid = np.argsort(iids, kind="stable")  # each instance's successors, parents ascending
            bounds = np.concatenate([[0], np.cumsum(np.bincount(iids, minlength=count))])
            for s in found:
                where = by_iid[bounds[s.iid]:bounds[s.iid + 1]]
                if where.size:
                    local = np.searchsorted(s.parents, parents[where])
                    for r, j in enumerate(s.positions.tolist()):
                        rows[where, j] = s.values[r, local]
                    keys[where] = np.take(s.keys, local, axis=0)
            return _Level(_transpose(rows), rows, keys)

        return self._accept(canonical, rank, build, depth)

    def _accept(self, canonical: np.ndarray, rank: np.ndarray, build: Any, depth: int) -> _Level:
        """From candidate successors (canonical keys, and rank: their order in the scalar
        engine), keep each key's first occurrence, drop the visited ones, check invariants,
        apply the limits; record the new level and return it."""
        sort_key, extras = self.fmt.split(canonical)
        s, e, first = first_occurrences(sort_key, extras, rank)
        known, pos = self.visited.find(s, e)
        new = np.flatnonzero(~known)
        order = new[_argsort_unique(first[new])]  # the new keys, in the scalar engine's order
        level_rank = first[order]
        level: _Level = build(level_rank)
        cut = self._limit(level, depth)
        kept = np.sort(order[:cut])
        self.visited.merge(s[kept], [x[kept] for x in e], pos[kept])
        if self.stopped_by is None:
            self.generated += len(rank)
        else:  # the scalar engine stops right after the last state kept
            self.generated += int(np.count_nonzero(rank <= level_rank[cut - 1]))
        count = len(self.instances)
        if depth == 0:
            self.initial = [tuple(int(v) for v in row) for row in level.rows[:cut]]
        else:
            self.parents.append((level_rank[:cut] // count).astype(np.int32))
            self.iids.append((level_rank[:cut] % count).astype(self.iid_dtype))
        return level.head(cut)

    def _limit(self, level: _Level, depth: int) -> int:
        """How many states of the new level the run keeps: all, or up to the first violation
        (unless --continue) or to --max-states, as the scalar engine would stop."""
        m = level.size
        cut, full = m, False
        if self.limits.max_states is not None and len(self.visited) + m >= self.limits.max_states:
            cut, full = self.limits.max_states - len(self.visited), True
        pending = self.violations.pending
        if pending and m:
            view = self.schema.view(list(level.cols))
            bad = {k: _violating(self.invariants[k].predicate(view, self.X), m) for k in pending}
            safety = [int(b[0]) for k, b in bad.items() if not self.invariants[k].report and b.size and b[0] < cut]
            if safety and not self.limits.keep_going:
                cut = min(safety) + 1
                self.stopped_by = "violation"
            for k, b in bad.items():
                b = b[: np.searchsorted(b, cut)]
                if b.size:
                    f = int(b[0])
                    state = tuple(int(v) for v in level.rows[f])
                    if k not in self.violations.first:
                        self.found_at[state] = (depth, f)
                    self.violations.record_many(k, state, b.size)
        if full and self.stopped_by is None:
            self.stopped_by = "max-states"
        return cut

    # -- successors and keys ---------------------------------------------------------------

    def _successors(self, inst: Instance, level: _Level, parents: np.ndarray) -> _Successors:
        k = parents.size
        sub = np.take(level.rows, parents, axis=0).T  # strided columns: cheaper than a transposing copy
        effect = inst.action.effect(self.schema.view(list(sub)), self.X, *inst.args)
        changes = dict(self.schema.updates(effect))  # a position written twice keeps the last value
        positions = np.fromiter(changes, dtype=np.int64, count=len(changes))
        values = np.empty((len(changes), k), dtype=self.dtype)
        for r, v in enumerate(changes.values()):
            v = np.asarray(v)
            if v.dtype != self.dtype and v.dtype != np.bool_:
                self._check_values(inst, int(positions[r]), v)
            values[r] = v
        if positions.size:
            bad = (values < self.lo[positions][:, None]) | (values > self.hi[positions][:, None])
            if bad.any():
                r = int(np.flatnonzero(bad.any(axis=1))[0])
                self._check_values(inst, int(positions[r]), values[r])
        keys = self._child_keys(level.keys, parents, positions, sub[positions], values)
        return _Successors(inst.id, parents, positions, values, keys, lexmin(keys))

    def _child_keys(self, parent_keys: np.ndarray, parents: np.ndarray, positions: np.ndarray,
                    old: np.ndarray, new: np.ndarray) -> np.ndarray:
        """Keys of successors under every layout: their parents' keys plus, for each changed
        position, (new digit - old digit) times its multiplier, exactly in uint64 arithmetic
        (a negative difference wraps around and comes back when added)."""
        keys = np.take(parent_keys, parents, axis=0)  # successors x layouts x words
        for r, j in enumerate(positions.tolist()):
            if self.mapped[j]:  # a replica id: its digit differs by layout
                tables = self.symmetry.tables  # type: ignore[union-attr]
                deltas = (tables[:, new[r].astype(np.int64) + 1] - tables[:, old[r].astype(np.int64) + 1]).view(U64)
            else:
                deltas = (new[r].astype(np.int64) - old[r]).view(U64)[None, :]
            for li in range(keys.shape[1]):
                keys[:, li, self.word_of[li, j]] += self.mult_of[li, j] * deltas[li if len(deltas) > 1 else 0]
        return keys

    def _pack_all(self, columns: np.ndarray) -> np.ndarray:
        """Keys of states (positions x N) under every layout: N x layouts x words."""
        return np.ascontiguousarray(np.stack([lay.pack_columns(columns) for lay in self.layouts]).transpose(2, 0, 1))

    # -- range checks ----------------------------------------------------------------------

    def _check_values(self, inst: Instance, pos: int, values: np.ndarray) -> None:
        lo, hi = int(self.lo[pos]), int(self.hi[pos])
        if values.size and (values.min() < lo or values.max() > hi):
            bad = int(values[(values < lo) | (values > hi)].flat[0])
            name = self.schema.element_names()[pos]
            raise ValueError(f"action {inst.label} writes {bad} to {name}, outside its range [{lo}, {hi}]: "
                             "the vector engine packs states exactly and needs every value in range")

    def _check_range(self, rows: np.ndarray, what: str) -> None:
        bad = (rows < self.lo) | (rows > self.hi)
        if bad.any():
            pos = int(np.flatnonzero(bad.any(axis=0))[0])
            name = self.schema.element_names()[pos]
            raise ValueError(f"{what} has {name} outside its range [{self.lo[pos]}, {self.hi[pos]}]")

    # -- counterexamples ---------------------------------------------------------------------

    def _traces(self) -> dict[State, tuple[State, int] | None]:
        """Parent links along the path to every violating state, replayed forward from its
        concrete initial state."""
        links: dict[State, tuple[State, int] | None] = {}
        sm = ScalarModel(self.model)
        for state, (level, index) in self.found_at.items():
            path: list[int] = []
            while level > 0:
                path.append(int(self.iids[level - 1][index]))
                index = int(self.parents[level - 1][index])
                level -= 1
            current = self.initial[index]
            links.setdefault(current, None)
            for iid in reversed(path):
                nxt = sm.step(current, self.instances[iid])
                if nxt is None:
                    raise ReplayError(f"vector engine: {self.instances[iid].label} is not enabled on its recorded parent")
                links.setdefault(nxt, (current, iid))
                current = nxt
            if current != state:
                raise ReplayError("vector engine: replaying the recorded path does not reach the violating state")
        return links


def _argsort_unique(values: np.ndarray) -> np.ndarray:
    """argsort of distinct non-negative ints, by sorting value * 2**b + index when that fits
    in 63 bits (numpy sorts several times faster than it argsorts)."""
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    shift = max(n - 1, 1).bit_length()
    if int(values.max()) >= 1 << (63 - shift):
        return np.argsort(values)
    combined = (values.astype(np.int64) << shift) | np.arange(n, dtype=np.int64)
    combined.sort()
    return combined & ((1 << shift) - 1)


def _transpose(rows: np.ndarray) -> np.ndarray:
    """Rows (states x positions) as contiguous columns (positions x states), copied in
    blocks of rows: several times faster than numpy's transposing copy in one go."""
    out = np.empty((rows.shape[1], rows.shape[0]), dtype=rows.dtype)
    for i in range(0, rows.shape[0], _BLOCK):
        out[:, i:i + _BLOCK] = rows[i:i + _BLOCK].T
    return out


_BLOCK = 4096


def _enabled(guard: Any, n: int) -> np.ndarray:
    """Indices of the rows where a guard holds (a constant guard holds everywhere or nowhere)."""
    if np.ndim(guard) == 0:
        return np.arange(n) if guard else np.zeros(0, dtype=np.int64)
    g = np.asarray(guard)
    return np.flatnonzero(g if g.dtype == np.bool_ else g != 0)


def _violating(holds: Any, n: int) -> np.ndarray:
    """Indices of the rows where an invariant is false."""
    if np.ndim(holds) == 0:
        return np.zeros(0, dtype=np.int64) if holds else np.arange(n)
    h = np.asarray(holds)
    return np.flatnonzero(~h if h.dtype == np.bool_ else h == 0)
