"""The explicit engines: one state at a time with Python ints, breadth-first (the reference,
bfs.py) and depth-first (dfs.py); graph.py exports the state graph of small runs."""

from __future__ import annotations

from kmc.engines.interface import Capabilities, CheckJob, Engine
from kmc.engines.result import CheckResult


class ScalarEngine(Engine):
    name = "scalar"
    summary = "breadth-first, one state at a time: the reference; shortest counterexamples"
    capabilities = Capabilities(check=True, liveness=True, symmetry=True, shortest_traces=True)

    def check(self, job: CheckJob) -> CheckResult:
        from kmc.engines.explicit import bfs

        return bfs.check(job.model, job.invariants, job.limits, job.search, job.progress, job.properties)


class DepthFirstEngine(Engine):
    name = "dfs"
    summary = "depth-first, one state at a time: for deep, narrow models; traces not shortest"
    capabilities = Capabilities(check=True, symmetry=True, levels=False)

    def check(self, job: CheckJob) -> CheckResult:
        from kmc.engines.explicit import dfs

        return dfs.check(job.model, job.invariants, job.limits, job.search, job.progress)


SCALAR = ScalarEngine()
DFS = DepthFirstEngine()
