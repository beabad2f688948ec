"""The level step on compiled kernels: the vector level step's blocks, keys and ranks, with every
guard, effect and invariant run by the model's native kernels (kmc/semantics/compiled/).

A chunk's states are unpacked by a kernel generated for the model's packing, and the successor
kernels give each candidate's packed key directly (its parent's key plus the written digits'
differences), so that no successor's state is built until it is known new: then its key is
unpacked. Ranks are the vector step's (parent x instances + instance id), so the vector engine's
deduplication keeps the scalar engine's order.
"""

from __future__ import annotations

import ctypes
from typing import Sequence

import numpy as np

from kmc.engines.vector.keyset import Distinct, KeyFormat, sorted_distinct
from kmc.engines.vector.treecodes import TreeCodes
from kmc.engines.vector.levelstep import Block, Candidates, LevelStep
from kmc.errors import BadInput
from kmc.model.core import Invariant, Model
from kmc.semantics.compiled import cache, emit
from kmc.semantics.compiled.values import element
from kmc.semantics.compiled.kernels import Kernels
from kmc.semantics.compiled.hashset import HashKernels
from kmc.semantics.compiled.keys import KeyKernels
from kmc.semantics.compiled.intern import InternKernels


class CompiledStep(LevelStep):
    def __init__(self, model: Model, invariants: Sequence[Invariant], symmetry: bool):
        if symmetry:
            raise BadInput("the compiled engine does not take --symmetry (yet): use --engine vector with it")
        super().__init__(model, invariants, False)
        self.kernels = Kernels(model, invariants, self.dtype)  # rows of the level step's dtype (int16 mostly)
        self.word = self.packing.word.astype(np.int64)
        self.mult = self.packing.mult
        packing, itemsize = self.packing, self.dtype.itemsize

        def unpack_ir() -> str:
            module = cache.new_module(f"kmc unpack {packing.describe()}")
            emit.unpack_kernel(module, packing.spans, packing.radix, list(packing.lo), element(itemsize))
            return str(module)

        key = cache.generated_fingerprint("unpack", packing.spans, [int(r) for r in packing.radix],
                                          [int(v) for v in packing.lo], itemsize)
        function = cache.cached(key, unpack_ir)
        self._unpack = function("unpack", [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p])
        self.keys = KeyKernels(packing.words)
        self.fmt.lower_bounds = self.keys.lower_bounds  # the visited keys searched natively
        self.fmt.lower_bounds_from = self.keys.lower_bounds_from
        self.fmt.insert = self.keys.insert  # new keys into the visited set's arrays
        if packing.words > 1:
            self.fmt.sort_keys = self.keys.sort_keys
        self.search = self.keys.search
        self.unpack_words = self.keys.unpack_words
        self.marks = self.keys
        self.probes = HashKernels()  # one-word keys: the states' own, or wide ones' tree codes

    def tree_codes(self) -> TreeCodes | None:
        """Wide keys coded as one word each (kmc/engines/vector/treecodes.py), natively."""
        return TreeCodes(self.packing.words, InternKernels()) if self.packing.words > 1 else None

    def code_format(self) -> KeyFormat:
        """The format of one-word keys (a wide key's tree code), searched natively."""
        fmt = KeyFormat([64])
        fmt.lower_bounds, fmt.lower_bounds_from = self.keys.lower_bounds, self.keys.lower_bounds_from
        fmt.insert = self.keys.insert
        return fmt

    def rows_of(self, words: np.ndarray) -> np.ndarray:
        """The states (states x positions, of the step's dtype) packed in words (words x states)."""
        words = np.ascontiguousarray(words, dtype=np.uint64)
        n = words.shape[1]
        rows = np.empty((n, self.schema.width), dtype=self.dtype)
        self._unpack(words.ctypes.data, n, self.schema.width, rows.ctypes.data)
        return rows

    def split(self, words: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """`KeyFormat.split`, the sort keys computed natively (one pass instead of numpy's
        eight over each word)."""
        if not self.keys.takes(words):
            return self.fmt.split(words)
        return self.keys.sort_keys(words), self._extras(words)

    def distinct(self, canonical: np.ndarray, rank: np.ndarray) -> Distinct:
        """`LevelStep.distinct`, the first occurrences found natively (kmc/semantics/compiled/keys.py):
        only the distinct keys' words are gathered and sorted."""
        if not self.keys.takes(canonical):
            return super().distinct(canonical, rank)
        sort_key = self.keys.sort_keys(canonical)
        at = self.keys.first(canonical, sort_key, rank)

        return sorted_distinct(sort_key[at], lambda order: self._extras(canonical, at[order]), rank[at])

    def distinct_words(self, canonical: np.ndarray, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`LevelStep.distinct_words`: the first occurrences found natively, their words gathered
        once, in the order first met (the tree codes sort them: kmc/engines/vector/treecodes.py)."""
        if not self.keys.takes(canonical):
            return super().distinct_words(canonical, rank)
        at = self.keys.first(canonical, self.keys.sort_keys(canonical), rank)
        return canonical[:, at], rank[at]

    def _extras(self, words: np.ndarray, at: np.ndarray | slice = slice(None)) -> list[np.ndarray]:
        """Words 1.. of the keys `words` (those at `at`), in the key format's dtypes: copies, never
        views of `words` (the kernels' buffers, written again by the next chunk)."""
        fresh = not isinstance(at, slice)  # a gather is a copy already
        return [words[w][at].astype(dt, copy=not fresh) for w, dt in zip(range(1, self.fmt.words), self.fmt.extra_dtypes)]

    def columns(self, words: np.ndarray) -> np.ndarray:
        """The states' rows, unpacked natively, seen as columns: `violating` hands the kernels the
        rows themselves, with no copy per invariant."""
        return self.rows_of(words).T

    def unpack(self, words: np.ndarray) -> Block:
        rows = self.rows_of(words)
        return Block(rows.T, rows, np.ascontiguousarray(words.T)[:, None, :])

    def violating(self, cols: np.ndarray, k: int) -> np.ndarray:
        return np.flatnonzero(~self.kernels.holds(cols.T, k))

    def expand(self, block: Block, drop_stutter: bool = False) -> Candidates | None:
        found = self.kernels.successors(block.rows, block.keys[:, 0, :], self.word, self.mult, drop=drop_stutter)
        if not found.enabled.any():
            return None

        def build(order_rank: np.ndarray) -> Block:
            keys = found.keys[:, found.slot[order_rank]]
            rows = self.rows_of(keys)
            return Block(rows.T, rows, np.ascontiguousarray(keys.T)[:, None, :])

        def words(order_rank: np.ndarray) -> np.ndarray:
            return np.ascontiguousarray(found.keys[:, found.slot[order_rank]])

        return Candidates(found.keys, found.rank, build, words, found.enabled, found.stutter, by_parent=True)
