"""A gate check run and compared with its baseline: regressions (an invariant the baseline
says holds is violated), an incomplete run (a limit of the check left an invariant undecided,
and the check does not say incomplete_ok) and stale differences (a violation gone, a shortest
trace or a state count changed). Every check runs with keep_going, so each invariant gets its
own verdict and shortest trace, and state counts are those of the complete graph (or of the
graph its max_states or max_depth stopped at)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from kmc import exits, registry
from kmc.api import CheckResult, Limits, ProgressHook, SearchOptions, check as kmc_check
from kmc.gate.baseline import Check, Expected, counts_exact
from kmc.model.core import Invariant, Model
from kmc.sizes import show_size

SEVERITY = (exits.VIOLATION, exits.INCOMPLETE, exits.STALE, exits.OK)  # a gate exits with its checks' first


@dataclass
class Outcome:
    check: Check
    model: Model
    invariants: list[Invariant]
    result: CheckResult
    seconds: float
    regressions: list[str]  # "name: expected to hold, VIOLATED (N steps)"
    stale: list[str]
    incomplete: str | None = None  # "incomplete: stopped by time_limit = 5.0 with 2 invariants undecided (...)"

    @property
    def exit_code(self) -> int:
        return (exits.VIOLATION if self.regressions else exits.INCOMPLETE if self.incomplete
                else exits.STALE if self.stale else exits.OK)

    def regressed(self) -> list[Invariant]:
        """The invariants that regressed, in the order of the check."""
        names = {line.split(":")[0] for line in self.regressions}
        return [i for i in self.invariants if i.name in names]


def run_check(check: Check, engine: str | None = None, progress: ProgressHook | None = None) -> Outcome:
    """Run one check of a baseline (with `engine` instead of the check's, when given)."""
    model, invariants = registry.build(check.model, check.base, **check.settings)
    chosen = registry.select(invariants, list(check.expect) or None)
    started = time.perf_counter()
    limits = Limits(max_states=check.max_states, max_depth=check.max_depth, time_limit=check.time_limit,
                    memory_limit=check.memory_limit)
    search = SearchOptions(keep_going=True, symmetry=check.symmetry, coverage=bool(check.fires))
    result = kmc_check(model, chosen, engine=engine or check.engine, progress=progress, limits=limits, search=search)
    seconds = time.perf_counter() - started
    regressions, stale = compare(check, result)
    return Outcome(check, model, chosen, result, seconds, regressions, stale, incomplete(check, result))


def incomplete(check: Check, result: CheckResult) -> str | None:
    """What the check's limits left undecided, unless the check says incomplete_ok."""
    names = result.undecided
    if not names or check.incomplete_ok:
        return None
    key = (result.stopped_by or "").replace("-", "_")
    value = getattr(check, key, None)
    if value is None:
        by = f"the {result.engine} engine's bound"
    else:
        by = f'{key} = "{show_size(value)}"' if key == "memory_limit" else f"{key} = {value!r}"
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return f"incomplete: stopped by {by} with {len(names)} invariant{'s' * (len(names) > 1)} undecided ({shown})"


def compare(check: Check, result: CheckResult) -> tuple[list[str], list[str]]:
    """(regressions, stale differences) between a check's expectations and a run; an undecided
    invariant is not stale (it is incomplete, or accepted as "holds" with incomplete_ok)."""
    regressions: list[str] = []
    stale: list[str] = []
    for name, verdict in result.invariants.items():
        want = check.expect.get(name)
        seen = Expected.of(verdict)
        shown = "not decided" if seen is None else seen.text()
        if seen is None and (want is None or want.holds):
            continue
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
    if check.states is not None and counts_exact(result) and result.distinct_states != check.states:
        stale.append(f"distinct states: expected {check.states:,}, now {result.distinct_states:,}")
    return regressions, stale
