"""The walkers' states and their steps on the model's compiled kernels (kmc/semantics/compiled/).

Each walker is a state row (of the level step's dtype, int16 mostly) and its packed key. A round gives a chunk of walkers to
`Kernels.successors`, which runs every guard and effect natively (without the GIL) and returns
every enabled candidate's key, walker by walker, in instance order (the rank order); the swarm's
choice (`streams.choose`) picks one per walker, and only the chosen keys are unpacked into rows.
The same methods as the vector interpretation (moves.py), and the same steps for the same walks.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from kmc.engines.compiled.step import CompiledStep
from kmc.engines.simulation.patch import patch_kernel
from kmc.engines.simulation.streams import choose
from kmc.model.core import Invariant, Model, State

CHUNK_BYTES = 2**25  # a kernel call's room for its candidates' keys (reserved, touched only where written)


class CompiledMoves:
    name = "compiled"

    def __init__(self, model: Model, invariants: Sequence[Invariant]):
        self.step = CompiledStep(model, invariants, False)
        self.kernels = self.step.kernels
        width, words = self.step.schema.width, self.step.packing.words
        self.rows = np.zeros((0, width), dtype=self.step.dtype)  # walkers x positions
        self.keys = np.zeros((0, words), dtype=np.uint64)  # walkers x words
        self.broken: dict[int, np.ndarray] = {}  # invariant -> whether each walker's new state breaks it
        packing = self.step.packing
        self.chunk = int(np.clip(CHUNK_BYTES // (8 * self.step.count * words), 256, 16384))  # walkers a call expands
        self.patch = patch_kernel(packing.spans, packing.radix, [int(m) for m in packing.mult], list(packing.lo), width,
                                  self.step.dtype)

    def begin(self, initial: np.ndarray) -> None:
        """The model's initial states (states x positions), which walks start from."""
        self.initial = np.array(initial, dtype=self.step.dtype)
        self.initial_keys = np.ascontiguousarray(self.step.packing.pack_columns(initial.T.astype(self.step.dtype)).T)

    def place(self, who: np.ndarray | None, starts: np.ndarray) -> None:
        """Put the walkers `who` (None: a fresh swarm of len(starts) walkers) in the initial
        states numbered `starts`."""
        if who is None:
            self.rows, self.keys = self.initial[starts], self.initial_keys[starts]
        else:
            self.rows[who], self.keys[who] = self.initial[starts], self.initial_keys[starts]

    def keep(self, alive: np.ndarray) -> None:
        self.rows, self.keys, self.broken = self.rows[alive], self.keys[alive], {}

    def round(self, u: np.ndarray, weight: np.ndarray | None, check: Sequence[int] = ()
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One step of every walker that can move (draw u each): the walkers that moved, the
        instance each took, and how many walkers enabled each instance. The invariants `check`
        are evaluated on each chunk's new rows while they are in the cache (`violating` reads
        the answers)."""
        count = self.step.count
        enabled = np.zeros(count, dtype=np.int64)
        moved_parts, choice_parts = [], []
        self.broken = {k: np.zeros(len(self.rows), dtype=bool) for k in check}
        for lo in range(0, len(self.rows), self.chunk):
            hi = min(lo + self.chunk, len(self.rows))
            found = self.kernels.successors(self.rows[lo:hi], self.keys[lo:hi], self.step.word, self.step.mult,
                                            drop=False)
            enabled += found.enabled
            rank = found.rank
            order = None
            if len(rank) > 1 and not bool(np.all(rank[1:] > rank[:-1])):
                order = np.argsort(rank, kind="stable")  # walker by walker, each one's in instance order
                rank = rank[order]
            walker, iids = np.divmod(rank, count)
            moved, at = choose(u[lo:hi], np.bincount(walker, minlength=hi - lo), iids, weight)
            self._patch(lo + moved, found.keys[:, at if order is None else order[at]].T)
            for k in check:
                self.broken[k][lo:hi] = ~self.kernels.holds(self.rows[lo:hi], k)
            moved_parts.append(lo + moved)
            choice_parts.append(iids[at])
        if not moved_parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), enabled
        return np.concatenate(moved_parts), np.concatenate(choice_parts), enabled

    def _patch(self, who: np.ndarray, keys: np.ndarray) -> None:
        """Give the walkers `who` their new keys (walkers x words), and rewrite in their rows the
        positions of the key words that changed only (a step changes a few fields)."""
        self.patch(self.keys[who], keys, who, self.rows)
        self.keys[who] = keys

    def words(self, who: np.ndarray) -> np.ndarray:
        """The packed keys (words x walkers) of the walkers `who`."""
        return np.ascontiguousarray(self.keys[who].T)

    def columns(self, who: np.ndarray) -> np.ndarray:
        """The states of the walkers `who` as columns (positions x walkers)."""
        return self.rows[who].T

    def violating(self, who: np.ndarray, k: int) -> np.ndarray:
        """Which of the walkers `who` (indices into it) break invariant k."""
        if k in self.broken:  # evaluated by the round that moved them
            return np.flatnonzero(self.broken[k][who])
        if 2 * len(who) >= len(self.rows):  # most walkers: the kernel over every row, no copy
            return np.flatnonzero(~self.kernels.holds(self.rows, k)[who])
        return np.flatnonzero(~self.kernels.holds(self.rows[who], k))

    def state(self, w: int) -> State:
        return tuple(int(v) for v in self.rows[w])
