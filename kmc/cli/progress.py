"""Progress of long runs on stderr: silent for the first second, then a line per update
(rewritten in place on a terminal), throttled so it never slows the engine down."""

from __future__ import annotations

import sys
import time

from typing import Sequence

from kmc.checker import engines
from kmc.checker.result import CheckResult, Progress, peak_memory_bytes
from kmc.checker.search import Limits
from kmc.model.core import Invariant, Model
from kmc.traces.replay import replay


class ProgressPrinter:
    def __init__(self, label: str, *, quiet: bool = False):
        self.label = label
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.shown = False

    def __call__(self, p: Progress) -> None:
        if self.quiet or p.seconds < 1.0:
            return
        now = time.monotonic()
        if now - self.last < (0.2 if self.tty else 2.0):
            return
        self.last = now
        rate = p.distinct_states / p.seconds if p.seconds > 0 else 0
        line = (
            f"{self.label}: level {p.level}, {p.distinct_states:,} states, frontier {p.frontier:,}, "
            f"{rate:,.0f} states/s, {peak_memory_bytes() / 2**20:,.0f} MiB"
        )
        if self.tty:
            sys.stderr.write("\r\033[K" + line)
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown and self.tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def run_with_progress(
    engine: str, model: Model, invariants: Sequence[Invariant], limits: Limits, *, quiet: bool
) -> CheckResult:
    """Run an engine with progress on stderr, then replay every trace it returns: an engine
    bug, never a wrong trace, reaches users."""
    printer = ProgressPrinter(f"{model.name} {model.mode}", quiet=quiet)
    try:
        result = engines.run(engine, model, invariants, limits, printer)
    finally:
        printer.done()
    for inv in invariants:
        trace = result.invariants[inv.name].trace
        if trace is not None:
            replay(trace, inv)
    return result
