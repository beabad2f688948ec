"""`kmc simulate --workers N`: the swarm spread over this machine's cores.

A swarm keeps a process busy (numpy, and the Python between kernel calls), so here each of N
forked processes runs a swarm of its own (kmc/engines/simulation/swarm.py) with its share of the
walkers and of the walks (`Walks.shares`: walk numbers p, p + N, ...; every walk has its own
random stream), over the interpretation the parent built before forking (the compiled kernels
are compiled or loaded once). The parent merges what they found: the union of the states they
saw (each child's key set arrives sorted and distinct, and is merged in one pass), their
figures, and per invariant the violation of the lowest worker, which it replays and tries to
shorten. The first violation (without `--continue`) sets an event that ends every worker's
walks at its next round. A run that ends by `--walks` sees the same states, steps and walks
for any N.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import traceback
from typing import Any, Sequence

from kmc.engines.result import CheckResult, peak_memory_bytes
from kmc.engines.interface import ProgressHook
from kmc.engines.simulation.swarm import Findings, Swarm, Walks
from kmc.errors import BadInput, RunFailed
from kmc.model.core import Invariant, Model

_WAIT = 0.5  # seconds between looks at the children while they walk


def cores() -> int:
    """The cores this process may run on: --workers' default."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def simulate(model: Model, invariants: Sequence[Invariant], walks: Walks, workers: int | None,
             progress: ProgressHook | None = None) -> CheckResult:
    """Run the walks in `workers` forked processes (None: one per core); the result is the
    merged swarm's, its `engine_stats` with "workers"."""
    workers = cores() if workers is None else workers
    if workers < 1:
        raise BadInput(f"--workers {workers}: give a number of worker processes from 1 up")
    driver = Swarm(model, invariants, walks, None)  # checks the plan (weights, an end, a seed) before forking
    if workers == 1:
        driver.progress = progress
        driver.walk()
        return driver.result(extra={"workers": 1})
    driver.check_memory(walks.walkers)  # the workers' shares together, on this machine
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:
        raise BadInput("--workers needs the 'fork' start method (Linux, macOS); use --workers 1") from None
    halt = ctx.Event()
    results: Any = ctx.Queue()
    children = [ctx.Process(target=_run_share, args=(model, invariants, share, p, halt, results,
                                                     progress if p == 0 else None, driver.moves), daemon=True)
                for p, share in enumerate(walks.shares(workers))]
    for child in children:
        child.start()
    outcomes: dict[int, Findings] = {}
    peaks: dict[int, int] = {}
    try:
        while len(outcomes) < workers:
            try:
                p, outcome, peak, error = results.get(timeout=_WAIT)
            except queue.Empty:
                dead = [c for c in children if c.exitcode not in (None, 0)]
                if dead:
                    raise RunFailed(f"a simulation worker died (exit code {dead[0].exitcode}): "
                                   "out of memory? Try fewer --walkers or --workers") from None
                continue
            if error is not None:
                raise error
            outcomes[p], peaks[p] = outcome, peak
    finally:
        halt.set()
        for child in children:
            child.join(timeout=5)
            if child.is_alive():
                child.terminate()
    driver.merge([outcomes[p] for p in range(workers)])
    result = driver.result(extra={"workers": workers, "worker_peak_bytes": [peaks[p] for p in range(workers)],
                                  "merge_seconds": round(driver.merge_seconds, 3)})
    result.peak_memory_bytes += sum(peaks.values())  # every worker's own peak (pages shared at the fork counted in each)
    return result


def _run_share(model: Model, invariants: Sequence[Invariant], walks: Walks, p: int, halt: Any, results: Any,
               progress: ProgressHook | None, moves: Any) -> None:
    """In a child: one share's swarm; its outcome (or its error) goes back on `results`. Ctrl-C
    is the parent's to report: it sets `halt`, which ends this walk at its next round. A
    SIGTERM (the parent's own way of stopping a child) ends the child quietly: the parent's
    handler, which turns it into Ctrl-C (kmc/cli/main.py), is not the child's."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        swarm = Swarm(model, invariants, walks, progress, moves)
        swarm.halt = halt
        swarm.walk()
        if swarm.stopped_by == "violation":
            halt.set()
        results.put((p, swarm.outcome(), peak_memory_bytes(), None))
    except BadInput as e:  # a contract error found while walking: the CLI's one line
        results.put((p, None, 0, e))
    except Exception as e:  # anything else is internal: its traceback goes with it
        results.put((p, None, 0, RuntimeError(f"simulation worker {p + 1}: {type(e).__name__}: {e}\n"
                                           f"{traceback.format_exc()}")))
