"""Printing results for people, and writing files whole or not at all."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable

import click

from kmc.api import ENGINES, CheckResult, Verdict
from kmc.errors import BadInput
from kmc.model.core import Model
from kmc.traces import itf


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


def write_traces(folder: Path, model: Model, verdicts: Iterable[tuple[str, Verdict]]) -> None:
    """--itf-dir: each counterexample to FOLDER/<model>-<mode>-<invariant>.itf.json."""
    for name, verdict in verdicts:
        if verdict.trace is not None:
            write_atomic(folder / f"{model.name}-{model.mode}-{name}.itf.json", itf.dumps(verdict.trace), "--itf-dir")


def check_writable(path: Path, what: str, *, folder: bool = False) -> None:
    """Before a run: refuse an output path (a file, or with `folder` a directory) that cannot be
    written, so that a run's result is never lost to it. One line naming the option and why."""
    target = Path(os.path.realpath(path))  # a symlink: its target is what gets written
    if folder and target.exists() and not target.is_dir():
        raise BadInput(f"{what} {path}: not a directory")
    if not folder and target.is_dir():
        raise BadInput(f"{what} {path}: is a directory; give a file name")
    if not folder and target.exists() and not target.is_file():
        if not os.access(target, os.W_OK):  # a device or a pipe is written in place
            raise BadInput(f"{what} {path}: not writable")
        return
    ancestor = target if folder else target.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent  # the folders missing below it are created when writing
    if not ancestor.is_dir():
        raise BadInput(f"{what} {path}: {ancestor} is not a directory")
    try:  # a real attempt: root passes every permission check, and /proc refuses files anyway
        fd, probe = tempfile.mkstemp(dir=ancestor, prefix=".kmc-probe.")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise BadInput(f"{what} {path}: cannot create a file in {ancestor} ({e.strerror})")


def write_atomic(path: Path, text: str | bytes, what: str) -> None:
    """Write `text` (or bytes) to `path`, whole or not at all, through a temporary file in the
    target's folder. A symlink is followed (its target is replaced, the link kept), an existing
    file keeps its mode, a device or a pipe is written in place. A failure is one line naming
    the option `what` (exit 2)."""
    target = Path(os.path.realpath(path))
    data = text.encode() if isinstance(text, str) else text
    try:
        if target.exists() and not target.is_file() and not target.is_dir():
            with open(target, "wb") as out:
                out.write(data)
            return
        mode = target.stat().st_mode & 0o7777 if target.is_file() else 0o666 & ~_umask()
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(tmp, mode)  # as the file was, or as open() would create it (not mkstemp's 0600)
            os.replace(tmp, target)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as e:
        check_writable(path, what)  # names the cause when it is the path (a file where a folder should be)
        raise BadInput(f"{what} {path}: cannot write it ({e.strerror or e})")


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask
