"""Progress of long runs on stderr, and what an interrupted run reports.

Silent for the first second. What is shown follows the engine's capabilities: an engine that
counts no states (z3) gets one line per step of its own figures, never a bar or a state count;
one whose levels are coarse (Spark) one line per level with its figures. Otherwise, on a
terminal, a rich progress bar: level, states, states/s, memory, and an ETA once the level sizes
shrink steadily enough to extrapolate; elsewhere (CI logs) a plain line every few seconds. The
memory shown is what --memory-limit measures: the process's own (anonymous) memory, not the pages
of the files it maps (a run past the limit maps its levels on disk: gigabytes of page cache).
Throttled so it never slows the engine down. An engine's own figures (`Progress.figures`) are
shown as they are, value then name. A run that stops short (a limit) checks the states it found
and will not expand: it says so, with how many are left, every few seconds. Within a level
(the vector engines report how much of it is expanded) the bar moves; elsewhere a line says so
once a minute.
`kmc simulate` prints a line per report of the swarm (about one a second) on a terminal, and
at most one every 10 seconds elsewhere. Ctrl-C prints the statistics of the levels done so far
(even with --quiet), once, and exits 130 (kmc/cli/main.py prints the interrupt's message);
output files are only ever written after a run, whole, so none is left half-written.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import click

from kmc import api
from kmc.api import (Capabilities, Checkpoint, CheckResult, Limits, Progress, SearchOptions, anonymous_memory_bytes,
                     peak_memory_bytes)
from kmc.model.temporal import Property
from kmc.model.core import Invariant, Model


UNDER_WAY_EVERY = 60.0  # seconds between lines about a level under way, off a terminal


def remaining_states(levels: Sequence[int]) -> float | None:
    """States still to find, extrapolated from the last level sizes when they shrink
    geometrically (the last two ratios below 1): the sum of the series the last ratio gives.
    None while the levels still grow: no honest estimate exists then."""
    if len(levels) < 3 or levels[-3] <= 0 or levels[-2] <= 0:
        return None
    q1, q2 = levels[-2] / levels[-3], levels[-1] / levels[-2]
    if not (q1 < 1 and q2 < 1):
        return None
    q = max(q1, q2)
    return levels[-1] * q / (1 - q)


class ProgressPrinter:
    def __init__(self, label: str, *, quiet: bool = False, capabilities: Capabilities = Capabilities()):
        self.label = label
        self.quiet = quiet
        self.caps = capabilities  # levels: frontiers are levels, so an ETA can be estimated
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.shown = False
        self.started = time.perf_counter()
        self.latest: Progress | None = None
        self.sizes: list[int] = []
        self.bar: Any = None
        self.task: Any = None
        self.previous = 0.0  # seconds at the last level (per-level lines)
        self.checking = False  # a line about the states checked as the run stops was shown
        self.under_way = 0.0  # when the last line about a level under way was shown (not on a terminal)

    def __call__(self, p: Progress) -> None:
        if p.to_check:
            self._stopping(p)
            return
        if p.expanded:
            self._under_way(p)
            return
        self.latest = p
        self.sizes.append(p.frontier)
        if self.quiet or p.seconds < 1.0:
            return
        if not self.caps.counts_states:  # one line per step of the engine's own figures (z3)
            self._figures_line(p)
            return
        now = time.monotonic()
        per_level = self.caps.coarse_levels  # levels take seconds: each gets a line
        if now - self.last < (0.2 if self.tty else 2.0) and not per_level:
            return
        self.last = now
        rate = p.rate
        left = remaining_states(self.sizes) if self.caps.levels else None
        eta = None if left is None or rate <= 0 else left / rate
        mib = anonymous_memory_bytes() / 2**20
        if per_level:
            seconds = p.seconds - self.previous
            self.previous = p.seconds
            sys.stderr.write(f"{self.label}: level {p.level}: {p.frontier:,} new states in {seconds:.2f} s, "
                             f"{p.distinct_states:,} in all{figures(p)}\n")
            sys.stderr.flush()
        elif self.tty:
            self._bar(p, rate, mib, left)
        else:
            line = (f"{self.label}: level {p.level}, {p.distinct_states:,} states, frontier {p.frontier:,}, "
                    f"{rate:,.0f} states/s, {mib:,.0f} MiB" + ("" if eta is None else f", about {eta:,.0f} s left"))
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        self.shown = True

    def _stopping(self, p: Progress) -> None:
        """A stopping run checks the states it found and will not expand (the vector engines):
        a line when that begins, then one every few seconds, so that a run past its
        --time-limit says what it still does."""
        now = time.monotonic()
        if self.quiet or p.seconds < 1.0 or (self.checking and now - self.last < 2.0):
            return
        self.last, self.checking = now, True
        line = (f"{self.label}: stopping: checking the states found and not expanded, {p.to_check:,} left, "
                f"{anonymous_memory_bytes() / 2**20:,.0f} MiB")
        if self.bar is not None:
            self.bar.console.print(line)
        else:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    def _under_way(self, p: Progress) -> None:
        """A level under way: on a terminal, the bar moves (its level says how much is expanded);
        elsewhere a line at most every UNDER_WAY_EVERY seconds."""
        now = time.monotonic()
        if self.quiet or p.seconds < 1.0 or now - (self.last if self.tty else self.under_way) < \
                (0.2 if self.tty else UNDER_WAY_EVERY):
            return
        share = 100 * p.expanded / p.frontier if p.frontier else 100.0
        mib = anonymous_memory_bytes() / 2**20
        if self.tty:
            self.last = now
            self._bar(p, p.rate, mib, None, level=f"{p.level + 1} ({share:.0f}% of level {p.level} expanded)")
            return
        self.under_way = now
        sys.stderr.write(f"{self.label}: level {p.level + 1} under way, {share:.0f}% of level {p.level}'s "
                         f"{p.frontier:,} states expanded, {p.distinct_states:,} states, {p.rate:,.0f} states/s, "
                         f"{mib:,.0f} MiB\n")
        sys.stderr.flush()
        self.shown = True

    def _figures_line(self, p: Progress) -> None:
        mib = anonymous_memory_bytes() / 2**20
        sys.stderr.write(f"{self.label}{figures(p)}, {p.seconds:.1f} s, {mib:,.0f} MiB\n")
        sys.stderr.flush()
        self.shown = True

    def _bar(self, p: Progress, rate: float, mib: float, left: float | None, level: str | None = None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress as Bar, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        if self.bar is None:
            self.bar = Bar(
                TextColumn("{task.description}"), BarColumn(),
                TextColumn("level {task.fields[level]}"), TextColumn("{task.completed:,.0f} states"),
                TextColumn("{task.fields[rate]:,.0f} states/s"), TextColumn("{task.fields[mib]:,.0f} MiB"),
                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                console=Console(stderr=True), transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=None, level=0, rate=0.0, mib=0.0)
        total = None if left is None else p.distinct_states + left
        self.bar.update(self.task, completed=p.distinct_states, total=total, level=level or p.level, rate=rate, mib=mib)

    def done(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def interrupted(self, kept: Path | None = None) -> str:
        """The statistics of an interrupted run, one line (`kept`: the --checkpoint-dir that
        holds the levels done)."""
        seconds = time.perf_counter() - self.started
        p = self.latest
        if p is None:
            kept_too = "" if kept is None else f"; --resume goes on from the last level kept in {kept}"
            return f"kmc: interrupted: {self.label}, after {seconds:.1f} s, before the first level was done{kept_too}"
        if not self.caps.counts_states:
            return (f"kmc: interrupted: {self.label}{figures(p)}, {seconds:.1f} s, "
                    f"peak memory {peak_memory_bytes() / 2**20:,.0f} MiB; the check is incomplete, nothing was written")
        rate = p.rate
        written = "nothing was written" if kept is None else f"--resume goes on from the last level kept in {kept}"
        return (f"kmc: interrupted: {self.label}, level {p.level}, {p.distinct_states:,} distinct states "
                f"({p.generated_states:,} generated), {seconds:.1f} s, {rate:,.0f} states/s, "
                f"peak memory {peak_memory_bytes() / 2**20:,.0f} MiB; the search is incomplete, {written}")


def figures(p: Progress) -> str:
    """An engine's own progress figures, value then name: ", 3 steps checked"."""
    return "".join(f", {value:,} {name}" for name, value in p.figures.items())


