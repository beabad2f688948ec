"""kmc's imports run one way (docs/architecture.md): cli -> kmc (the public surface) -> gate/bench -> api -> registry
-> engines -> traces -> semantics -> invariants -> model -> errors. Inside engines: table -> each engine package's
descriptor (its __init__, which imports its own modules only when a job runs) -> spark, simulation's workers
and on_spark, symbolic -> explicit, simulation's swarm -> vector, symmetry -> interface/result/search/coverage. A model never imports an engine, traces
never import an engine, no engine imports the model catalogue, nothing imports the CLI, the CLI imports no engine
module (it goes through kmc.api), and there is no cycle.

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
    "kmc.api": 75,
    "kmc.graph_queries": 75,  # kmc graph's queries on a written state graph  # check, simulate, prove: contract check, the engine by capability, replay
    "kmc.explore": 72,  # kmc explore's walk and server: models built by the registry, traces, the scalar interpretation
    "kmc.registry": 70,
    "kmc.engines.table": 65,
    "kmc.engines.spark": 63,
    "kmc.engines.simulation.workers": 63,
    "kmc.engines.simulation.on_spark": 63,
    "kmc.engines.symbolic": 63,
    "kmc.engines.explicit": 62,
    "kmc.engines.compiled": 62,
    "kmc.engines.simulation": 62,  # the swarm; its processes and Spark parts above, its coverage below
    "kmc.engines.vector": 61,
    "kmc.engines.symmetry": 61,
    "kmc.engines.interface": 60,
    "kmc.engines.checkpoints": 60,  # the manifest the checkpointing engines share
    "kmc.engines.liveness": 60,
    "kmc.engines.result": 60,
    "kmc.engines.replay": 60,  # a recorded path replayed by the scalar backend (vector, Spark, simulation)
    "kmc.engines.search": 60,
    "kmc.engines.simulation.coverage": 60,
    "kmc.contract": 55,  # the contract check: runs model code under the interpretations (and traces replay)
    "kmc.traces": 50,
    "kmc.semantics": 40,
    "kmc.invariants": 30,
    "kmc.model": 20,
    "kmc.tomlfile": 10,
    "kmc.errors": 10,
    "kmc.exits": 10,
    "kmc.sizes": 10,
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


# each engine package's __init__ is its descriptor (kmc/engines/interface.py: Engine): above every engine module,
# since it runs them; nothing but the table imports it
DESCRIPTORS = {"kmc.engines.vector", "kmc.engines.explicit", "kmc.engines.spark", "kmc.engines.symbolic",
               "kmc.engines.compiled"}
DESCRIPTOR_RANK = 64


def rank(module: str) -> int:
    if module in DESCRIPTORS:
        return DESCRIPTOR_RANK
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
    assert "kmc.api" in graph and "kmc.semantics.scalar" in graph
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


def test_the_cli_imports_no_engine_module() -> None:
    """The commands parse, call the public API (kmc.api) and print."""
    graph = import_graph()
    found = sorted(f"{a} -> {b}" for a, targets in graph.items() if a.startswith("kmc.cli")
                   for b in targets if b.startswith("kmc.engines"))
    assert found == []


def test_no_engine_name_is_compared_outside_its_package() -> None:
    """Engines are chosen by capability (kmc/engines/interface.py): `engine == "spark"` belongs nowhere."""
    import re

    pattern = re.compile(r"""engine\s*(==|!=)\s*["']|["']\s*(==|!=)\s*engine\b""")
    found = []
    for path in KMC.rglob("*.py"):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(KMC.parent)}:{n}: {line.strip()}")
    assert found == []
