"""Where keys go in sorted sort keys: numpy's searchsorted, and, for a run on disk, through a
sparse index of its sort keys held in memory.

A binary search over a run's mapped sort keys reads a page at each of its last steps. Once the
runs on disk no longer fit in the page cache, each of those pages is a read from disk: on kraft
v3.5's goal run at 515 million states (40 levels on disk, 4.1 GB of sort keys beside 14 GB of
search), the lower bounds of the searches on disk were a quarter of the workers' time, the disk
reading 200-580 MB/s. A run on disk keeps every EVERY-th sort key in memory (`Index`: 1/512 of
them, 8 MB for 515 million keys), the first sampled one at the start of a page; a key's lower
bound is then among the EVERY - 1 sort keys after the last sampled one below it, in that page,
searched there.
"""

from __future__ import annotations

import mmap
from typing import Callable

import numpy as np

PAGE = mmap.PAGESIZE  # 4 KiB here
EVERY = PAGE // 8  # the sort keys of a page: 512

LowerBounds = Callable[[np.ndarray, np.ndarray], np.ndarray]  # np.searchsorted(ascending, keys), side left
# (ascending, keys, start, span) -> start + how many of ascending[start:start + span] are below each key
LowerBoundsFrom = Callable[[np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]


def lower_bounds(ascending: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Where each key goes in `ascending`: numpy's searchsorted."""
    return np.searchsorted(ascending, keys)


def lower_bounds_from(ascending: np.ndarray, keys: np.ndarray, start: np.ndarray, span: int) -> np.ndarray:
    """start[i] + how many of ascending[start[i]:start[i] + span] are below keys[i], each range
    within `ascending`, span at least 1: the halvings of the native kernel
    (kmc/semantics/compiled/keys.py:KeyKernels.lower_bounds_from), a gather of every key's
    middle at a time."""
    low = start.astype(np.int64)
    left = span
    while left > 1:
        half = left >> 1
        middle = low + half
        low = np.where(ascending[middle] < keys, middle, low)
        left -= half
    return low + (ascending[low] < keys)


class Index:
    """Every EVERY-th of a run's sorted sort keys (uint64, contiguous), in memory: from `first`,
    the first at the start of a page of memory (a mapped file's pages are its own)."""

    def __init__(self, ascending: np.ndarray):
        self.first = (-ascending.ctypes.data % PAGE) // 8
        self.keys = np.array(ascending[self.first::EVERY])

    def lower_bounds(self, ascending: np.ndarray, keys: np.ndarray, lower: LowerBounds,
                     lower_from: LowerBoundsFrom) -> np.ndarray:
        """lower(ascending, keys): a key above b sampled keys and not above the next goes after
        the b-th sampled one, at most EVERY places on (or, b = 0, at most at `first`): it is
        searched among the EVERY - 1 keys that follow, in its page (the range moved down to fit
        at the end of the run)."""
        n = len(ascending)
        span = min(EVERY - 1, n)
        if span == 0:
            return np.zeros(len(keys), dtype=np.int64)
        below = lower(self.keys, keys).astype(np.int64)
        start = np.where(below > 0, self.first + (below - 1) * EVERY + 1, 0)
        return lower_from(ascending, keys, np.minimum(start, n - span), span)
