"""The compiled interpretation: a model's guards, effects and invariants as native kernels.

`Kernels(model, invariants)` traces the model (kmc/semantics/compiled/programs.py), builds a
kernel per template and one for the invariants as LLVM IR (emit.py), and loads them compiled
by LLVM (llvmlite), from the cache when the same IR was compiled before (cache.py).
`successors` runs every instance on a chunk of states and gives the candidate successors'
packed keys and ranks (the scalar engine's order: parent x instances + instance id), as the
vector level step does with numpy; `holds` evaluates an invariant on states. The kernels run
without the GIL.
"""

from __future__ import annotations

import ctypes
import threading
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from kmc.model.core import Invariant, Model, State
from kmc.semantics.compiled import cache, emit
from kmc.semantics.compiled.values import element
from kmc.semantics.compiled.programs import invariant_programs, templates
from kmc.semantics.scalar import ScalarModel


@dataclass
class Found:
    """The candidate successors of a chunk of states: their keys (words x candidates, uint64),
    ranks, the ranks of the successors equal to their parent (left out with `drop`), where
    each rank's candidate is (`slot[rank]`, meaningful for the ranks in `rank` only), how many
    states enable each instance, and with `rows` each candidate's state (candidates x positions)."""

    keys: np.ndarray
    rank: np.ndarray
    stutter: np.ndarray
    slot: np.ndarray  # the calling thread's: good until its next `successors`
    enabled: np.ndarray
    rows: np.ndarray | None


