"""The z3 engine: the model as z3 formulas (encoding.py), bounded model checking to --depth K
steps (bmc.py) and k-induction proofs for every depth (induction.py)."""

from __future__ import annotations

from typing import Any, Mapping

from kmc.engines.interface import Capabilities, CheckJob, Engine, EngineOption, Limits, ProveJob
from kmc.engines.result import CheckResult, Proof
from kmc.engines.symbolic.defaults import DEFAULT_STEPS
from kmc.errors import BadInput


class Z3Engine(Engine):
    name = "z3"
    summary = "bounded model checking with z3 to --depth K steps: shortest traces, no state counts; kmc prove"
    capabilities = Capabilities(check=True, prove=True, shortest_traces=True, counts_states=False, levels=False)
    options = (
        EngineOption(flag="--depth", dest="depth", kind="int", minimum=0, metavar="K",
                     help=f"look for violations in runs of up to K steps (BFS levels 1..K+1: a trace of n steps "
                          f"is found at depth n); default {DEFAULT_STEPS}"),
    )

    def configure(self, values: Mapping[str, Any], *, one_run: bool) -> Any:
        return values.get("depth")

    def check(self, job: CheckJob) -> CheckResult:
        from kmc.engines.symbolic import bmc

        limits = job.limits
        if job.options is not None:
            if limits.max_depth is not None:
                raise BadInput("--max-depth is for the explicit engines; --engine z3 takes --depth K")
            limits = Limits(max_depth=job.options + 1, time_limit=limits.time_limit, memory_limit=limits.memory_limit)
        if limits.max_states is not None:
            raise BadInput("the z3 engine does not enumerate states: --max-states is for the explicit engines")
        return bmc.check(job.model, job.invariants, limits, job.search, job.progress)

    def prove(self, job: ProveJob) -> Proof:
        from kmc.engines.symbolic import induction

        return induction.prove(job.model, job.invariant, job.lemmas, k=job.k, timeout=job.timeout)


ENGINE = Z3Engine()
