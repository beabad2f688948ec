"""An owner's part of the visited set: sorted runs, each holding the keys new to the owner in
a span of levels.

A level adds one run, of the keys it found new, and merges it with the newer runs no larger
than twice its size (the vector engine's `Runs`, kmc/engines/vector/keyset.py: a binary
counter), so a key is rewritten O(log levels) times in a run, and a level writes about its
own keys. An owner that kept one sorted array copied and wrote its whole part at every level
(2PC 10 RMs: 22 % of the owner's CPU in merging, and writing the files 10.7 % of the workers'
samples; benchmarks/results/spark.md).

A run is named by its span of levels (`run-AAAA-BBBB`), which determines its keys. Parked as
files (kmc/engines/spark/parts.py), a run that a level leaves as it was is linked into the
level's directory, not written again.
"""

from __future__ import annotations

import numpy as np

from kmc.engines.spark import parts
from kmc.engines.vector.keyset import KeyFormat, Runs, Visited

Span = tuple[int, int]  # the first and last level whose new keys a run holds


class VisitedRuns(Runs):
    """`Runs` whose runs know their span of levels and, once parked, their directory."""

    def __init__(self, fmt: KeyFormat):
        super().__init__(fmt)
        self.spans: list[Span] = []
        self.sources: list[str | None] = []  # the directory of each run's files; None: not parked as it is

    @classmethod
    def of(cls, fmt: KeyFormat, span: Span, sort_key: np.ndarray, extras: list[np.ndarray]) -> VisitedRuns:
        """One run of distinct keys, given in any order (a run is ordered by sort key alone:
        `Visited.find` looks through the keys sharing a sort key)."""
        runs = cls(fmt)
        if len(sort_key) > 1 and bool((sort_key[1:] < sort_key[:-1]).any()):
            order = np.argsort(sort_key, kind="stable")
            sort_key, extras = sort_key[order], [x[order] for x in extras]
        runs.add_levels(span, sort_key, extras)
        return runs

    def add_levels(self, span: Span, sort_key: np.ndarray, extras: list[np.ndarray]) -> None:
        """Add the keys new in `span` (distinct, in sort-key order, none held already)."""
        if len(sort_key):
            self.spans.append(span)
            self.sources.append(None)
            self.add(sort_key, extras)

    def _merge_newest(self) -> None:
        super()._merge_newest()
        last = self.spans.pop()[1]
        self.spans[-1] = (self.spans[-1][0], last)
        self.sources.pop()
        self.sources[-1] = None

    def runs_to_park(self) -> list[tuple[str, dict[str, np.ndarray] | str]]:
        """Each run's name with its arrays, or with its directory when it is parked as it is."""
        return [(f"run-{a:04d}-{b:04d}", source if source is not None else
                 {"key": run.sort_key, **{f"extra{w}": e for w, e in enumerate(run.extras)}})
                for (a, b), source, run in zip(self.spans, self.sources, self.runs)]

    @classmethod
    def unparked(cls, fmt: KeyFormat, parked: parts.Parked) -> VisitedRuns:
        """The runs parked with a partition, their arrays mapped from their files."""
        runs = cls(fmt)
        for name, directory in parts.runs(parked):
            _, a, b = name.split("-")
            extras = [parts.load(parked, f"{name}/extra{w}") for w in range(len(fmt.extra_dtypes))]
            runs.runs.append(Visited.holding(fmt, parts.load(parked, f"{name}/key"), extras))
            runs.spans.append((int(a), int(b)))
            runs.sources.append(directory)
        return runs
