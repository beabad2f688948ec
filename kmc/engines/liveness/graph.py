"""The explored state graph as arrays: states are numbered 0..n-1 in breadth-first order
(the initial states first), and every step that changes the state is an edge (src, dst,
instance id), sorted by src with `start` giving each state's first edge (CSR).

Steps that change nothing are left out: under TLA+'s `<<A>>_vars` they neither take nor
enable an action, and stuttering is implicit in every state (kmc/engines/liveness/fair.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Graph:
    n: int
    initial: np.ndarray  # ids of the initial states
    src: np.ndarray  # int64, ascending
    dst: np.ndarray
    iid: np.ndarray  # instance id of each edge
    start: np.ndarray  # n + 1: edges of state v are start[v]:start[v + 1]
    _from_initial: tuple[np.ndarray, np.ndarray] | None = None

    @classmethod
    def of(cls, n: int, initial: np.ndarray, src: np.ndarray, dst: np.ndarray, iid: np.ndarray) -> Graph:
        """The graph of the given edges (any order; steps to the state itself are dropped)."""
        moves = src != dst
        src, dst, iid = src[moves], dst[moves], iid[moves]
        order = _stable_order(src.astype(np.int64))
        src, dst, iid = src[order].astype(np.int64), dst[order].astype(np.int64), iid[order]
        start = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=start[1:])
        return cls(n, np.asarray(initial, dtype=np.int64), src, dst, iid, start)

    def from_initial(self) -> tuple[np.ndarray, np.ndarray]:
        """Breadth-first distances and parent edges from the initial states over the whole
        graph (computed once: every property's prefix search starts from them)."""
        if self._from_initial is None:
            self._from_initial = bfs(self, np.ones(self.n, dtype=bool), self.initial)
        return self._from_initial

    @property
    def edges(self) -> int:
        return len(self.src)

    @property
    def nbytes(self) -> int:
        return self.src.nbytes + self.dst.nbytes + self.iid.nbytes + self.start.nbytes

    def out_edges(self, states: np.ndarray) -> np.ndarray:
        """The ids of every edge leaving the given states, state by state."""
        lo, hi = self.start[states], self.start[states + 1]
        counts = hi - lo
        total = int(counts.sum())
        if total == 0:
            return np.zeros(0, dtype=np.int64)
        offsets = np.repeat(lo - np.cumsum(counts) + counts, counts)
        return offsets + np.arange(total, dtype=np.int64)


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """A stable argsort of small non-negative ints: sorting key * 2**32 + index when that fits
    (numpy sorts several times faster than it argsorts)."""
    if len(keys) == 0 or len(keys) >= 1 << 32 or int(keys.max()) >= 1 << 31:
        return np.argsort(keys, kind="stable")
    combined = (keys << 32) | np.arange(len(keys), dtype=np.int64)
    combined.sort()
    return combined & ((1 << 32) - 1)


def bfs(graph: Graph, mask: np.ndarray, sources: np.ndarray, start: np.ndarray | None = None,
        walk: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Breadth-first distances inside `mask` from `sources` (each entering at distance
    `start`, 0 by default) and each reached state's parent edge (-1 for a source).
    Unreached states have distance -1. With `walk` false, only the sources are reached."""
    n = graph.n
    dist = np.full(n, -1, dtype=np.int64)
    parent = np.full(n, -1, dtype=np.int64)
    sources = np.asarray(sources, dtype=np.int64)
    begin = np.zeros(len(sources), dtype=np.int64) if start is None else np.asarray(start, dtype=np.int64)
    keep = mask[sources] & (begin >= 0)
    sources, begin = sources[keep], begin[keep]
    if not len(sources):
        return dist, parent
    order = np.argsort(begin, kind="stable")
    sources, begin = sources[order], begin[order]
    d = int(begin[0])
    frontier = np.zeros(0, dtype=np.int64)
    at = 0
    while True:
        hi = int(np.searchsorted(begin, d, side="right"))
        entering = sources[at:hi]
        at = hi
        entering = np.unique(entering[dist[entering] < 0]) if len(entering) else entering
        dist[entering] = d
        frontier = np.concatenate([frontier, entering])
        if not len(frontier):
            if at >= len(sources):
                break
            d = int(begin[at])
            continue
        if not walk:
            frontier = np.zeros(0, dtype=np.int64)
            d += 1
            continue
        e = graph.out_edges(frontier)
        to = graph.dst[e]
        fresh = mask[to] & (dist[to] < 0)
        e, to = e[fresh], to[fresh]
        to, first = np.unique(to, return_index=True)
        d += 1
        dist[to] = d
        parent[to] = e[first]
        frontier = to
    return dist, parent


def path_to(graph: Graph, parent: np.ndarray, v: int) -> list[int]:
    """The edge ids from a source to state v along `parent`."""
    out: list[int] = []
    while parent[v] >= 0:
        e = int(parent[v])
        out.append(e)
        v = int(graph.src[e])
    return out[::-1]
