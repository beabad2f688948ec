"""What a run exits with once its verdicts are in: VIOLATION when one is violated, else
INCOMPLETE when a limit left one undecided (one line on stderr names the limit), unless
`--allow-incomplete`, for exploratory runs; else OK. kmc/exits.py lists the codes."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import click

from kmc import exits
from kmc.api import ENGINES, CheckResult, Limits
from kmc.sizes import show_size


def allow_incomplete_option() -> Callable[[Any], Any]:
    return click.option("--allow-incomplete", is_flag=True,
                        help="exit 0, not 4, when a limit leaves an invariant or property undecided "
                             "(exploratory runs)")


def flags(limits: Limits) -> dict[str, str]:
    """Each limit a run may stop by (CheckResult.stopped_by), as its option was given."""
    out = {"max-states": "--max-states", "max-depth": "--max-depth", "time-limit": "--time-limit",
           "memory-limit": "--memory-limit"}
    if limits.max_states is not None:
        out["max-states"] += f" {limits.max_states}"
    if limits.max_depth is not None:
        out["max-depth"] += f" {limits.max_depth}"
    if limits.time_limit is not None:
        out["time-limit"] += f" {limits.time_limit:g}"
    if limits.memory_limit is not None:
        out["memory-limit"] += f" {show_size(limits.memory_limit)}"
    return out


def stopped_by(result: CheckResult, stops: dict[str, str]) -> str:
    """What stopped a run, as the user gave it; for an engine that counts no states (a bounded
    search, z3), its bound: it is the search, which finds violations only."""
    engine = ENGINES.get(result.engine)
    if engine is not None and not engine.capabilities.counts_states and result.stopped_by == "max-depth":
        return (f"the {result.engine} engine's bound of {result.depth - 1} steps "
                "(a bounded search decides no invariant holds)")
    return stops.get(result.stopped_by or "", result.stopped_by or "an unknown limit")


def exit_code(results: Sequence[CheckResult], stops: dict[str, str], *, allow: bool) -> int:
    """The exit code of a check (one result) or a comparison (one per column); `stops` names
    each limit as the user gave it (`flags`)."""
    if any(r.violated for r in results):
        return exits.VIOLATION
    open_ = [(r, r.undecided) for r in results if r.undecided]
    if not open_:
        return exits.OK
    by = sorted({stopped_by(r, stops) for r, _ in open_})
    names = list(dict.fromkeys(n for _, ns in open_ for n in ns))
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    where = f" in {len(open_)} of {len(results)} columns" if len(results) > 1 else ""
    outcome = "exit 0 (--allow-incomplete)" if allow else "exit 4 (--allow-incomplete: exit 0)"
    plural = "s" * (len(names) > 1)
    click.echo(f"kmc: incomplete: stopped by {' and '.join(by)}{where} with {len(names)} verdict{plural} undecided "
               f"({shown}); {outcome}", err=True)
    return exits.OK if allow else exits.INCOMPLETE
