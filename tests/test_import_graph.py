"""kmc's imports run one way (docs/architecture.md): cli -> kmc (the public surface) -> gate/bench -> registry -> engines ->
traces -> semantics -> invariants -> model -> errors. Inside engines: run -> spark, processes, symbolic ->
explicit/simulation/compiled -> vector -> result/search/coverage. A model never imports an engine, traces never import an
engine, no engine imports the model catalogue, nothing imports the CLI, and there is no cycle.

The graph is read from the sources with `ast` (every import, those inside functions too)."""

from __future__ import annotations

import ast
from pathlib import Path

KMC = Path(__file__).resolve().parents[1] / "kmc"

# (prefix, rank): a module may import only modules of a lower or equal rank; the longest
# matching prefix gives a module's rank.
LAYERS: dict[str, int] = {
    "kmc.cli": 90,
    "kmc": 85,  # the public surface (kmc/__init__.py): re-exports the entry point and the catalogue
    "kmc.gate": 80,
    "kmc.bench": 80,
    "kmc.registry": 70,
    "kmc.engines.run": 64,
    "kmc.engines.spark": 63,
    "kmc.engines.processes": 63,
    "kmc.engines.symbolic": 63,
    "kmc.engines.explicit": 62,
    "kmc.engines.compiled": 62,
    "kmc.engines.simulation": 62,
    "kmc.engines.vector": 61,
    "kmc.engines.liveness": 60,
    "kmc.engines.result": 60,
    "kmc.engines.search": 60,
    "kmc.engines.coverage": 60,
    "kmc.traces": 50,
    "kmc.semantics": 40,
    "kmc.invariants": 30,
    "kmc.model": 20,
    "kmc.tomlfile": 10,
    "kmc.errors": 10,
    "kmc.simd": 10,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(KMC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """module -> the kmc modules it imports (a `from pkg import name` that names a submodule
    counts as an import of that submodule)."""
    modules = {module_name(p): p for p in KMC.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        out: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name.split(".")[0] == "kmc")
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "kmc":
                for a in node.names:
                    sub = f"{node.module}.{a.name}"
                    out.add(sub if sub in modules else node.module)
        out.discard(name)
        graph[name] = out
    return graph


def rank(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def back_arrows(graph: dict[str, set[str]]) -> list[str]:
    """Every import from a lower layer to a higher one."""
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                  if rank(b) > rank(a))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_module_has_a_layer() -> None:
    graph = import_graph()
    assert "kmc.engines.run" in graph and "kmc.semantics.scalar" in graph
    for module in graph:
        rank(module)  # raises ValueError (max of nothing) for a module outside every layer


def test_imports_run_one_way() -> None:
    assert back_arrows(import_graph()) == []


def test_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_a_planted_back_arrow_and_cycle_are_caught() -> None:
    graph = import_graph()
    before = set(back_arrows(graph))
    graph["kmc.model.core"].add("kmc.engines.vector.engine")  # a model importing an engine
    graph["kmc.engines.symbolic.bmc"].add("kmc.registry")  # an engine importing the catalogue
    graph["kmc.traces.replay"].add("kmc.engines.explicit.bfs")  # traces importing an engine
    assert sorted(set(back_arrows(graph)) - before) == ["kmc.engines.symbolic.bmc -> kmc.registry",
                                                        "kmc.model.core -> kmc.engines.vector.engine",
                                                        "kmc.traces.replay -> kmc.engines.explicit.bfs"]
    assert any("kmc.model.core" in c and "kmc.engines.vector.engine" in c for c in cycles(graph))
