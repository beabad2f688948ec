"""Where keys go in sorted sort keys: numpy's searchsorted, and, for a run on disk, through a
sparse index of its sort keys held in memory.

A binary search over a run's mapped sort keys reads a page at each of its last steps. Once the
runs on disk no longer fit in the page cache, each of those pages is a read from disk: on kraft
v3.5's goal run at 515 million states (40 levels on disk, 4.1 GB of sort keys beside 14 GB of
search), the lower bounds of the searches on disk were a quarter of the workers' time, the disk
reading 200-580 MB/s. A run on disk keeps every EVERY-th sort key in memory (`sample`: 1/512 of
them, 8 MB for 515 million keys); a key's lower bound is then among the EVERY - 1 sort keys
between two sampled ones, a single page, searched there (`indexed_lower_bounds`).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

EVERY = 512  # 512 sort keys of 8 bytes: a 4 KiB page between two sampled ones

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


def sample(ascending: np.ndarray) -> np.ndarray:
    """The index of a run's sorted sort keys: every EVERY-th one, in memory."""
    return np.array(ascending[::EVERY])


def indexed_lower_bounds(ascending: np.ndarray, index: np.ndarray, keys: np.ndarray,
                         lower: LowerBounds, lower_from: LowerBoundsFrom) -> np.ndarray:
    """lower(ascending, keys), from `index` = sample(ascending): a key above b sampled keys and
    not above the next one goes after position (b - 1) * EVERY and at most at b * EVERY, so it
    is searched among the EVERY - 1 keys from (b - 1) * EVERY + 1 (the range moved down to fit
    at the end of the run)."""
    n = len(ascending)
    span = min(EVERY - 1, n)
    if span == 0:
        return np.zeros(len(keys), dtype=np.int64)
    block = lower(index, keys).astype(np.int64)
    start = np.clip((block - 1) * EVERY + 1, 0, n - span)
    return lower_from(ascending, keys, start, span)
