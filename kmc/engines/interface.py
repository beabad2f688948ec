"""The engine interface: what every engine declares, and the jobs it runs.

An engine is one package under kmc/engines/ with an `ENGINE` object that implements `Engine`:
its name, a one-line summary, its `Capabilities`, the options of its own (`EngineOption`, made
into command-line flags by the CLI and handed back to `configure`), and the jobs it runs:
`check` (explore and give a verdict per invariant and property), `simulate` (random walks) and
`prove` (for every depth). `kmc/engines/table.py` lists the engines; the public API
(kmc/api.py) chooses and validates by capability, never by name.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping, Sequence

from kmc.engines.result import CheckResult, Progress, Proof, current_memory_bytes
from kmc.errors import BadInput
from kmc.model.core import Invariant, Model
from kmc.model.temporal import Property

ProgressHook = Callable[[Progress], None]


@dataclass(frozen=True, kw_only=True)
class Limits:
    """What ends a run cleanly before it is complete; max_depth counts levels, the initial
    states being level 1. A run that a limit ended leaves verdicts undecided."""

    max_states: int | None = None
    max_depth: int | None = None
    time_limit: float | None = None  # seconds of search, checked between levels (dfs: every few thousand states)
    memory_limit: int | None = None  # bytes of resident memory, checked with the time (engines that spill go on)

    def exhausted(self, started: float, reserve: float = 0.0) -> str | None:
        """"time-limit" or "memory-limit" once a run must end for them, else None: engines ask
        between levels, so a run ends cleanly, with the levels it finished (`reserve`: the
        seconds the run still needs once it stops, kept within the time limit)."""
        if self.out_of_time(started, reserve):
            return "time-limit"
        if self.memory_limit is not None and current_memory_bytes() >= self.memory_limit:
            return "memory-limit"
        return None

    def out_of_time(self, started: float, reserve: float = 0.0) -> bool:
        """Whether a run started at `started` (perf_counter) that needs `reserve` more seconds
        once it stops is at its --time-limit."""
        return self.time_limit is not None and time.perf_counter() - started + reserve >= self.time_limit


@dataclass(frozen=True, kw_only=True)
class SearchOptions:
    """How a search goes about it: on past a violation, states told apart up to renaming
    replicas, coverage collected."""

    keep_going: bool = False  # explore on after a violation: every invariant its own trace
    symmetry: bool = False  # states equal up to renaming replicas count once (kmc/engines/symmetry.py)
    coverage: bool = False  # per action family and field (kmc/engines/simulation/coverage.py)


@dataclass(frozen=True, kw_only=True)
class Capabilities:
    """What an engine can do; the API refuses a job that asks for more, naming the engines that can."""

    check: bool = False  # explores and decides invariants
    simulate: bool = False  # random walks (kmc simulate)
    prove: bool = False  # for every depth (kmc prove)
    liveness: bool = False  # liveness properties under fairness
    symmetry: bool = False  # --symmetry
    coverage: bool = False  # --coverage
    checkpoints: bool = False  # a run kept on disk and resumed
    spills: bool = False  # past --memory-limit, goes on with its visited set on disk (kmc/engines/vector/disk.py)
    shortest_traces: bool = False  # counterexamples are shortest in steps
    counts_states: bool = True  # distinct state counts (a bounded symbolic search has none)
    levels: bool = True  # breadth-first levels, whose sizes give an ETA
    workers: bool = False  # --workers N: the search on N threads of this machine (same results for any N)
    coarse_levels: bool = False  # a level takes seconds: progress shows each level on its own line

    def names(self) -> list[str]:
        """The capabilities it has, for tables and messages."""
        return [f for f in _CAPABILITIES if getattr(self, f) and f not in ("counts_states", "levels")]


_CAPABILITIES = ("check", "simulate", "prove", "liveness", "symmetry", "coverage", "checkpoints", "spills",
                 "shortest_traces", "counts_states", "levels", "workers", "coarse_levels")


def cores() -> int:
    """The cores this process may run on (`--workers`' default)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@dataclass(frozen=True, kw_only=True)
class EngineOption:
    """A flag of an engine's own (`--master URL`): the CLI adds it to the commands the engine
    serves and gives its value back to `Engine.configure` under `dest`."""

    flag: str
    dest: str
    help: str
    kind: str = "str"  # "str", "int", "path", "flag", "pairs" (repeatable KEY=VALUE)
    metavar: str | None = None
    minimum: int | None = None  # for "int"
    one_run: bool = False  # meaningful for one check only (not for compare, gate or simulate)

    def given(self, value: Any) -> bool:
        return value is not None and value is not False and value != ()  # 0 is a value (--spark-threshold 0)


@dataclass(frozen=True, kw_only=True)
class Checkpoint:
    """`--checkpoint-dir DIR [--resume]`: each completed level kept in DIR, and a stopped run
    continued from there (engines with the `checkpoints` capability)."""

    directory: Path
    resume: bool = False


@dataclass(frozen=True, kw_only=True)
class CheckJob:
    model: Model
    invariants: Sequence[Invariant]
    properties: Sequence[Property] = ()
    limits: Limits = Limits()
    search: SearchOptions = SearchOptions()
    progress: ProgressHook | None = None
    options: Any = None  # what the engine's `configure` made of its flags, or None
    workers: int = 1  # threads (engines with the `workers` capability; the others run on one)
    checkpoint: Checkpoint | None = None


@dataclass(frozen=True, kw_only=True)
class SimulateJob:
    model: Model
    invariants: Sequence[Invariant]
    walks: Any  # kmc.engines.simulation.Walks: how many walkers, how deep, the seed, when to end
    workers: int | None = None  # forked worker processes; None: one per core
    progress: ProgressHook | None = None
    options: Any = None


@dataclass(frozen=True, kw_only=True)
class ProveJob:
    model: Model
    invariant: Invariant
    lemmas: Sequence[Invariant] = ()
    k: int = 1
    timeout: float = 60.0


class Engine:
    """The one interface of every engine. A subclass sets the class attributes and overrides
    the jobs its capabilities name; the others refuse."""

    name: ClassVar[str]
    summary: ClassVar[str]
    capabilities: ClassVar[Capabilities]
    options: ClassVar[tuple[EngineOption, ...]] = ()

    def configure(self, values: Mapping[str, Any], *, one_run: bool) -> Any:
        """The engine's options from its flags' values (keyed by `dest`); None when it takes none."""
        return None

    def check(self, job: CheckJob) -> CheckResult:
        raise BadInput(f"the {self.name} engine does not explore states (kmc check)")

    def simulate(self, job: SimulateJob) -> CheckResult:
        raise BadInput(f"the {self.name} engine does not simulate (kmc simulate takes "
                       "--engine vector or spark)")

    def prove(self, job: ProveJob) -> Proof:
        raise BadInput(f"the {self.name} engine does not prove invariants (kmc prove uses z3)")

    def notes(self, result: CheckResult) -> list[str]:
        """Lines of its own under a run's summary (where it ran, what a level cost)."""
        return []
