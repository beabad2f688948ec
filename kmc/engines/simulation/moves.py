"""The walkers' states and their steps through the vector interpretation (numpy columns).

A swarm (kmc/engines/simulation/swarm.py) keeps its walkers' states in one of two
interpretations with the same methods: this one, which evaluates every instance's guard over
all walkers' columns and applies each chosen instance's effect to the walkers that chose it,
and the compiled one (compiled_moves.py), which runs the model's native kernels. Both list a
walker's candidates in instance order and leave the choice to `streams.choose`, so the same
walks take the same steps in both.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from kmc.engines.simulation.streams import choose
from kmc.engines.vector.levelstep import Gathered, LevelStep
from kmc.model.core import Invariant, Model, State


class VectorMoves:
    name = "vector"

    def __init__(self, model: Model, invariants: Sequence[Invariant]):
        self.step = LevelStep(model, invariants, symmetry=False)
        self.cols = np.zeros((self.step.schema.width, 0), dtype=self.step.dtype)  # positions x walkers

    def begin(self, initial: np.ndarray) -> None:
        """The model's initial states (states x positions), which walks start from."""
        self.initial = np.ascontiguousarray(initial.T.astype(self.step.dtype))

    def place(self, who: np.ndarray | None, starts: np.ndarray) -> None:
        """Put the walkers `who` (None: a fresh swarm of len(starts) walkers) in the initial
        states numbered `starts`."""
        if who is None:
            self.cols = np.ascontiguousarray(self.initial[:, starts])
        else:
            self.cols[:, who] = self.initial[:, starts]

    def keep(self, alive: np.ndarray) -> None:
        self.cols = np.ascontiguousarray(self.cols[:, alive])

    def round(self, u: np.ndarray, weight: np.ndarray | None, check: Sequence[int] = ()
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One step of every walker that can move (draw u each): the walkers that moved, the
        instance each took, and how many walkers enabled each instance (`check`: the
        invariants `violating` will be asked about; this interpretation evaluates them then)."""
        step, cols = self.step, self.cols
        view = step.schema.view(list(cols))
        enabled = np.empty((step.count, cols.shape[1]), dtype=bool)
        for i, inst in enumerate(step.instances):
            enabled[i] = inst.action.guard(view, step.X, *inst.args)
        walker, iids = np.nonzero(enabled.T)  # walker by walker, each one's in instance order
        moved, at = choose(u, np.bincount(walker, minlength=cols.shape[1]), iids, weight)
        choice = iids[at]
        for i in np.unique(choice).tolist():
            who = moved[choice == i]
            inst = step.instances[i]
            # the columns the effect reads, gathered on first read: a copy of every column of
            # the walkers that chose it took most of a round on wide models (quorum's 18,516)
            effect = inst.action.effect(step.schema.view_lazily(Gathered(cols, who)), step.X, *inst.args)
            positions, values = step.written(inst, effect, len(who))
            cols[positions[:, None], who] = values
        return moved, choice, enabled.sum(axis=1)

    def words(self, who: np.ndarray) -> np.ndarray:
        """The packed keys (words x walkers) of the walkers `who`."""
        return self.step.packing.pack_columns(self.cols[:, who])

    def columns(self, who: np.ndarray) -> np.ndarray:
        """The states of the walkers `who` as columns (positions x walkers)."""
        return self.cols[:, who]

    def violating(self, who: np.ndarray, k: int) -> np.ndarray:
        """Which of the walkers `who` (indices into it) break invariant k."""
        return self.step.violating(self.cols[:, who], k)

    def state(self, w: int) -> State:
        return tuple(int(v) for v in self.cols[:, w])
