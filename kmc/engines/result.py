"""What a run reports: statistics and a verdict per invariant. Field names are stable:
CI gates and scripts read the JSON form."""

from __future__ import annotations

import ctypes
import resource
import sys
from dataclasses import dataclass, field
from typing import Any

from kmc.model.core import Instance, State
from kmc.traces.trace import Trace


@dataclass
class Verdict:
    """holds: True (complete search, never violated), False (violated), None (undecided)."""

    holds: bool | None
    trace: Trace | None = None
    report: bool = False  # an availability report: counted, never a failure
    states: int | None = None  # for reports: reachable states where it fails

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"holds": self.holds, "trace_length": None if self.trace is None else self.trace.length}
        if self.trace is not None and self.trace.loop is not None:
            out["loop"] = self.trace.loop
        if self.report:
            out.update(report=True, states=self.states)
        return out


@dataclass
class Progress:
    level: int
    distinct_states: int
    generated_states: int
    frontier: int
    seconds: float
    figures: dict[str, Any] = field(default_factory=dict)  # an engine's own: name -> value, shown as they are
    resumed_states: int = 0  # loaded from a checkpoint (--resume): not found in `seconds`
    to_check: int = 0  # stopping: the states found and not expanded still to check before the run ends
    # a level under way: how many of the `frontier` states of level `level` are expanded so far
    # (`distinct_states` then counts the next level's states found so far); 0 at a level's end
    expanded: int = 0

    @property
    def rate(self) -> float:
        """States found a second by this run."""
        return (self.distinct_states - self.resumed_states) / self.seconds if self.seconds > 0 else 0.0


@dataclass
class CheckResult:
    model: str
    mode: str
    engine: str
    settings: dict[str, Any]
    distinct_states: int
    generated_states: int
    depth: int
    seconds: float
    complete: bool
    stopped_by: str | None  # "violation", "max-states", "max-depth", "time-limit", "memory-limit", or None
    invariants: dict[str, Verdict] = field(default_factory=dict)
    peak_memory_bytes: int = 0
    symmetry: bool = False  # states told apart only up to renaming replicas
    bytes_per_state: float | None = None  # stored keys and parent links per distinct state (vector engine)
    engine_stats: dict[str, Any] = field(default_factory=dict)  # engine-specific figures (Spark: session, levels)
    coverage: dict[str, Any] | None = None  # with Limits.coverage: kmc/engines/simulation/coverage.py's to_json()
    properties: dict[str, Verdict] = field(default_factory=dict)  # liveness: a lasso trace when violated
    resumed_states: int = 0  # loaded from a checkpoint (--resume): not found in `seconds`

    @property
    def states_per_second(self) -> float:
        """States found a second by this run."""
        return (self.distinct_states - self.resumed_states) / self.seconds if self.seconds > 0 else float("inf")

    @property
    def violated(self) -> list[str]:
        """Safety invariants and liveness properties found violated (reports do not count)."""
        return ([n for n, v in self.invariants.items() if v.holds is False and not v.report]
                + [n for n, v in self.properties.items() if v.holds is False])

    @property
    def undecided(self) -> list[str]:
        """Invariants and properties the run left undecided (`holds is None`): a limit stopped it
        first (`stopped_by`). The commands exit 4 when some are and none is violated."""
        return [n for n, v in [*self.invariants.items(), *self.properties.items()] if v.holds is None]

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "mode": self.mode,
            "engine": self.engine,
            "settings": self.settings,
            "distinct_states": self.distinct_states,
            "generated_states": self.generated_states,
            "depth": self.depth,
            "seconds": round(self.seconds, 3),
            "states_per_second": round(self.states_per_second) if self.seconds > 0 else None,
            "peak_memory_bytes": self.peak_memory_bytes,
            "bytes_per_state": None if self.bytes_per_state is None else round(self.bytes_per_state, 1),
            "symmetry": self.symmetry,
            "complete": self.complete,
            "stopped_by": self.stopped_by,
            "invariants": {n: v.to_json() for n, v in self.invariants.items()},
            **({"engine_stats": self.engine_stats} if self.engine_stats else {}),
            **({"coverage": self.coverage} if self.coverage is not None else {}),
            **({"properties": {n: v.to_json() for n, v in self.properties.items()}} if self.properties else {}),
        }


