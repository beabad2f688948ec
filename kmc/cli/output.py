"""Printing results for people, and writing files whole or not at all."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

from kmc.api import ENGINES, CheckResult, Verdict


def summary(result: CheckResult) -> str:
    engine = ENGINES.get(result.engine)
    if engine is not None and not engine.capabilities.counts_states:
        return _bounded_summary(result)
    stop = {
        None: "Complete: every reachable state explored.",
        "violation": "Stopped at the first violation (--continue explores on).",
        "max-states": "Stopped by --max-states: the search is incomplete.",
        "max-depth": "Stopped by --max-depth: the search is incomplete.",
        "time-limit": "Stopped by --time-limit: the search is incomplete, verdicts not shown violated are partial.",
        "memory-limit": "Stopped by --memory-limit: the search is incomplete, verdicts not shown violated are partial.",
    }.get(result.stopped_by, f"Stopped ({result.stopped_by}): the search is incomplete.")
    states = "distinct states up to renaming replicas" if result.symmetry else "distinct states"
    stored = "" if result.bytes_per_state is None else f" ({result.bytes_per_state:.0f} bytes/state stored)"
    return (
        f"engine {result.engine}: {result.distinct_states:,} {states} "
        f"({result.generated_states:,} generated), depth {result.depth}, {result.seconds:.2f} s, "
        f"{result.states_per_second:,.0f} states/s, peak memory {result.peak_memory_bytes / 2**20:,.0f} MiB"
        f"{stored}\n{stop}" + "".join(f"\n{line}" for line in (engine.notes(result) if engine else []))
    )


def _bounded_summary(result: CheckResult) -> str:
    steps = result.depth - 1
    stop = (
        "Stopped at the first violation (--continue looks on for the others)."
        if result.stopped_by == "violation"
        else f"Bounded: 'not decided' means no run of up to {steps} steps violates it (kmc prove proves for every depth)."
    )
    return (
        f"engine {result.engine}: bounded model checking, runs of up to {steps} steps (BFS levels 1..{steps + 1}), "
        f"{result.seconds:.2f} s, peak memory {result.peak_memory_bytes / 2**20:,.0f} MiB\n{stop}"
    )


def verdict_text(v: Verdict) -> str:
    if v.report:
        if v.holds is True:
            return "always"
        if v.holds is False:
            assert v.trace is not None
            return f"fails: {v.states:,} states, first at step {v.trace.length}"
        return f"fails: {v.states:,} states so far" if v.states else "not decided"
    if v.holds is True:
        return "holds"
    if v.holds is False:
        assert v.trace is not None
        return f"VIOLATED ({v.trace.length} steps)"
    return "not decided"


def warn_never_enabled(result: CheckResult) -> None:
    """With --coverage: a warning on stderr for each action family the run never enabled."""
    for name in (result.coverage or {}).get("never_enabled", []):
        click.echo(f"kmc: warning: action {name} was never enabled in this run: a rule that never applies "
                   "is usually a model bug (a guard that cannot hold)", err=True)


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write `text` (or bytes) to `path` through a temporary file in the same directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as open() would create it, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
