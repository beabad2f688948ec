"""docs/api.md runs as written: its Python blocks in order in one namespace (the signature
block apart), and its pytest block as a test file of its own."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import kmc

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_examples_run_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    examples = [b for b in blocks() if "def test_" not in b and not b.startswith("kmc.check(")]
    assert len(examples) == 4
    namespace: dict[str, object] = {}
    for code in examples:
        exec(compile(code, str(DOC), "exec"), namespace)
    out = capsys.readouterr().out
    assert "become_follower(replica=r2, leader=r1, epoch=1)" in out  # the last step of weak-isr's trace
    assert "Counterexample (8 steps)" in out


def test_the_pytest_example_passes(tmp_path: Path) -> None:
    (code,) = [b for b in blocks() if "def test_" in b]
    (tmp_path / "test_strong_isr.py").write_text(code)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout


def test_the_public_surface() -> None:
    assert set(kmc.ENGINES) == {"vector", "scalar", "dfs", "spark", "compiled", "z3"}
    model, invariants = kmc.build("idempotence", mode="no-idempotence")
    with pytest.raises(kmc.BadInput, match="unknown engine 'bogus'; allowed: vector, scalar"):
        kmc.check(model, invariants, engine="bogus")
