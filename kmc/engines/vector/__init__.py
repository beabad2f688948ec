"""The vector engine: breadth-first search a level at a time over numpy arrays (engine.py);
it also runs `kmc simulate`'s swarms in forked worker processes."""

from __future__ import annotations

from kmc.engines.interface import Capabilities, CheckJob, Engine, SimulateJob
from kmc.engines.result import CheckResult


class VectorEngine(Engine):
    name = "vector"
    summary = "breadth-first, a level at a time over numpy arrays: same results as scalar, fast"
    capabilities = Capabilities(check=True, simulate=True, liveness=True, symmetry=True, coverage=True,
                                shortest_traces=True, workers=True, spills=True, checkpoints=True)

    def check(self, job: CheckJob) -> CheckResult:
        from kmc.engines.vector.engine import Search

        return Search(job.model, job.invariants, job.limits, job.search, job.progress, job.properties,
                      workers=job.workers, checkpoint=job.checkpoint).run()

    def notes(self, result: CheckResult) -> list[str]:
        from kmc.engines.vector.disk import notes

        return notes(result)

    def simulate(self, job: SimulateJob) -> CheckResult:
        from kmc.engines.simulation.workers import simulate

        return simulate(job.model, job.invariants, job.walks, job.workers, progress=job.progress)


ENGINE = VectorEngine()
