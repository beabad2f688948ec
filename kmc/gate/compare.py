"""A gate check run and compared with its baseline: regressions (an invariant the baseline
says holds is violated) and stale differences (a violation gone, a shortest trace or a state
count changed). Every check runs with keep_going, so each invariant gets its own verdict and
shortest trace, and state counts are those of the complete graph."""

from __future__ import annotations

import time
from dataclasses import dataclass

from kmc import registry
from kmc.api import CheckResult, Limits, ProgressHook, SearchOptions, check as kmc_check
from kmc.gate.baseline import Check, Expected
from kmc.model.core import Invariant, Model

EXIT_OK, EXIT_REGRESSION, EXIT_STALE = 0, 12, 3


@dataclass
class Outcome:
    check: Check
    model: Model
    invariants: list[Invariant]
    result: CheckResult
    seconds: float
    regressions: list[str]  # "name: expected to hold, VIOLATED (N steps)"
    stale: list[str]

    @property
    def exit_code(self) -> int:
        return EXIT_REGRESSION if self.regressions else EXIT_STALE if self.stale else EXIT_OK

    def regressed(self) -> list[Invariant]:
        """The invariants that regressed, in the order of the check."""
        names = {line.split(":")[0] for line in self.regressions}
        return [i for i in self.invariants if i.name in names]


def run_check(check: Check, engine: str | None = None, progress: ProgressHook | None = None) -> Outcome:
    """Run one check of a baseline (with `engine` instead of the check's, when given)."""
    model, invariants = registry.build(check.model, check.base, **check.settings)
    chosen = registry.select(invariants, list(check.expect) or None)
    started = time.perf_counter()
    result = kmc_check(model, chosen, engine=engine or check.engine, progress=progress,
                       search=SearchOptions(keep_going=True, symmetry=check.symmetry, coverage=bool(check.fires)))
    seconds = time.perf_counter() - started
    regressions, stale = compare(check, result)
    return Outcome(check, model, chosen, result, seconds, regressions, stale)


def compare(check: Check, result: CheckResult) -> tuple[list[str], list[str]]:
    """(regressions, stale differences) between a check's expectations and a run."""
    regressions: list[str] = []
    stale: list[str] = []
    for name, verdict in result.invariants.items():
        want = check.expect.get(name)
        seen = Expected.of(verdict)
        shown = "not decided" if seen is None else seen.text()
        if want is None:
            stale.append(f"{name}: {shown}, not in the baseline")
        elif want.holds and verdict.holds is False and not verdict.report and verdict.trace is not None:
            regressions.append(f"{name}: expected to hold, VIOLATED ({verdict.trace.length} steps)")
        elif seen is None or seen != want:
            stale.append(f"{name}: expected {want.text()}, now {shown}")
    actions = (result.coverage or {}).get("actions", {})
    for name in check.fires:
        if actions.get(name, {}).get("fired", 0) == 0:
            regressions.append(f"action {name}: the baseline requires it to fire, it never fired")
    if check.states is not None and result.distinct_states != check.states:
        stale.append(f"distinct states: expected {check.states:,}, now {result.distinct_states:,}")
    if not result.complete and result.stopped_by != "violation":
        stale.append(f"the run is incomplete (stopped by {result.stopped_by})")
    return regressions, stale