def run_with_progress(
    engine: str, model: Model, invariants: Sequence[Invariant], limits: Limits, search: SearchOptions, *,
    quiet: bool, options: Any = None, properties: Sequence[Property] = (), workers: int | None = None,
    checkpoint: Checkpoint | None = None, spec: str | None = None,
) -> CheckResult:
    """`kmc.check` with progress on stderr, and the statistics of the levels done on Ctrl-C."""
    printer = ProgressPrinter(f"{model.name} {model.mode}", quiet=quiet,
                              capabilities=api.ENGINES[engine].capabilities if engine in api.ENGINES else Capabilities())
    try:
        return api.check(model, invariants, engine=engine, limits=limits, search=search, progress=printer,
                         options=options, properties=properties, workers=workers, checkpoint=checkpoint,
                         spec=spec)
    except KeyboardInterrupt:
        printer.done()
        kept = None if checkpoint is None else checkpoint.directory
        raise KeyboardInterrupt(printer.interrupted(kept)) from None  # main prints it: one line
    finally:
        printer.done()


class WalkProgress:
    """`kmc simulate`'s progress lines: the rounds walked, the steps taken and the distinct
    states seen (counted exactly by the swarm). On a terminal every report is printed; elsewhere
    (CI logs) at most one every `every` seconds, the first after `every` seconds."""

    def __init__(self, label: str, *, every: float | None = None, clock: Callable[[], float] = time.monotonic):
        self.label = label
        self.every = (0.0 if sys.stderr.isatty() else 10.0) if every is None else every
        self.clock = clock
        self.last = clock()

    def __call__(self, p: Progress) -> None:
        now = self.clock()
        if now - self.last < self.every:
            return
        self.last = now
        click.echo(f"{self.label}: round {p.level:,}, {p.generated_states:,} steps, {p.distinct_states:,} distinct "
                   f"states, {p.seconds:.0f} s", err=True)