# the verdicts of a proof (kmc prove)
PROVED, COUNTEREXAMPLE, NOT_INDUCTIVE, UNKNOWN = "proved", "counterexample", "not inductive", "unknown"
RANGES = "field ranges"  # the implicit lemma's name in results


@dataclass
class Proof:
    """The outcome of `prove`. `k` is the last k tried; `failed` names the conjunct (the
    invariant, a lemma or the field ranges) that a counterexample violates; `cti` is the
    counterexample to induction: k states satisfying everything, then the bad successor,
    with the instance before each state after the first."""

    invariant: str
    lemmas: list[str]
    verdict: str
    k: int
    seconds: float
    trace: Trace | None = None
    failed: str | None = None
    cti: list[tuple[Instance | None, State]] = field(default_factory=list)
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "invariant": self.invariant,
            "lemmas": self.lemmas,
            "verdict": self.verdict,
            "k": self.k,
            "seconds": round(self.seconds, 3),
            "failed": self.failed,
            "trace_length": None if self.trace is None else self.trace.length,
            "cti": [{"action": None if i is None else i.label, "state": list(s)} for i, s in self.cti],
            "reason": self.reason,
        }


def peak_memory_bytes() -> int:
    """This program's peak resident set size: Linux's VmHWM, the high-water mark of the
    address space the program runs in. Not getrusage's ru_maxrss, which keeps the peak of
    the process image before exec: kmc started by a large parent (pytest, a CI runner)
    would report the parent's peak as its own."""
    found = _status_bytes("VmHWM:")
    if found is not None:
        return found
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


def current_memory_bytes() -> int:
    """The process's resident set size now (Linux /proc; elsewhere the peak)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    except (OSError, IndexError, ValueError):
        return peak_memory_bytes()


def anonymous_memory_bytes() -> int:
    """The memory this process allocated and holds now (Linux's RssAnon: not the pages of the
    files it maps, which the kernel may drop at will); elsewhere the resident set size."""
    found = _status_bytes("RssAnon:")
    return current_memory_bytes() if found is None else found


def release_freed_memory(at_least: int = 0) -> None:
    """Give the pages of freed memory back to the system (glibc's `malloc_trim`; elsewhere
    nothing), when the C library's heaps hold at least `at_least` bytes freed (glibc's
    `mallinfo2`; without it, always). Arrays under 32 MB come from those heaps, which keep
    what is freed resident: on the first 10 million states of kraft's v3.5 configuration, 450
    of the 1,250 MB held after a level. The pages given back are faulted in again when the
    heaps reuse them: trimming after each of kraft kip966 b2's 41 levels (at most 63 MB held
    freed) took 0.5 s of system time of a 3.5 s run."""
    if _LIBC is None:
        return
    if at_least and _MALLINFO2 is not None and _MALLINFO2().fordblks < at_least:
        return
    _LIBC.malloc_trim(0)


class _MallInfo2(ctypes.Structure):
    """glibc's `struct mallinfo2` (fordblks: the bytes its heaps hold freed)."""

    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]


def _glibc() -> ctypes.CDLL | None:
    """The C library this process runs on, when it is glibc (its own symbols: no search for the
    library, which runs ldconfig)."""
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None


def _mallinfo2(libc: ctypes.CDLL | None) -> Any:
    """glibc's `mallinfo2` (2.33 and later), or None."""
    if libc is None or not hasattr(libc, "mallinfo2"):
        return None
    libc.mallinfo2.restype = _MallInfo2
    return libc.mallinfo2


_LIBC = _glibc() if sys.platform.startswith("linux") else None
_MALLINFO2 = _mallinfo2(_LIBC)


def _status_bytes(field: str) -> int | None:
    """A size Linux gives in /proc/self/status (in kB there), or None elsewhere."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return None
