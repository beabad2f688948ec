"""Shared fixtures: models by name, and a CLI runner that returns (exit code, stdout, stderr)."""

from __future__ import annotations

from typing import Any

import pytest

from kmc import registry
from kmc.model.core import Invariant, Model


def build(name: str, **settings: Any) -> tuple[Model, list[Invariant]]:
    return registry.build(name, **settings)


@pytest.fixture
def run_kmc(capsys: pytest.CaptureFixture[str]):
    from kmc.cli.main import main

    def run(*argv: str) -> tuple[int, str, str]:
        rc = main(list(argv))
        out, err = capsys.readouterr()
        return rc, out, err

    return run
