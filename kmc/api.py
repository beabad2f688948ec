"""kmc as a library: `check`, `simulate` and `prove`, the entry points every command and every
Python caller goes through (docs/api.md).

Each one checks the model contract (once per model class and settings), chooses the engine by
name from kmc/engines/table.py and validates the job against that engine's capabilities, runs
it, and replays every counterexample through the scalar interpretation before returning it. A
trace that does not replay is an engine bug: `ReplayError` is raised, the trace is never
returned.
"""

from __future__ import annotations

from typing import Any, Sequence

from kmc.engines.simulation.coverage import render as render_coverage
from kmc.engines.explicit import export as state_graph
from kmc.engines.interface import (Capabilities, Checkpoint, CheckJob, EngineOption, Limits, ProgressHook, ProveJob, SearchOptions,
                                   SimulateJob, cores)
from kmc.engines.result import (COUNTEREXAMPLE, NOT_INDUCTIVE, PROVED, RANGES, UNKNOWN, CheckResult, Progress, Proof,
                                Verdict, anonymous_memory_bytes, current_memory_bytes, peak_memory_bytes)
from kmc.engines.simulation.swarm import MAX_SEED, MAX_WEIGHT, Walks
from kmc.engines.table import DEFAULT, ENGINES, able, engine as engine_named

DEFAULT_ENGINE = DEFAULT
from kmc.errors import BadInput, ContractError
from kmc.model.core import Invariant, Model
from kmc.model.temporal import Property
from kmc.contract import kept
from kmc.contract.traced import contract_problems
from kmc.traces import lasso
from kmc.traces.replay import replay

# what the commands (kmc/cli/) use besides the three entry points: they import no engine module
__all__ = ["COUNTEREXAMPLE", "MAX_SEED", "MAX_WEIGHT", "Capabilities", "CheckResult", "Checkpoint", "DEFAULT_ENGINE", "ENGINES", "EngineOption", "Limits", "NOT_INDUCTIVE",
           "PROVED", "Progress", "Proof", "RANGES", "SearchOptions", "UNKNOWN", "Verdict", "Walks", "able", "check",
           "anonymous_memory_bytes", "check_contract", "current_memory_bytes", "peak_memory_bytes", "prove", "render_coverage", "simulate", "state_graph"]

DIFFERENTIAL_STATES = 200  # seeded random states for the differential check of a model from outside kmc
_KEPT: set[tuple[Any, ...]] = set()  # (model class, settings, invariant names) whose contract check passed


def check(
    model: Model,
    invariants: Sequence[Invariant],
    *,
    engine: str = DEFAULT,
    limits: Limits = Limits(),
    search: SearchOptions = SearchOptions(),
    progress: ProgressHook | None = None,
    options: Any = None,
    properties: Sequence[Property] = (),
    workers: int | None = None,
    checkpoint: Checkpoint | None = None,
    spec: str | None = None,
) -> CheckResult:
    """Explore `model` with `engine` and give a verdict per invariant and per liveness
    property (engines with the `liveness` capability check properties on the graph they
    explore; every lasso is replayed, its closing step included, and shown fair and violating).
    `options` are the engine's own (what its `configure` makes of its flags). `workers`: the
    threads of engines with the `workers` capability (default: every core); the results do not
    depend on it. `checkpoint`: each completed level kept in a directory, and a stopped run
    resumed from it (engines with the `checkpoints` capability). `spec`: what kmc/registry.py
    built the model and invariants from, if it did (the commands give it): a contract check
    that passes is then remembered on disk (kmc/contract/kept.py).

    Raises BadInput for an unknown engine or a job the engine cannot run, ContractError when
    the model or an invariant breaks the contract of kmc/model/core.py, and ReplayError when
    an engine returns a trace that is not a run of the model.
    """
    chosen = engine_named(engine, "check")
    caps = chosen.capabilities
    if options is not None and not chosen.options:
        raise BadInput(f"the {engine} engine takes no options of its own (options were given)")
    if search.coverage and not caps.coverage:
        raise BadInput(f"--coverage is collected by the {' and '.join(able('coverage'))} engines "
                       f"(and kmc simulate), not by the {engine} engine")
    if search.symmetry and not caps.symmetry:
        raise BadInput(f"the {engine} engine does not reduce by symmetry: --symmetry is for the "
                       f"{', '.join(able('symmetry'))} engines")
    if properties:
        _can_check_properties(model, properties, engine, search)
    threads = _workers(engine, workers)
    if checkpoint is not None and not caps.checkpoints:
        keeping = able("checkpoints")
        raise BadInput(f"--checkpoint-dir: the {engine} engine keeps no checkpoints; the "
                       f"{', '.join(keeping[:-1])} and {keeping[-1]} engines do")
    check_contract(model, [*invariants, *(i for p in properties for i in as_invariants(p))], spec=spec)
    job = CheckJob(model=model, invariants=invariants, properties=properties, limits=limits, search=search,
                   progress=progress, options=options, workers=threads, checkpoint=checkpoint)
    result = chosen.check(job)
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


