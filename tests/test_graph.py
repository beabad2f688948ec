"""`--dump-graph` and `kmc graph`: the state graph agrees with the engines (states, levels,
shortest paths) and with a plain enumeration in this test (terminal states)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kmc import registry
from kmc.engines.explicit import bfs
from kmc.semantics.scalar import ScalarModel
from kmc.registry import select

SMALL = ["replication", "--mode", "hw", "--max-leader-epoch", "1"]


@pytest.fixture(scope="module")
def dumped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from kmc.cli.main import main

    path = tmp_path_factory.mktemp("graph") / "hw.graphml"
    assert main(["check", *SMALL, "--continue", "--quiet", "--dump-graph", str(path)]) == 12
    return path


def test_graph_has_the_engines_states_and_levels(run_kmc, dumped: Path) -> None:
    rc, out, _ = run_kmc("check", *SMALL, "--no-invariants", "--json", "--quiet")
    data = json.loads(out)
    rc, out, _ = run_kmc("graph", str(dumped), "--levels")
    assert rc == 0 and f": {data['distinct_states']:,} states" in out
    per_level = [int(n.replace(",", "")) for n in re.findall(r"\d+: ([\d,]+)", out.split("states per level: ")[1])]
    assert sum(per_level) == data["distinct_states"] and len(per_level) == data["depth"]


def test_terminal_states_match_a_plain_enumeration(run_kmc, dumped: Path) -> None:
    model, _ = registry.build("replication", mode="hw", max_leader_epoch=1)
    sm = ScalarModel(model)
    every = set(model.initial_states())
    todo = list(every)
    while todo:  # every reachable state, by a plain search of this test's own
        for _, n in sm.successors(todo.pop()):
            if n not in every:
                every.add(n)
                todo.append(n)
    dead = sum(1 for s in every if not list(sm.successors(s)))
    rc, out, _ = run_kmc("graph", str(dumped), "--terminal")
    assert rc == 0 and f"terminal states (no successor): {dead:,}" in out


def test_path_to_a_violation_is_as_short_as_the_counterexample(run_kmc, dumped: Path) -> None:
    model, invs = registry.build("replication", mode="hw", max_leader_epoch=1)
    steps = bfs.check(model, select(invs, ["strong-isr"])).invariants["strong-isr"].trace.length  # type: ignore[union-attr]
    rc, out, _ = run_kmc("graph", str(dumped), "--path", "initial", "violates:strong-isr")
    assert rc == 0 and f"shortest path from 'initial' to 'violates:strong-isr': {steps} steps" in out
    rc, out, _ = run_kmc("graph", str(dumped), "--path", "initial", "r1.leader=r1 & r2.leader=r1")
    assert rc == 0 and "shortest path" in out


def test_dot_and_bad_input(run_kmc, tmp_path: Path, dumped: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dot = tmp_path / "g.dot"
    rc, _, _ = run_kmc("check", *SMALL, "--quiet", "--no-invariants", "--no-properties", "--dump-graph", str(dot))
    assert rc == 0 and dot.read_text().startswith('digraph "replication"')
    rc, _, err = run_kmc("check", *SMALL, "--quiet", "--dump-graph", str(tmp_path / "g.png"))
    assert rc == 2 and "must end in .graphml or .dot" in err
    big = tmp_path / "big.graphml"
    monkeypatch.setattr("kmc.engines.explicit.export.DEFAULT_CAP", 100)
    rc, _, err = run_kmc("check", *SMALL, "--quiet", "--no-invariants", "--no-properties", "--dump-graph", str(big))
    assert rc == 0 and "holds a partial graph, the first 100 states" in err and big.exists()
    rc, _, _ = run_kmc("check", *SMALL, "--quiet", "--no-invariants", "--max-states", "50", "--dump-graph", str(big))
    assert rc == 0 and big.exists()
    rc, _, err = run_kmc("graph", str(dumped), "--path", "initial", "nosuch=1")
    assert rc == 2 and "unknown field 'nosuch'" in err
    rc, _, err = run_kmc("graph", str(dot))
    assert rc == 2 and "reads GraphML" in err
