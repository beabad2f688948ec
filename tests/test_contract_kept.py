"""A contract check that passed is remembered on disk (kmc/contract/kept.py): the same command on
the same code skips it; an edited model, other settings or other invariants check again; a check
that fails leaves nothing; a cache that cannot be written is passed over."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import pytest

import kmc.api as api
from kmc import registry
from kmc.cli.main import main
from kmc.contract import kept
from kmc.model.core import Invariant, Model
from test_authoring_errors import BASE, planted

ROOT = Path(__file__).resolve().parents[1]
BROKEN = planted(("return s.x < 3  # mark: guard", "return True if s.x < 3 else False  # mark: guard"))


def checks_run(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The models whose contract is checked (traced) from now on, in-process memory of passed checks forgotten."""
    ran: list[str] = []
    traced = api.contract_problems

    def counted(model: Model, invariants: Sequence[Invariant]) -> list[str]:
        ran.append(model.name)
        return traced(model, invariants)
    monkeypatch.setattr(api, "contract_problems", counted)
    return ran


def test_the_same_command_on_the_same_code_skips_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m_kept.py").write_text(BASE)
    ran = checks_run(monkeypatch)
    for _ in range(2):
        monkeypatch.setattr(api, "_KEPT", set())  # as in a new process
        assert main(["check", "m_kept.py", "-q"]) == 0
    assert ran == ["counter"]
    assert len(list((tmp_path / "cache" / "kmc" / "contract").iterdir())) == 1
    monkeypatch.setattr(api, "_KEPT", set())
    assert main(["simulate", "m_kept.py", "-q", "--walks", "2", "--workers", "1"]) == 0  # another command: its own
    assert main(["check", "m_kept.py", "-q", "--invariant", "small"]) == 0  # the same invariants
    assert ran == ["counter"]
    capsys.readouterr()


def test_an_edited_model_is_checked_again_and_a_failed_check_leaves_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    kept_files = tmp_path / "cache" / "kmc" / "contract"

    def run(text: str) -> subprocess.CompletedProcess[str]:
        (tmp_path / "m_kept.py").write_text(text)
        return subprocess.run([sys.executable, "-m", "kmc.cli.main", "check", "m_kept.py", "-q"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)

    assert run(BASE).returncode == 0
    assert len(list(kept_files.iterdir())) == 1
    failed = run(BROKEN)  # the same spec and settings, other code: checked again
    assert failed.returncode == 2 and "breaks the contract" in failed.stderr, failed.stderr
    assert len(list(kept_files.iterdir())) == 1  # nothing for a check that failed
    assert run(BASE).returncode == 0


def test_the_fingerprint_covers_settings_invariants_and_spec() -> None:
    two, invariants = registry.build("kraft", brokers=2)
    three, _ = registry.build("kraft", brokers=3)
    keys = {kept.fingerprint("kraft", two, invariants), kept.fingerprint("kraft", three, invariants),
            kept.fingerprint("kraft", two, invariants[:1]), kept.fingerprint("other", two, invariants)}
    assert len(keys) == 4
    assert kept.fingerprint("kraft", two, invariants) == kept.fingerprint("kraft", two, list(invariants))


def test_a_cache_that_cannot_be_written_is_passed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cache").write_text("a file where the cache folder would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m_kept.py").write_text(BASE)
    ran = checks_run(monkeypatch)
    for _ in range(2):
        monkeypatch.setattr(api, "_KEPT", set())
        assert main(["check", "m_kept.py", "-q"]) == 0
    assert ran == ["counter", "counter"]
    capsys.readouterr()
