"""Fair cycles: the strongly connected components of a sub-graph on which some behaviour can
stay for ever while meeting every fairness condition (TLC's method, on arrays).

Every state may stutter, so every state on its own is a cycle. A component C (all of it
visited over and over, which only helps) satisfies
- WF(A) when A is taken inside C, or A is disabled in some state of C;
- SF(A) when A is taken inside C, or A is disabled in every state of C. Otherwise the
  behaviour must avoid the states where A is enabled: those are removed and the
  components of what remains are examined again (A can then never be enabled there);
- the acceptance set (for <>[]P: the states violating P) when C holds one of its states.
A WF or acceptance failure is final: any cycle inside C fails it too.

The components come from scipy's C implementation (Pearce's iterative algorithm,
`scipy.sparse.csgraph.connected_components(connection="strong")`); docs/liveness.md says why.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kmc.engines.liveness.graph import Graph


@dataclass
class Conditions:
    """The fairness conditions of a property on a graph: per condition its label, whether it
    is strong, which states it is enabled in, and which edges take it."""

    labels: list[str]
    strong: list[bool]
    enabled: np.ndarray  # conditions x states, bool
    takes: np.ndarray  # conditions x edges, bool

    @classmethod
    def of(cls, graph: Graph, conditions: list[tuple[str, bool, list[int]]], instances: int) -> Conditions:
        """`conditions`: (label, strong, instance ids) each."""
        enabled = np.zeros((len(conditions), graph.n), dtype=bool)
        takes = np.zeros((len(conditions), graph.edges), dtype=bool)
        for k, (_, _, ids) in enumerate(conditions):
            member = np.zeros(instances, dtype=bool)
            member[ids] = True
            takes[k] = member[graph.iid]
            enabled[k, graph.src[takes[k]]] = True
        return cls([c[0] for c in conditions], [c[1] for c in conditions], enabled, takes)


def components(graph: Graph, mask: np.ndarray) -> np.ndarray:
    """The strongly connected component of each state of the sub-graph `mask` induces
    (-1 outside it): labels are arbitrary ints."""
    inside = mask[graph.src] & mask[graph.dst]
    indptr = np.zeros(graph.n + 1, dtype=np.int64)  # the edges are sorted by src: CSR as they are
    np.cumsum(np.bincount(graph.src[inside], minlength=graph.n), out=indptr[1:])
    from scipy.sparse import csr_matrix  # imported here: 30 MiB that a safety-only run never needs
    from scipy.sparse.csgraph import connected_components

    m = csr_matrix((np.ones(int(indptr[-1]), dtype=np.int8), graph.dst[inside], indptr),
                   shape=(graph.n, graph.n))
    _, labels = connected_components(m, directed=True, connection="strong")
    return np.where(mask, labels, -1).astype(np.int64)


def fair_components(graph: Graph, mask: np.ndarray, conds: Conditions,
                    accept: np.ndarray | None = None) -> np.ndarray:
    """The component label of every state lying in a fair component of `mask`'s sub-graph
    (with SF removals applied), -1 elsewhere."""
    fair = np.full(graph.n, -1, dtype=np.int64)
    todo = mask.copy()
    while todo.any():
        label = components(graph, todo)
        ids = np.flatnonzero(todo)
        lab = label[ids]
        size = np.bincount(lab, minlength=graph.n)
        alive = size > 0  # per label
        ok = alive.copy()
        if accept is not None:
            ok &= np.bincount(lab, weights=accept[ids], minlength=graph.n) > 0
        internal = (label[graph.src] >= 0) & (label[graph.src] == label[graph.dst])
        remove = np.zeros(graph.n, dtype=bool)  # states to take out for an SF condition
        retry = np.zeros(graph.n, dtype=bool)  # labels examined again after removals
        for k in range(len(conds.labels)):
            taken = np.bincount(label[graph.src[internal & conds.takes[k]]], minlength=graph.n) > 0
            on = np.bincount(lab, weights=conds.enabled[k, ids], minlength=graph.n)
            if conds.strong[k]:
                failing = alive & ~taken & (on > 0)
                retry |= failing
                remove[ids[failing[lab] & conds.enabled[k, ids]]] = True
            else:
                ok &= taken | (on < size)
        done = ok & ~retry
        fair[ids[done[lab]]] = lab[done[lab]] + int(fair.max()) + 1 if done.any() else fair[ids[done[lab]]]
        todo = np.zeros(graph.n, dtype=bool)
        again = ids[(ok & retry)[lab]]
        todo[again] = True
        todo &= ~remove
    return fair