class Kernels:
    """A model's kernels, compiled (or loaded from the cache) once."""

    def __init__(self, model: Model, invariants: Sequence[Invariant], dtype: Any = np.int64):
        """`dtype`: the integers of the rows the kernels read and write (a level step's dtype,
        which holds every position's range; int64 for states from anywhere)."""
        started = time.perf_counter()
        self.dtype = np.dtype(dtype)
        self.schema = model.schema
        self.model = model
        self.invariants = list(invariants)
        self.instances = model.instances()
        self.count = len(self.instances)
        self.compiled_now = False
        self._per_state = 16  # room for candidates a state, doubled while chunks need more
        self._held = threading.local()  # each thread's output buffers, kept from call to call
        key = cache.model_fingerprint(model, [*(i.name for i in invariants), f"rows of {self.dtype.name}"],
                                      [i.predicate for i in invariants])
        saved = cache.recall(key)
        function = None
        if saved is not None:
            code, self.names, self.tables = saved
            try:
                function = cache.load_object(code)
            except KeyError:
                function = None
        if function is None:
            text, self.names, self.tables = self.ir()
            function, code, self.compiled_now = cache.load(text)
            cache.remember(key, code, self.names, self.tables)
        self.use(function)
        self.seconds = time.perf_counter() - started

    def ir(self) -> tuple[str, list[str], list[np.ndarray]]:
        """The model's kernels as LLVM IR (traced now), their names and tables."""
        schema = self.schema
        found = templates(self.model)
        module = cache.new_module(f"kmc {self.model.title()}")
        emit.ranges(module, schema.lo, schema.hi)
        elem = element(self.dtype.itemsize)
        names = [f"k{k}_{t.family}" for k, t in enumerate(found)]
        for name, tpl in zip(names, found):
            emit.successor_kernel(module, name, tpl, elem, (schema.lo, schema.hi))
        emit.driver(module, names, found, elem)
        emit.invariant_kernel(module, invariant_programs(self.model, self.invariants), elem, (schema.lo, schema.hi))
        return str(module), names, [np.ascontiguousarray(t.table, dtype=np.int64) for t in found]

    def use(self, function: cache.Function) -> None:
        """Take the kernels from a loaded module of this model's IR (or of an edited copy)."""
        self._expand = function("expand", _SUCCESSOR_TYPES)
        self._holds = function("holds", _INVARIANT_TYPES)
        self._table_of = np.array([t.ctypes.data for t in self.tables], dtype=np.int64)
        self._table_rows = np.array([t.shape[0] for t in self.tables], dtype=np.int64)
        self._table_cols = np.array([t.shape[1] for t in self.tables], dtype=np.int64)

    # -- running -------------------------------------------------------------------------------

    def successors(self, rows: np.ndarray, keys: np.ndarray, word: np.ndarray, mult: np.ndarray, *,
                   drop: bool, with_rows: bool = False) -> Found:
        """Every enabled instance on the states `rows` (states x positions)
        with keys `keys` (states x words, uint64), packed by `word` and `mult` (per position).
        With `with_rows`, the successors' states too, and no range check (for comparing
        interpretations on any state)."""
        n = rows.shape[0]
        while True:
            found = self._successors(rows, keys, word, mult, drop, with_rows, n * min(self.count, self._per_state))
            if found is not None:
                return found
            self._per_state *= 2  # more candidates than room for them: run again with more

    def _successors(self, rows: np.ndarray, keys: np.ndarray, word: np.ndarray, mult: np.ndarray, drop: bool,
                    with_rows: bool, cap: int) -> Found | None:
        """`successors` with room for `cap` candidates (None when they need more): the
        candidates' keys are rows of `cap` words, so that a few candidates a state touch a
        few pages of memory, not a row's worth for each of the key's words."""
        n = rows.shape[0]
        words = keys.shape[1]
        out_keys = self._buffer("keys", words * cap).reshape(words, cap)
        out_rank = self._buffer("rank", cap)
        out_stutter = self._buffer("stutter", cap)
        slot = self._buffer("slot", n * self.count)
        fill = np.zeros(2, dtype=np.int64)
        enabled = np.zeros(self.count, dtype=np.int64)
        err = np.zeros(3, dtype=np.int64)
        R = np.empty((cap if with_rows else 1, rows.shape[1]), dtype=self.dtype)
        rows = np.ascontiguousarray(rows, dtype=self.dtype)
        K = np.ascontiguousarray(keys).view(np.int64)
        word = np.ascontiguousarray(word, dtype=np.int64)
        mult = np.ascontiguousarray(mult).view(np.int64)
        args = {"S": rows.ctypes.data, "n": n, "width": rows.shape[1], "K": K.ctypes.data, "words": words,
                "tables": self._table_of.ctypes.data, "table_rows": self._table_rows.ctypes.data,
                "table_cols": self._table_cols.ctypes.data, "count": self.count, "word": word.ctypes.data,
                "mult": mult.ctypes.data, "drop": int(drop), "rows": int(with_rows), "out_keys": out_keys.ctypes.data,
                "cap": cap, "out_rank": out_rank.ctypes.data, "out_stutter": out_stutter.ctypes.data,
                "slot": slot.ctypes.data, "fill": fill.ctypes.data, "enabled": enabled.ctypes.data,
                "err": err.ctypes.data, "R": R.ctypes.data}
        self._expand(*(args[a] for a in emit.SUCCESSOR_ARGS))
        if err[0] == -1:
            return None
        if err[0]:
            self._out_of_range(int(err[0]) - 1, tuple(int(v) for v in rows[int(err[1])]))
        c, st = int(fill[0]), int(fill[1])
        return Found(out_keys[:, :c].view(np.uint64).copy(), out_rank[:c].copy(), out_stutter[:st].copy(), slot,
                     enabled, R[:c] if with_rows else None)

    def _buffer(self, name: str, size: int) -> np.ndarray:
        """This thread's int64 buffer `name` of at least `size`, the one its last call used when
        that is large enough. Memory new to the process is zeroed by the system page by page as
        it is first written: a chunk of 9,078 kraft states has room for 145,248 candidates' keys
        of 47 words, 55 MB, and writing them into fresh memory each chunk took more time than
        the successors themselves. The used part is copied out."""
        held = getattr(self._held, name, None)
        if held is None or len(held) < size:
            held = np.empty(size, dtype=np.int64)
            setattr(self._held, name, held)
        return held[:size]

    def holds(self, rows: np.ndarray, k: int) -> np.ndarray:
        """Where invariant k holds on the states `rows` (a bool per state)."""
        rows = np.ascontiguousarray(rows, dtype=self.dtype)
        out = np.empty(rows.shape[0], dtype=np.bool_)
        self._holds(rows.ctypes.data, rows.shape[0], rows.shape[1], k, out.ctypes.data)
        return out

    def _out_of_range(self, iid: int, state: State) -> None:
        """Raise naming the value out of range an instance writes on a state (found again by
        the scalar interpretation)."""
        nxt = ScalarModel(self.model).step(state, self.instances[iid]) or state
        lo, hi = self.schema.lo, self.schema.hi
        pos = next((j for j, v in enumerate(nxt) if not lo[j] <= v <= hi[j]), 0)
        name = self.schema.element_names()[pos]
        raise ValueError(f"action {self.instances[iid].label} writes {nxt[pos]} to {name}, outside its range "
                         f"[{lo[pos]}, {hi[pos]}]: the compiled engine packs states exactly and needs every value "
                         "in range")

    # -- as the differential check reads an interpretation ---------------------------------------

    def outcomes(self, states: Sequence[State], invariants: int) -> list[list[Any]]:
        """Per instance its guard's and its effect's outcomes, then per invariant its predicate's,
        on each state (kmc/semantics/outcomes.py's order: a bool for a guard or a predicate, the
        successor for an effect, None where its guard is false)."""
        n = len(states)
        rows = np.array(states, dtype=np.int64).reshape(n, self.schema.width)
        width = self.schema.width
        found = self.successors(rows, np.zeros((n, 1), dtype=np.uint64), np.zeros(width, dtype=np.int64),
                                np.zeros(width, dtype=np.uint64), drop=False, with_rows=True)
        assert found.rows is not None
        where = {int(r): c for c, r in enumerate(found.rank.tolist())}
        out: list[list[Any]] = []
        for iid in range(self.count):
            at = [where.get(i * self.count + iid) for i in range(n)]
            out.append([c is not None for c in at])
            out.append([None if c is None else tuple(int(v) for v in found.rows[c]) for c in at])
        for k in range(invariants):
            out.append([bool(h) for h in self.holds(rows, k)])
        return out


_P, _N = ctypes.c_void_p, ctypes.c_int64
_SUCCESSOR_TYPES = [_N if a in ("n", "width", "words", "count", "drop", "rows", "cap") else _P
                    for a in emit.SUCCESSOR_ARGS]
_INVARIANT_TYPES = [_P, _N, _N, _N, _P]
