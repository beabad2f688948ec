"""Each walk's own random stream, and the choice of a walker's next step.

A walk is numbered (0, 1, 2, ... in the run); its random numbers are splitmix64's sequence
(Steele, Lea and Flood, 2014: a 64-bit counter advanced by the golden ratio, then mixed)
started at a key mixed from the run's seed and the walk's number. Draw 0 picks the walk's
initial state, draw t + 1 its step after t steps. So a walk goes the same way whichever
process, swarm or walker runs it, and the states a run sees with `--walks` are the same for
any `--workers` and `--walkers`. Everything is uint64 arithmetic over numpy arrays (products
wrap modulo 2**64, as splitmix64's do).
"""

from __future__ import annotations

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_UNIT = 2.0**-53


def _mix(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def walk_keys(seed: int, walks: np.ndarray) -> np.ndarray:
    """The stream key (uint64) of each walk numbered in `walks`, for the run's `seed`."""
    base = _mix(np.array([seed], dtype=np.uint64))[0]
    with np.errstate(over="ignore"):
        return _mix(base ^ _mix((walks.astype(np.uint64) + np.uint64(1)) * _GOLDEN))


def draw(keys: np.ndarray, t: np.ndarray | int) -> np.ndarray:
    """Draw t of each stream: a float64 in [0, 1), 53 random bits."""
    with np.errstate(over="ignore"):
        z = _mix(keys + (np.asarray(t).astype(np.uint64) + np.uint64(1)) * _GOLDEN)
    return (z >> np.uint64(11)).astype(np.float64) * _UNIT


def choose(u: np.ndarray, counts: np.ndarray, iids: np.ndarray, weight: np.ndarray | None
           ) -> tuple[np.ndarray, np.ndarray]:
    """Each walker's step among its candidates: `counts` per walker, their instance ids `iids`
    one walker after the other, each walker's in instance order. Uniform (weight None): the
    k-th candidate, k = floor(u * count). Weighted: the first candidate whose running total of
    weights (summed in instance order) passes u * total. The walkers that can move (some
    candidate, of weight above 0 when weighted) and the index in `iids` of each one's step."""
    offsets = np.cumsum(counts) - counts
    if weight is None:
        moved = np.flatnonzero(counts > 0)
        c = counts[moved]
        k = np.minimum((u[moved] * c).astype(np.int64), c - 1)
        return moved, offsets[moved] + k
    n = len(counts)
    width = int(counts.max()) if n else 0
    within = np.arange(len(iids)) - np.repeat(offsets, counts)
    dense = np.zeros((max(width, 1), n), dtype=np.float64)  # a walker's weights down its column, 0 after them
    dense[within, np.repeat(np.arange(n), counts)] = weight[iids]
    running = np.cumsum(dense, axis=0)  # summed in order down each column
    total = running[-1]
    moved = np.flatnonzero(total > 0)
    pick = u[moved] * total[moved]
    k = np.minimum((running[:, moved] <= pick).sum(axis=0), counts[moved] - 1)
    return moved, offsets[moved] + k
