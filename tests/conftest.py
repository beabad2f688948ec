"""Shared fixtures: models by name, and a CLI runner that returns (exit code, stdout, stderr)."""

from __future__ import annotations

from typing import Any

import pytest

from kmc import registry
from kmc.model.core import Invariant, Model


def build(name: str, **settings: Any) -> tuple[Model, list[Invariant]]:
    return registry.build(name, **settings)


def states_within(model: Model, steps: int) -> set[tuple[int, ...]]:
    """Every state reachable in at most `steps` steps, by a plain BFS independent of the engines:
    tests use it to confirm that a counterexample is shortest."""
    from kmc.semantics.scalar import ScalarModel

    sm = ScalarModel(model)
    seen = set(model.initial_states())
    frontier = list(seen)
    for _ in range(steps):
        # dict.fromkeys: each new state once, however many parents reach it
        frontier = list(dict.fromkeys(n for s in frontier for _, n in sm.successors(s) if n not in seen))
        seen.update(frontier)
    return seen


@pytest.fixture
def run_kmc(capsys: pytest.CaptureFixture[str]):
    from kmc.cli.main import main

    def run(*argv: str) -> tuple[int, str, str]:
        rc = main(list(argv))
        out, err = capsys.readouterr()
        return rc, out, err

    return run


@pytest.fixture(scope="session")
def spark_session():
    """One Spark session for every Spark test: 2 local cores, quiet logs, the settings kmc
    itself uses. `local[2,4]` is local[2] allowing 4 attempts per task, so that the
    failed-task test can watch Spark retry (local masters default to a single attempt)."""
    from kmc.engines.spark.session import start

    session = start("local[2,4]", partitions=2).session
    yield session
    session.stop()
