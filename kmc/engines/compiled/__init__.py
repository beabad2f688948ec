"""The compiled engine: the vector engine's search with the model's guards, effects and
invariants compiled to native kernels (kmc/semantics/compiled/: traced programs, LLVM IR
through llvmlite, cached on disk by the model's fingerprint)."""

from __future__ import annotations

import importlib.util

from kmc.engines.interface import Capabilities, CheckJob, Engine
from kmc.engines.result import CheckResult
from kmc.errors import BadInput


class CompiledEngine(Engine):
    name = "compiled"
    summary = ("the vector engine with the model compiled to native kernels (LLVM): same results, faster on "
               "wide models")
    capabilities = Capabilities(check=True, shortest_traces=True, workers=True, spills=True, checkpoints=True)

    def check(self, job: CheckJob) -> CheckResult:
        if importlib.util.find_spec("llvmlite") is None:
            raise BadInput("--engine compiled needs llvmlite, which the compiled extra installs: "
                           "pip install 'kmc[compiled]'")
        from kmc.engines.compiled.engine import Search

        return Search(job.model, job.invariants, job.limits, job.search, job.progress, workers=job.workers,
                      checkpoint=job.checkpoint).run()

    def notes(self, result: CheckResult) -> list[str]:
        from kmc.engines.vector.disk import notes

        return notes(result)


ENGINE = CompiledEngine()
