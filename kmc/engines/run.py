"""The one entry point every command and every Python caller goes through: `check`.

It checks the model contract (once per model class and settings), runs the chosen engine,
and replays every counterexample through the scalar interpretation before returning it. A
trace that does not replay is an engine bug: `ReplayError` is raised, the trace is never
returned. `ENGINES` names the engines a run can use.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from kmc.engines.compiled import engine as compiled_engine
from kmc.engines.explicit import bfs, dfs
from kmc.engines.spark import engine as spark_engine
from kmc.engines.symbolic import bmc
from kmc.engines.vector import engine as vector_engine
from kmc.engines.result import CheckResult
from kmc.engines.search import Limits, ProgressHook
from kmc.engines.spark.engine import SparkOptions
from kmc.errors import BadInput, ContractError
from kmc.model.core import Invariant, Model
from kmc.model.temporal import Property
from kmc.traces import lasso
from kmc.semantics.contract import contract_problems
from kmc.semantics.differential import differences
from kmc.traces.replay import replay

Engine = Callable[..., CheckResult]


ENGINES: dict[str, tuple[Engine, str]] = {
    "vector": (vector_engine.check, "breadth-first, a level at a time over numpy arrays: same results as scalar, fast"),
    "scalar": (bfs.check, "breadth-first, one state at a time: the reference; shortest counterexamples"),
    "dfs": (dfs.check, "depth-first, one state at a time: for deep, narrow models; traces not shortest"),
    "spark": (spark_engine.check, "breadth-first on Spark executors (--master, default local[*]): same results as vector"),
    "compiled": (compiled_engine.check, "the vector engine with the model compiled to native kernels (LLVM): same "
                 "results, faster on wide models"),
    "z3": (bmc.check, "bounded model checking with z3 to --depth K steps: shortest traces, no state counts"),
}

DIFFERENTIAL_STATES = 200  # seeded random states for the differential check of a model from outside kmc
_KEPT: set[tuple[Any, ...]] = set()  # (model class, settings, invariant names) whose contract check passed


def check(
    model: Model,
    invariants: Sequence[Invariant],
    *,
    engine: str = "vector",
    limits: Limits = Limits(),
    progress: ProgressHook | None = None,
    spark: SparkOptions | None = None,
    properties: Sequence[Property] = (),
) -> CheckResult:
    """Explore `model` with `engine` and give a verdict per invariant and per liveness
    property (the vector and scalar engines check properties on the graph they explore;
    every lasso is replayed, its closing step included, and shown fair and violating).

    Raises BadInput for an unknown engine or Spark options given to another engine,
    ContractError when the model or an invariant breaks the contract of kmc/model/core.py,
    and ReplayError when an engine returns a trace that is not a run of the model.
    """
    if engine not in ENGINES:
        raise BadInput(f"unknown engine {engine!r}; allowed: {', '.join(ENGINES)}")
    if spark is not None and engine != "spark":
        raise BadInput(f"Spark options apply to --engine spark only (the engine is {engine})")
    if limits.coverage and engine != "vector":
        raise BadInput(f"--coverage is collected by the vector engine (and kmc simulate), not by the {engine} engine")
    if properties:
        _can_check_properties(model, properties, engine, limits)
    check_contract(model, [*invariants, *(i for p in properties for i in as_invariants(p))])
    extra: dict[str, Any] = {"options": spark} if engine == "spark" else {}
    if properties:
        extra["properties"] = properties
    result = ENGINES[engine][0](model, invariants, limits, progress, **extra)
    for inv in invariants:
        trace = result.invariants[inv.name].trace
        if trace is not None:
            replay(trace, inv)
    for prop in properties:
        trace = result.properties[prop.name].trace
        if trace is not None:
            replay(trace)
            lasso.check(trace, prop)
    return result


LIVENESS_ENGINES = ("vector", "scalar")


def _can_check_properties(model: Model, properties: Sequence[Property], engine: str, limits: Limits) -> None:
    if engine not in LIVENESS_ENGINES:
        raise BadInput(f"liveness properties are checked by the {' and '.join(LIVENESS_ENGINES)} engines, not by "
                       f"{engine} (use --no-properties, or --engine vector)")
    if limits.symmetry:
        raise BadInput("liveness properties cannot be checked with --symmetry (a cycle of canonical states "
                       "need not be a cycle of concrete ones); use --no-properties or drop --symmetry")
    for prop in properties:
        for fair in prop.fairness:
            try:
                fair.conditions(model.instances())
            except ValueError as e:
                raise ContractError(f"model {model.name}, property {prop.name}: {e}") from e


def as_invariants(prop: Property) -> list[Invariant]:
    """A property's predicates (P, and Q for leads_to) as invariants named after it, for the
    contract and differential checks, which run them like any invariant."""
    if prop.form != "leads_to":
        return [Invariant(f"property {prop.name}", prop.predicate, prop.doc)]
    return [Invariant(f"property {prop.name} (P)", lambda s, X: prop.parts(s, X)[0], prop.doc),
            Invariant(f"property {prop.name} (Q)", lambda s, X: prop.parts(s, X)[1], prop.doc)]


def check_contract(model: Model, invariants: Sequence[Invariant]) -> None:
    """Raise ContractError naming every action or invariant that breaks the contract; the
    outcome is remembered per model class, settings and invariant names.

    Every model is traced (kmc/semantics/contract.py). A model from outside kmc (a user's
    file, an installed package, a test) is also checked differentially on DIFFERENTIAL_STATES
    seeded random states (kmc/semantics/differential.py): what tracing cannot see, such as
    `s.x is -1` or a dict keyed by a state value, makes the interpretations disagree. kmc's
    own models get that check, over every option combination, in its test suite."""
    key = (type(model), tuple(sorted(model.settings.items())), tuple(i.name for i in invariants))
    if key in _KEPT:
        return
    problems = contract_problems(model, invariants)
    if problems:
        raise ContractError(f"model {model.name} breaks the contract of kmc/model/core.py: " + "; ".join(problems))
    if type(model).__module__.split(".")[0] != "kmc":
        found = differences(model, invariants, rng=0, count=DIFFERENTIAL_STATES)
        if found:
            raise ContractError(f"model {model.name} breaks the contract of kmc/model/core.py: its interpretations "
                                f"disagree (a Python `is`, a dict or set keyed by a state value?): "
                                + "; ".join(map(str, found)))
    _KEPT.add(key)
