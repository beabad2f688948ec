"""The fair-cycle search (kmc/engines/liveness/) against its definition, on seeded random
graphs: a property is violated exactly when some set S of states can be the set a behaviour
visits infinitely often: S strongly connected inside M (one state on its own: stuttering),
reachable as the form says, meeting every fairness condition (WF: taken inside S or disabled
somewhere in S; SF: taken inside S or disabled everywhere in S) and the acceptance set. The
test enumerates every S of six-state graphs, (600 seeds, of which 300 dense), so it shares nothing with the SCC code but the
graph arrays; each lasso found is also checked to lie in M and to close."""

from __future__ import annotations

import itertools
import random

import networkx as nx
import numpy as np
import pytest

from kmc.engines.liveness.fair import Conditions
from kmc.engines.liveness.graph import Graph
from kmc.engines.liveness.lasso import find, regions

N, INSTANCES = 6, 3


def random_case(seed: int) -> tuple[Graph, str, np.ndarray, np.ndarray | None, list[tuple[str, bool, list[int]]]]:
    """Seeds from 300 on: denser graphs (more cycles, where strong fairness matters)."""
    rng = random.Random(seed)
    most = 14 if seed < 300 else 22
    edges = {(rng.randrange(N), rng.randrange(N), rng.randrange(INSTANCES)) for _ in range(rng.randrange(4, most))}
    src, dst, iid = (np.array(x, dtype=np.int64) for x in zip(*edges))
    graph = Graph.of(N, np.array([0]), src, dst, iid)
    form = rng.choice(["eventually", "leads_to", "always_eventually", "eventually_always"])
    p = np.array([rng.random() < 0.3 for _ in range(N)])
    q = np.array([rng.random() < 0.3 for _ in range(N)]) if form == "leads_to" else None
    conds = [(f"c{k}", rng.random() < 0.5, [k]) for k in range(INSTANCES) if rng.random() < 0.7]
    return graph, form, p, q, conds


def violated_by_definition(graph: Graph, form: str, p: np.ndarray, q: np.ndarray | None,
                           conds: list[tuple[str, bool, list[int]]]) -> bool:
    stay, enter, accept = regions(form, p, q)
    g = nx.DiGraph()
    g.add_nodes_from(range(N))
    g.add_edges_from((int(a), int(b)) for a, b in zip(graph.src, graph.dst))
    reach_all = nx.descendants(g, 0) | {0}
    inside = g.subgraph([v for v in range(N) if stay[v]])
    if form == "eventually":
        starts = {0} if stay[0] else set()
    else:
        starts = {v for v in range(N) if v in reach_all and stay[v] and (enter is None or enter[v])}
    reach = set()
    for s in starts:
        reach |= nx.descendants(inside, s) | {s}
    edges = list(zip(graph.src.tolist(), graph.dst.tolist(), graph.iid.tolist()))
    for size in range(1, N + 1):
        for subset in itertools.combinations(range(N), size):
            S = set(subset)
            if not all(stay[v] for v in S) or not (S & reach):
                continue
            if size > 1 and not nx.is_strongly_connected(g.subgraph(S)):
                continue
            if accept is not None and not any(accept[v] for v in S):
                continue
            fair = True
            for _, strong, ids in conds:
                taken = any(a in S and b in S and i in ids for a, b, i in edges)
                enabled = [any(a == v and i in ids for a, _, i in edges) for v in S]
                if not taken and (any(enabled) if strong else all(enabled)):
                    fair = False
            if fair:
                return True
    return False


@pytest.mark.parametrize("seed", range(600))
def test_fair_cycle_search_meets_its_definition(seed: int) -> None:
    graph, form, p, q, conds = random_case(seed)
    lasso = find(graph, form, p, q, Conditions.of(graph, conds, INSTANCES))
    assert (lasso is not None) == violated_by_definition(graph, form, p, q, conds)
    if lasso is not None:
        stay, _, _ = regions(form, p, q)
        path = lasso.prefix + lasso.cycle
        state = lasso.initial
        for e in path:
            assert graph.src[e] == state
            state = int(graph.dst[e])
        cycle_start = int(graph.dst[lasso.prefix[-1]]) if lasso.prefix else lasso.initial
        assert state == cycle_start and stay[cycle_start]
        assert all(stay[graph.dst[e]] for e in lasso.cycle)


def test_strong_fairness_removes_states_and_looks_again() -> None:
    # 0 <-> 1 <-> 2 by instance 0 inside M = {0, 1, 2}; 2 -> 3 by instance 1 leaves M (P holds at 3).
    # []<>P under WF(0), SF(1): the component {0, 1, 2} never takes 1, which 2 enables: the
    # behaviour must avoid 2, and {0, 1} (going back and forth) is fair: violated, cycle 0 -> 1 -> 0
    src, dst, iid = np.array([0, 1, 1, 2, 2]), np.array([1, 0, 2, 1, 3]), np.array([0, 0, 0, 0, 1])
    graph = Graph.of(4, np.array([0]), src, dst, iid)
    p = np.array([False, False, False, True])
    conds = [("WF(0)", False, [0]), ("SF(1)", True, [1])]
    lasso = find(graph, "always_eventually", p, None, Conditions.of(graph, conds, 2))
    assert lasso is not None and lasso.prefix == []
    assert [int(graph.dst[e]) for e in lasso.cycle] == [1, 0]
    # with 0 -> 1 also enabling 1 (an edge 0 -> 3 of instance 1), no fair cycle is left: it holds
    graph = Graph.of(4, np.array([0]), np.append(src, 0), np.append(dst, 3), np.append(iid, 1))
    assert find(graph, "always_eventually", p, None, Conditions.of(graph, conds, 2)) is None
