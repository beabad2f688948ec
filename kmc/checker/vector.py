"""The vector engine: breadth-first search a whole level at a time, over numpy arrays.

A level is a block of states (states x positions, small ints), stored column by column so
that each position is one contiguous array. For each instance, in instance order, the guard
over the whole level gives the enabled rows and the effect over those rows the positions
it changes. A successor's packed key is its parent's key plus (new - old) x multiplier at
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
from kmc.checker.symmetry import Symmetry, lexmin
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
class _Successors:
    """The successors one instance gives a level: enabled rows, changed positions, values."""

    iid: int
    rows: np.ndarray  # indices of the enabled parents in the level, ascending
    positions: np.ndarray  # changed positions (u,)
    values: np.ndarray  # their new values (u x rows)
    keys: np.ndarray  # canonical keys of the successors (words x rows)


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
        self.symmetry = Symmetry(schema) if limits.symmetry else None
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
        self.iid_dtype = np.uint8 if len(self.instances) <= 256 else np.uint16
        self.generated = 0
        self.stopped_by: str | None = None
        self._multipliers: dict[tuple[int, ...], np.ndarray] = {}

    # -- the search ----------------------------------------------------------------------

    def run(self) -> CheckResult:
        limits = self.limits
        initial = self.model.initial_states()
        frontier = np.zeros((self.schema.width, 0), dtype=self.dtype)
        depth = 0
        if initial:
            columns = np.array(initial, dtype=np.int64).T
            self._check_range(columns, "an initial state")
            columns = columns.astype(self.dtype)
            keys = lexmin(self._pack_all(columns))
            rank = np.arange(len(initial), dtype=np.int64)
            frontier = self._accept(columns, keys, rank, lambda order: columns[:, order], level=0)
            depth = 1
        parent_keys = self._pack_all(frontier) if frontier.shape[1] else None

        while frontier.shape[1] and self.stopped_by is None:
            if limits.max_depth is not None and depth >= limits.max_depth:
                self.stopped_by = "max-depth"
                break
            frontier, parent_keys = self._step(frontier, parent_keys, level=depth)
            if frontier.shape[1]:
                depth += 1
            if self.progress is not None:
                self.progress(Progress(depth, len(self.visited), self.generated, frontier.shape[1],
                                       time.perf_counter() - self.started))

        stored = self.visited.nbytes + sum(a.nbytes for a in self.parents) + sum(a.nbytes for a in self.iids)
        distinct = len(self.visited)
        links = self._traces()
        return finish(self.model, "vector", self.started, self.violations, links.get,
                      distinct=distinct, generated=self.generated, depth=depth, stopped_by=self.stopped_by,
                      symmetry=self.symmetry is not None,
                      bytes_per_state=stored / distinct if distinct else None)

    def _step(self, frontier: np.ndarray, parent_keys: Any, level: int) -> tuple[np.ndarray, Any]:
        """The next level from `frontier` (positions x states) and its states' keys."""
        n = frontier.shape[1]
        view = self.schema.view(list(frontier))
        found: list[_Successors] = []
        for inst in self.instances:
            rows = _enabled(inst.action.guard(view, self.X, *inst.args), n)
            if rows.size:
                found.append(self._successors(inst, frontier, parent_keys, rows))
        if not found:
            return np.zeros((self.schema.width, 0), dtype=self.dtype), None
        count = len(self.instances)
        keys = np.concatenate([s.keys for s in found], axis=1)
        rank = np.concatenate([s.rows.astype(np.int64) * count + s.iid for s in found])

        def build(order_rank: np.ndarray) -> np.ndarray:
            parents = order_rank // count
            iids = order_rank % count
            block = np.take(frontier, parents, axis=1)
            by_iid = np.argsort(iids, kind="stable")  # each instance's rows, parents ascending
            bounds = np.concatenate([[0], np.cumsum(np.bincount(iids, minlength=count))])
            for s in found:
                where = by_iid[bounds[s.iid]:bounds[s.iid + 1]]
                if where.size:
                    local = np.searchsorted(s.rows, parents[where])
                    block[s.positions[:, None], where[None, :]] = s.values[:, local]
            return block

        nxt = self._accept(None, keys, rank, build, level=level)
        return nxt, (self._pack_all(nxt) if nxt.shape[1] else None)

    def _accept(self, columns: Any, keys: np.ndarray, rank: np.ndarray, build: Any, level: int) -> np.ndarray:
        """Deduplicate candidates (keys, rank = their order in the scalar engine), drop the
        visited ones, check invariants, apply the limits; record and return the new level."""
        sort_key, extras = self.fmt.split(keys)
        s, e, first = first_occurrences(sort_key, extras, rank)
        known, pos = self.visited.find(s, e)
        new = np.flatnonzero(~known)
        order = new[np.argsort(first[new])]  # the new keys, in the scalar engine's order
        level_rank = first[order]
        block = build(level_rank) if level else columns[:, level_rank]
        if level == 0:
            block = np.ascontiguousarray(block)
        cut = self._limit(block, level)
        kept = np.sort(order[:cut])
        self.visited.merge(s[kept], [x[kept] for x in e], pos[kept])
        self.generated += len(rank) if cut == len(order) else int(np.count_nonzero(rank <= level_rank[cut - 1]))
        count = len(self.instances)
        if level == 0:
            self.initial = [tuple(int(v) for v in block[:, j]) for j in range(cut)]
        else:
            self.parents.append((level_rank[:cut] // count).astype(np.int32))
            self.iids.append((level_rank[:cut] % count).astype(self.iid_dtype))
        return block[:, :cut] if cut < block.shape[1] else block

    def _limit(self, block: np.ndarray, level: int) -> int:
        """How many states of the new level the run keeps: all, or up to the first violation
        (unless --continue) or to --max-states, as the scalar engine would stop."""
        m = block.shape[1]
        cut, full = m, False
        if self.limits.max_states is not None and len(self.visited) + m >= self.limits.max_states:
            cut, full = self.limits.max_states - len(self.visited), True
        pending = self.violations.pending
        if pending and m:
            view = self.schema.view(list(block))
            bad = {k: _violating(self.invariants[k].predicate(view, self.X), m) for k in pending}
            safety = [int(b[0]) for k, b in bad.items() if not self.invariants[k].report and b.size and b[0] < cut]
            if safety and not self.limits.keep_going:
                cut = min(safety) + 1
                self.stopped_by = "violation"
            for k, b in bad.items():
                b = b[: np.searchsorted(b, cut)]
                if b.size:
                    f = int(b[0])
                    state = tuple(int(v) for v in block[:, f])
                    if k not in self.violations.first:
                        self.found_at[state] = (level, f)
                    self.violations.record_many(k, state, b.size)
        if full and self.stopped_by is None:
            self.stopped_by = "max-states"
        return cut

    # -- successors and keys ---------------------------------------------------------------

    def _successors(self, inst: Instance, frontier: np.ndarray, parent_keys: np.ndarray,
                    rows: np.ndarray) -> _Successors:
        k = rows.size
        sub = np.take(frontier, rows, axis=1)
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
        keys = self._child_keys(parent_keys, rows, positions, sub[positions], values)
        return _Successors(inst.id, rows, positions, values, keys)

    def _child_keys(self, parent_keys: np.ndarray, rows: np.ndarray, positions: np.ndarray,
                    old: np.ndarray, new: np.ndarray) -> np.ndarray:
        """Canonical keys of successors: parents' keys (under every layout) plus the changed
        digits times their multipliers, exactly in uint64 arithmetic."""
        keys = parent_keys[:, :, rows]  # layouts x words x successors
        if positions.size == 0:
            return lexmin(keys)
        p, w = keys.shape[0], keys.shape[1]
        mult = self._multipliers_for(positions)  # layouts x words x positions
        if self.symmetry is None:
            mapped = np.zeros(positions.size, dtype=bool)
        else:
            mapped = np.isin(positions, self.symmetry.holds)
        plain = ~mapped
        if plain.any():
            delta = (new[plain].astype(np.int64) - old[plain]).astype(U64)
            keys += (mult[:, :, plain].reshape(p * w, -1) @ delta).reshape(keys.shape)
        if mapped.any():
            tables = self.symmetry.tables  # type: ignore[union-attr]
            delta = (tables[:, new[mapped].astype(np.int64) + 1] - tables[:, old[mapped].astype(np.int64) + 1])
            keys += np.matmul(mult[:, :, mapped], delta.astype(U64))
        return lexmin(keys)

    def _multipliers_for(self, positions: np.ndarray) -> np.ndarray:
        """For changed positions: per layout and word, the multiplier of each (0 elsewhere)."""
        key = tuple(positions.tolist())
        cached = self._multipliers.get(key)
        if cached is None:
            cached = np.zeros((len(self.layouts), self.packing.words, len(key)), dtype=U64)
            for li, lay in enumerate(self.layouts):
                cached[li, lay.word[positions], np.arange(len(key))] = lay.mult[positions]
            self._multipliers[key] = cached
        return cached

    def _pack_all(self, columns: np.ndarray) -> np.ndarray:
        """Keys of states (positions x N) under every layout: layouts x words x N."""
        return np.stack([lay.pack_columns(columns) for lay in self.layouts])

    # -- range checks ----------------------------------------------------------------------

    def _check_values(self, inst: Instance, pos: int, values: np.ndarray) -> None:
        lo, hi = int(self.lo[pos]), int(self.hi[pos])
        if values.size and (values.min() < lo or values.max() > hi):
            bad = int(values[(values < lo) | (values > hi)].flat[0])
            name = self.schema.element_names()[pos]
            raise ValueError(f"action {inst.label} writes {bad} to {name}, outside its range [{lo}, {hi}]: "
                             "the vector engine packs states exactly and needs every value in range")

    def _check_range(self, columns: np.ndarray, what: str) -> None:
        bad = (columns < self.lo[:, None]) | (columns > self.hi[:, None])
        if bad.any():
            pos = int(np.flatnonzero(bad.any(axis=1))[0])
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