def _workers(engine: str, workers: int | None) -> int:
    """The threads a check runs on: `workers`, or every core for the engines that take them."""
    if workers is not None and workers < 1:
        raise BadInput(f"--workers {workers}: a number of threads, 1 or more")
    if not ENGINES[engine].capabilities.workers:
        if workers is not None and workers > 1:
            raise BadInput(f"--workers {workers}: the {engine} engine runs on one thread; the "
                           f"{' and '.join(able('workers'))} engines take --workers")
        return 1
    return cores() if workers is None else workers


def simulate(
    model: Model,
    invariants: Sequence[Invariant],
    walks: Walks,
    *,
    engine: str = DEFAULT,
    workers: int | None = None,
    progress: ProgressHook | None = None,
    options: Any = None,
    spec: str | None = None,
) -> CheckResult:
    """Random walks of `model` (kmc/engines/simulation/swarm.py), in `workers` processes (None:
    one per core; the vector engine): a verdict per invariant, never "holds"; every trace found
    is replayed before it is returned. `spec`: as for `check`."""
    chosen = engine_named(engine, "simulate")
    if options is not None and not chosen.options:
        raise BadInput(f"the {engine} engine takes no options of its own (options were given)")
    check_contract(model, invariants, spec=spec)
    result = chosen.simulate(SimulateJob(model=model, invariants=invariants, walks=walks, workers=workers,
                                         progress=progress, options=options))
    for inv in invariants:
        trace = result.invariants[inv.name].trace
        if trace is not None:
            replay(trace, inv)
    return result


def prove(model: Model, invariant: Invariant, lemmas: Sequence[Invariant] = (), *, k: int = 1,
          timeout: float = 60.0) -> Proof:
    """Prove `invariant` for every depth by k-induction (k = 1 .. `k`, `timeout` seconds in all),
    helped by `lemmas`, with the engine that proves."""
    [name] = able("prove")
    check_contract(model, [invariant, *lemmas])
    return ENGINES[name].prove(ProveJob(model=model, invariant=invariant, lemmas=lemmas, k=k, timeout=timeout))


def _can_check_properties(model: Model, properties: Sequence[Property], engine: str, search: SearchOptions) -> None:
    if not ENGINES[engine].capabilities.liveness:
        raise BadInput(f"the {engine} engine does not check liveness properties; the "
                       f"{' and '.join(able('liveness'))} engines do (check no property there, or use --engine vector)")
    if search.symmetry:
        raise BadInput("liveness properties cannot be checked with --symmetry (a cycle of canonical states "
                       "need not be a cycle of concrete ones); check no property there, or drop --symmetry")
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


def check_contract(model: Model, invariants: Sequence[Invariant], *, spec: str | None = None) -> None:
    """Raise ContractError naming every action or invariant that breaks the contract; the
    outcome is remembered per model class, settings and invariant names, and, given the `spec`
    kmc/registry.py built the model and invariants from, on disk (kmc/contract/kept.py).

    Every model is traced (kmc/contract/traced.py). A model from outside kmc (a user's
    file, an installed package, a test) is also checked differentially on DIFFERENTIAL_STATES
    seeded random states (kmc/contract/differential.py): what tracing cannot see, such as
    `s.x is -1` or a dict keyed by a state value, makes the interpretations disagree. kmc's
    own models get that check, over every option combination, in its test suite."""
    key = (type(model), tuple(sorted(model.settings.items())), tuple(i.name for i in invariants))
    if key in _KEPT:
        return
    on_disk = None if spec is None else kept.fingerprint(spec, model, invariants)
    if on_disk is not None and kept.passed(on_disk):
        _KEPT.add(key)
        return
    problems = contract_problems(model, invariants)
    if problems:
        raise ContractError(f"model {model.name} breaks the contract of kmc/model/core.py: " + "; ".join(problems))
    if type(model).__module__.split(".")[0] != "kmc":
        from kmc.contract.differential import report  # z3 among the interpretations: loaded only here

        found = report(model, invariants, rng=0, count=DIFFERENTIAL_STATES)
        if found:
            raise ContractError(f"model {model.name} breaks the contract of kmc/model/core.py: {found}")
    _KEPT.add(key)
    if on_disk is not None:
        kept.remember(on_disk)
