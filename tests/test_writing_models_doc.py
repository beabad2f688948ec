"""docs/writing-models.md runs as written. The page's first Python block is saved under the
name the page gives it ("Save this as `NAME`"), next to a copy of `examples/`, in a fresh
folder; every `$ kmc ...` command of its console blocks is run there, in page order, exits
as the page says (0 unless `# exits N`), and prints the lines shown, in that order (`...`
stands for lines the page leaves out). The minimal model's state counts are computed a second
time, by a plain enumeration of the protocol its docstrings describe."""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import shutil
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


def minimal_model() -> tuple[str, str]:
    """The file name the page gives its first model, and that model's source."""
    text = DOC.read_text()
    name = re.search(r"Save this as `([\w.]+)`", text)
    source = re.search(r"```python\n(.*?)```", text, re.S)
    assert name and source
    return name.group(1), source.group(1)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder as a reader has it: the page's model file and a copy of `examples/`."""
    where = tmp_path_factory.mktemp("writing-models")
    name, source = minimal_model()
    (where / name).write_text(source)
    shutil.copytree(ROOT / "examples", where / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    return where


def kmc(folder: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "kmc.cli.main", *argv], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_page_has_its_commands() -> None:
    assert len(commands()) == 10


@pytest.mark.parametrize("k", range(len(commands())), ids=[c for c, _, _ in commands()])
def test_each_command_runs_as_the_page_shows(folder: Path, k: int) -> None:
    command, code, shown = commands()[k]
    argv = shlex.split(command)
    assert argv[0] == "kmc"
    for earlier, _, _ in commands()[:k]:  # a trace file the page wrote earlier (when run alone, with -k)
        written = re.search(r"--itf-dir (\S+)", earlier)
        if written and written.group(1) + "/" in command and not (folder / written.group(1)).is_dir():
            kmc(folder, shlex.split(earlier)[1:])
    run = kmc(folder, argv[1:])
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


def leader_epochs(replicas: int, top: int) -> set[tuple[int, int, tuple[int, ...], tuple[int, ...]]]:
    """The reachable states of the page's protocol, enumerated without kmc: (leader, epoch,
    epoch each replica knows, whether each leads). The controller elects any replica in the
    next epoch up to `top`; a replica behind the controller's epoch catches up, leading if it
    is the controller's leader."""
    start = (-1, 0, (0,) * replicas, (0,) * replicas)
    seen, todo = {start}, [start]
    while todo:
        leader, epoch, known, leading = todo.pop()
        nexts = [(r, epoch + 1, known, leading) for r in range(replicas) if epoch < top]
        for r in range(replicas):
            if known[r] < epoch:
                nexts.append((leader, epoch, known[:r] + (epoch,) + known[r + 1:],
                              leading[:r] + (int(leader == r),) + leading[r + 1:]))
        for n in nexts:
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return seen


def renamed(state: tuple[int, int, tuple[int, ...], tuple[int, ...]], p: tuple[int, ...]) -> tuple[object, ...]:
    leader, epoch, known, leading = state
    inverse = [p.index(i) for i in range(len(p))]  # replica p[i] takes replica i's place
    return (p[leader] if leader >= 0 else -1, epoch, tuple(known[j] for j in inverse),
            tuple(leading[j] for j in inverse))


def test_the_minimal_models_counts_are_those_of_a_plain_enumeration(folder: Path) -> None:
    """37 states, 19 up to renaming replicas, as the page says; one-leader violated in 4 steps
    (elect, learn, elect the other, learn) and leaders-fenced holding, as the page shows."""
    states = leader_epochs(2, 2)
    classes = {min(renamed(s, p) for p in itertools.permutations(range(2))) for s in states}  # type: ignore[type-var]
    assert (len(states), len(classes)) == (37, 19)
    assert "37 distinct states (19 up to renaming replicas" in DOC.read_text()
    name, _ = minimal_model()
    for flags, count in (([], 37), (["--symmetry"], 19)):
        run = kmc(folder, ["check", name, "--continue", "--json", "--quiet", *flags])
        result = json.loads(run.stdout)
        assert result["distinct_states"] == count
        assert {k: (v["holds"], v["trace_length"]) for k, v in result["invariants"].items()} == {
            "one-leader": (False, 4), "leaders-fenced": (True, None)}
    assert any(len({s[3][0], s[3][1]}) == 1 and s[3][0] == 1 for s in states)  # two leaders at once
    assert all(s[2][0] != s[2][1] for s in states if s[3] == (1, 1))  # ... never in one epoch
