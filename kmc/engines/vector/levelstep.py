"""The vector level step: every enabled instance on a whole block of states, over numpy arrays.

A block is a set of states (states x positions, small ints), held both column by column
(each position one contiguous array, for the model's code) and row by row (for gathering
states), with their packed keys under every layout. For each instance, in instance order,
the guard over the whole block gives the enabled rows and the effect over those rows the
positions it changes. A successor's packed key is its parent's key plus (new - old) x
multiplier at those positions (under every replica permutation with --symmetry, keeping the
smallest).

Each candidate successor has a rank, parent index x instances + instance id: its place in
the scalar engine's order. The vector engine (kmc/engines/vector/engine.py) runs this step on a
whole level in one process; the Spark engine (kmc/engines/spark/engine.py) runs it in executors on
a partition of a level each. Both build the step from the model alone, so the same model
code gives the same successors everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from kmc.semantics.vector import Vector, level_dtype
from kmc.engines.vector.keyset import Distinct, KeyFormat, first_occurrences
from kmc.engines.vector.wordcodes import Search
from kmc.engines.vector.packing import Layout, Packing
from kmc.engines.vector.prefilter import Marks
from kmc.engines.vector.levels import UnpackWords, unpack_words
from kmc.engines.vector.levelset import Probes
from kmc.engines.vector.treecodes import TreeCodes
from kmc.engines.symmetry import for_model, lexmin
from kmc.model.core import Instance, Invariant, Model

U64 = np.uint64


@dataclass
class Block:
    """States, twice: a column per position (for the lifted operations) and a row per state
    (for gathering states); and their keys under every layout."""

    cols: np.ndarray  # positions x states
    rows: np.ndarray  # states x positions
    keys: np.ndarray  # states x layouts x words, uint64 (a row per state, for gathering)

    @property
    def size(self) -> int:
        return self.rows.shape[0]

    def take(self, at: np.ndarray) -> Block:
        """The states at positions `at`, in that order. Columns that are the rows' transpose (the
        compiled step's) stay so: gathering columns of a transposed view reads a whole row per
        element, several times slower than gathering the rows."""
        rows = self.rows[at]
        cols = rows.T if self.cols.base is self.rows else self.cols[:, at]
        return Block(cols, rows, self.keys[at])

    def head(self, n: int) -> Block:
        if n == self.size:
            return self
        return Block(self.cols[:, :n], self.rows[:n], self.keys[:n])


@dataclass
class Candidates:
    """The successors of a block, before deduplication: their canonical keys (words x
    candidates), their ranks (parent index x instances + instance id, ascending within each
    instance), `build(ranks)`, the block of the candidates with the given ranks, in that
    order, and `words(ranks)`, only their packed words (words x candidates, the identity
    layout: the states themselves). `build` and `words` are good until the step's next `expand`
    on the same thread (the compiled step's read that thread's kernel buffers)."""

    canonical: np.ndarray
    rank: np.ndarray
    build: Callable[[np.ndarray], Block]
    words: Callable[[np.ndarray], np.ndarray]
    enabled: np.ndarray  # per instance: the states of the block where it is enabled
    stutter: np.ndarray  # with drop_stutter: the ranks of the successors equal to their parent, left out
    by_parent: bool = False  # ranks (and stutters) come a parent at a time, parents ascending


@dataclass
class _Successors:
    """The successors one instance gives a block: enabled parents, changed positions, values."""

    iid: int
    parents: np.ndarray  # indices of the enabled parents in the block, ascending
    positions: np.ndarray  # changed positions (u,)
    values: np.ndarray  # their new values (u x successors)
    keys: np.ndarray  # keys under every layout (successors x layouts x words)
    canonical: np.ndarray  # the smallest of those (words x successors)
    stutter: np.ndarray  # enabled parents whose successor is themselves (left out with drop_stutter)


class LevelStep:
    """What the level step needs from a model, computed once: the packing, the layouts
    (one, or one per replica permutation), the instances, the value ranges."""

    def __init__(self, model: Model, invariants: Sequence[Invariant], symmetry: bool):
        self.model = model
        self.invariants = list(invariants)
        schema = self.schema = model.schema
        self.packing = Packing.for_schema(schema)
        self.fmt = KeyFormat(self.packing.word_bits)
        self.search: Search | None = None  # a native dictionary search (kmc/engines/vector/wordcodes.py:WordCodes.lookup)
        self.marks: Marks | None = None  # the key filter's bits set natively (kmc/engines/vector/prefilter.py)
        self.probes: Probes | None = None  # a level's one-word keys found natively (kmc/engines/vector/levelset.py)
        self.unpack_words: UnpackWords = unpack_words  # a coded level's words (kmc/engines/vector/levels.py)
        self.symmetry = for_model(model, invariants) if symmetry else None
        self.layouts: list[Layout] = (self.symmetry.layouts(self.packing) if self.symmetry
                                      else [self.packing.identity])
        self.dtype = level_dtype(schema.lo, schema.hi)
        self.X = Vector(self.dtype)
        self.instances: list[Instance] = model.instances()
        self.count = len(self.instances)
        self.lo = np.array(schema.lo, dtype=np.int64)
        self.hi = np.array(schema.hi, dtype=np.int64)
        n = self.count
        self.iid_dtype = np.uint8 if n <= 2**8 else np.uint16 if n <= 2**16 else np.uint32
        self.word_of = np.stack([lay.word for lay in self.layouts])  # layouts x positions
        self.mult_of = np.stack([lay.mult for lay in self.layouts])
        self.mapped = np.zeros(schema.width, dtype=bool)
        self.reads_widely: dict[int, bool] = {}  # per instance: its effect read over a quarter of the positions
        if self.symmetry is not None:
            self.mapped[self.symmetry.holds] = True

    # -- blocks ------------------------------------------------------------------------------

    def block(self, rows: np.ndarray) -> Block:
        """The block of states given as rows (states x positions, in this step's dtype)."""
        rows = np.ascontiguousarray(rows, dtype=self.dtype)
        cols = transpose(rows)
        return Block(cols, rows, self.pack_all(cols))

    def tree_codes(self) -> TreeCodes | None:
        """Wide keys' one-word codes, where the step has the kernels for them (the compiled step's)."""
        return None

    def code_format(self) -> KeyFormat:
        """The format of the one-word codes of `tree_codes`."""
        return KeyFormat([64])

    def split(self, words: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """(sort key, other words) of keys given as words (kmc/engines/vector/keyset.py:KeyFormat.split)."""
        return self.fmt.split(words)

    def distinct(self, canonical: np.ndarray, rank: np.ndarray) -> Distinct:
        """The distinct keys of candidates (canonical keys, words x candidates; rank: their order
        in the scalar engine), each with its smallest rank (kmc/engines/vector/keyset.py:first_occurrences)."""
        return first_occurrences(*self.split(canonical), rank)

    def distinct_words(self, canonical: np.ndarray, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`distinct`, as the keys' words (words x keys, in any order) and their smallest ranks."""
        s, e, first = self.distinct(canonical, rank)
        return self.fmt.join(s, e), first

    def columns(self, words: np.ndarray) -> np.ndarray:
        """The columns (positions x states) of the states packed in `words` (words x states),
        laid out as `violating` reads them fastest."""
        return self.packing.unpack_columns(words, self.dtype)

    def unpack(self, words: np.ndarray) -> Block:
        """The block of the states packed in `words` (words x states, identity layout)."""
        cols = self.packing.unpack_columns(words, self.dtype)
        if len(self.layouts) == 1:
            keys = np.ascontiguousarray(words.T)[:, None, :]
        else:
            keys = self.pack_all(cols)
        return Block(cols, transpose(cols), keys)

    def empty(self) -> Block:
        return self.block(np.zeros((0, self.schema.width), dtype=self.dtype))

    def pack_all(self, columns: np.ndarray) -> np.ndarray:
        """Keys of states (positions x N) under every layout: N x layouts x words."""
        return np.ascontiguousarray(np.stack([lay.pack_columns(columns) for lay in self.layouts]).transpose(2, 0, 1))

    def violating(self, cols: np.ndarray, k: int) -> np.ndarray:
        """Indices of the states (given as columns) where invariant k is false, ascending."""
        view = self.schema.view(list(cols))
        return _violating(self.invariants[k].predicate(view, self.X), cols.shape[1])

    # -- the step ------------------------------------------------------------------------------

    def expand(self, block: Block, drop_stutter: bool = False) -> Candidates | None:
        """The candidate successors of every state of `block`, or None when no instance is
        enabled anywhere. With `drop_stutter`, a successor equal to its parent (a step that
        changes nothing, such as receiving a message again) is left out of the candidates, since
        its parent is already visited; its rank is kept in `stutter`, for the generated count."""
        view = self.schema.view(list(block.cols))
        found: list[_Successors] = []
        enabled = np.zeros(self.count, dtype=np.int64)
        for inst in self.instances:
            parents = _enabled(inst.action.guard(view, self.X, *inst.args), block.size)
            if parents.size:
                found.append(self._successors(inst, block, parents, drop_stutter))
                enabled[inst.id] = parents.size
        if not found:
            return None
        count = self.count
        canonical = np.concatenate([s.canonical for s in found], axis=1)
        rank = np.concatenate([s.parents.astype(np.int64) * count + s.iid for s in found])
        stutter = np.concatenate([s.stutter.astype(np.int64) * count + s.iid for s in found])

        def build(order_rank: np.ndarray) -> Block:
            parents = order_rank // count
            iids = (order_rank % count).astype(self.iid_dtype)  # small ints: a radix sort below
            rows = np.take(block.rows, parents, axis=0)
            keys = np.empty((len(order_rank),) + block.keys.shape[1:], dtype=U64)
            by_iid = np.argsort(iids, kind="stable")  # each instance's successors, parents ascending
            bounds = np.concatenate([[0], np.cumsum(np.bincount(iids, minlength=count))])
            for s in found:
                where = by_iid[bounds[s.iid]:bounds[s.iid + 1]]
                if where.size:
                    local = np.searchsorted(s.parents, parents[where])
                    for r, j in enumerate(s.positions.tolist()):
                        rows[where, j] = s.values[r, local]
                    keys[where] = np.take(s.keys, local, axis=0)
            return Block(transpose(rows), rows, keys)

        def words(order_rank: np.ndarray) -> np.ndarray:
            identity = np.concatenate([s.keys[:, 0, :].T for s in found], axis=1)  # words x candidates, as `rank`
            by_rank = np.argsort(rank)
            return np.ascontiguousarray(identity[:, by_rank[np.searchsorted(rank, order_rank, sorter=by_rank)]])

        return Candidates(canonical, rank, build, words, enabled, stutter)

    def _successors(self, inst: Instance, block: Block, parents: np.ndarray, drop_stutter: bool) -> _Successors:
        k = parents.size
        sub: Any
        if self.reads_widely.get(inst.id, False):  # its effect reads much of the state: whole rows at once
            sub = np.take(block.rows, parents, axis=0).T  # strided columns: cheaper than a transposing copy
            effect = inst.action.effect(self.schema.view(list(sub)), self.X, *inst.args)
        else:  # the columns its effect reads, each gathered on first read
            sub = Gathered(block.cols, parents)
            effect = inst.action.effect(self.schema.view_lazily(sub), self.X, *inst.args)
            self.reads_widely[inst.id] = len(sub.done) * 4 > len(block.cols)
        positions, values = self.written(inst, effect, k)
        old = sub[positions] if isinstance(sub, np.ndarray) else sub.rows(positions)
        stutter = parents[:0]
        if drop_stutter:
            moves = (values != old).any(axis=0)
            if not moves.all():
                stutter, parents = parents[~moves], parents[moves]
                values, old = values[:, moves], old[:, moves]
        keys = self._child_keys(block.keys, parents, positions, old, values)
        return _Successors(inst.id, parents, positions, values, keys, lexmin(keys), stutter)

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

    # -- range checks ------------------------------------------------------------------------

    def written(self, inst: Instance, effect: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The positions an effect on `k` states writes and their values (positions x states),
        every value checked against its position's range."""
        changes = dict(self.schema.updates(effect))  # a position written twice keeps the last value
        positions = np.fromiter(changes, dtype=np.int64, count=len(changes))
        values = np.empty((len(changes), k), dtype=self.dtype)
        written = list(changes.values())
        constants = [r for r, v in enumerate(written)
                     if isinstance(v, (int, np.integer, np.bool_)) or np.ndim(v) == 0]
        if constants:  # checked together, before a cast to the level's dtype could wrap them
            given = np.array([int(written[r]) for r in constants], dtype=np.int64)
            wrong = np.flatnonzero((given < self.lo[positions[constants]]) | (given > self.hi[positions[constants]]))
            if wrong.size:
                self._check_values(inst, int(positions[constants[wrong[0]]]), given[wrong[:1]])
        varying = []  # the rows not written from a constant
        fixed = set(constants)
        for r, v in enumerate(written):
            if r not in fixed:
                v = np.asarray(v)
                if v.dtype != self.dtype and v.dtype != np.bool_:  # before a cast to the level's dtype could wrap it
                    self._check_values(inst, int(positions[r]), v)
                varying.append(r)
            values[r] = v
        if varying:
            at = positions[varying]
            bad = (values[varying] < self.lo[at][:, None]) | (values[varying] > self.hi[at][:, None])
            if bad.any():
                r = varying[int(np.flatnonzero(bad.any(axis=1))[0])]
                self._check_values(inst, int(positions[r]), values[r])
        return positions, values

    def _check_values(self, inst: Instance, pos: int, values: np.ndarray) -> None:
        lo, hi = int(self.lo[pos]), int(self.hi[pos])
        if values.size and (values.min() < lo or values.max() > hi):
            bad = int(values[(values < lo) | (values > hi)].flat[0])
            name = self.schema.element_names()[pos]
            raise ValueError(f"action {inst.label} writes {bad} to {name}, outside its range [{lo}, {hi}]: "
                             "the vector engine packs states exactly and needs every value in range")

    def check_range(self, rows: np.ndarray, what: str) -> None:
        bad = (rows < self.lo) | (rows > self.hi)
        if bad.any():
            pos = int(np.flatnonzero(bad.any(axis=0))[0])
            name = self.schema.element_names()[pos]
            raise ValueError(f"{what} has {name} outside its range [{self.lo[pos]}, {self.hi[pos]}]")


class Gathered(Sequence[Any]):
    """The columns of a block at some of its states (`parents`), each gathered on first use:
    a sequence of columns indexed by flat position, as a view reads them."""

    def __init__(self, cols: np.ndarray, parents: np.ndarray):
        self.cols = cols
        self.parents = parents
        self.done: dict[int, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.cols)

    def __getitem__(self, j: Any) -> Any:
        if isinstance(j, slice):  # a field's span (views read a field at a time): gathered in one call
            start, stop, step = j.indices(len(self.cols))
            if step == 1 and stop - start > 1 and any(i not in self.done for i in range(start, stop)):
                for i, col in zip(range(start, stop), np.take(self.cols[start:stop], self.parents, axis=1)):
                    self.done.setdefault(i, col)
            return [self[i] for i in range(start, stop, step)]
        col = self.done.get(j)
        if col is None:
            col = self.done[j] = np.take(self.cols[j], self.parents)
        return col

    def rows(self, positions: np.ndarray) -> np.ndarray:
        """The columns at `positions`, stacked (positions x states)."""
        if not positions.size:
            return np.empty((0, self.parents.size), dtype=self.cols.dtype)
        return np.stack([self[int(j)] for j in positions.tolist()])


def transpose(a: np.ndarray) -> np.ndarray:
    """A contiguous transposed copy (states x positions <-> positions x states), copied in
    blocks of states: several times faster than numpy's transposing copy in one go."""
    out = np.empty((a.shape[1], a.shape[0]), dtype=a.dtype)
    if a.shape[0] >= a.shape[1]:  # rows to columns
        for i in range(0, a.shape[0], _BLOCK):
            out[:, i:i + _BLOCK] = a[i:i + _BLOCK].T
    else:  # columns to rows
        for i in range(0, a.shape[1], _BLOCK):
            out[i:i + _BLOCK] = a[:, i:i + _BLOCK].T
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
