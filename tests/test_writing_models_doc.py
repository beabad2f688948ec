"""docs/writing-models.md runs as written: every `$ kmc ...` command of its console blocks is
run from the repository root, exits as the page says (0 unless `# exits N`), and prints the
lines shown, in that order (`...` stands for lines the page leaves out)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "writing-models.md"


def commands() -> list[tuple[str, int, list[str]]]:
    """(command, expected exit code, output lines shown) for each `$ ` line of the page."""
    out: list[tuple[str, int, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", DOC.read_text(), re.S):
        for part in re.split(r"^\$ ", block, flags=re.M)[1:]:
            first, *shown = part.rstrip("\n").split("\n")
            command, _, note = first.partition("  # exits ")
            out.append((command.strip(), int(note) if note else 0, shown))
    return out


def test_the_page_has_its_commands() -> None:
    assert len(commands()) == 10


@pytest.mark.parametrize("command,code,shown", commands(), ids=[c for c, _, _ in commands()])
def test_each_command_runs_as_the_page_shows(command: str, code: int, shown: list[str]) -> None:
    argv = shlex.split(command)
    assert argv[0] == "kmc"
    run = subprocess.run([sys.executable, "-m", "kmc.cli.main", *argv[1:]], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    printed = (run.stdout + run.stderr).splitlines()
    assert run.returncode == code, run.stdout[-2000:] + run.stderr[-2000:]
    at = 0
    for line in (s.rstrip() for s in shown):
        if line in ("...", ""):
            continue
        while at < len(printed) and printed[at].rstrip() != line:
            at += 1
        assert at < len(printed), f"not printed (in this order): {line!r}"
        at += 1
