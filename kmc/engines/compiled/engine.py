"""The compiled engine: the vector engine's breadth-first search (levels as packed keys, chunks,
deduplication against the sorted visited set, parents and instance ids for traces), with the
model's guards, effects and invariants run by native kernels (kmc/engines/compiled/step.py).

Same distinct states, order, counts and counterexamples as the vector and scalar engines.
"""

from __future__ import annotations

import importlib.util
from typing import Sequence

from kmc.engines.interface import SearchOptions
from kmc.engines.vector import engine as vector
from kmc.engines.vector.levelstep import LevelStep
from kmc.model.core import Invariant, Model


class Search(vector.Search):
    engine = "compiled"

    def level_step(self, model: Model, invariants: Sequence[Invariant], options: SearchOptions) -> LevelStep:
        from kmc.engines.compiled.step import CompiledStep  # llvmlite, loaded by the runs that use it

        return CompiledStep(model, invariants, options.symmetry)


def compiles(model: Model, invariants: Sequence[Invariant], symmetry: bool) -> bool:
    """Whether a run can use the compiled level step: llvmlite installed, no --symmetry, and every
    guard, effect and invariant with a native form. Compiles the kernels into the disk cache,
    where the processes of the run (Spark's executors on this host) then find them."""
    if symmetry or importlib.util.find_spec("llvmlite") is None:
        return False
    from kmc.semantics.compiled.kernels import Kernels
    from kmc.semantics.compiled.programs import Uncompilable
    from kmc.semantics.vector import level_dtype

    try:
        Kernels(model, invariants, level_dtype(model.schema.lo, model.schema.hi))  # as CompiledStep builds them
    except Uncompilable:
        return False
    return True
