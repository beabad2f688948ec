"""Output never costs the result (issue 27, item 5): every output path is checked before the
run (one line, exit 2, nothing explored); the verdicts are printed before any file is written,
and a write that fails afterwards is one line, exit 2, with stdout intact; `--dump-graph` past
its cap keeps the verdict; `kmc gate --update` writes TOML it reads back for any invariant
name, keeping comments, layout, a symlink and the file's mode.

The tests run as root, which passes every permission check: an unwritable path is one under a
regular file, or one in /proc (where nobody creates files)."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.conftest import build, states_within

ROOT = Path(__file__).resolve().parent.parent
SMALL = ["replication", "--mode", "hw", "--max-leader-epoch", "1"]
SCENARIO = ROOT / "scenarios" / "seed000-data-loss.toml"
FENCED = '[[check]]\nmodel = "fetch"\n[check.settings]\nmode = "epoch-fenced"\n[check.expect]\nhw-le-leo = "holds"\n'


def _explored(*args: Any, **kw: Any) -> Any:
    raise AssertionError("the run started although an output path cannot be written")


@pytest.fixture
def no_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command's run replaced by a failure: a refusal must come before it."""
    for target in ("kmc.cli.check.run_with_progress", "kmc.cli.compare.run_with_progress",
                   "kmc.cli.gate.run_check", "kmc.api.simulate"):
        monkeypatch.setattr(target, _explored)


@pytest.fixture
def itf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved counterexample for `kmc trace`."""
    from kmc.cli.main import main

    folder = tmp_path_factory.mktemp("itf")
    assert main(["check", *SMALL, "--quiet", "--no-properties", "--itf-dir", str(folder)]) == 12
    return folder / "replication-hw-weak-isr.itf.json"


def _unwritable(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Paths no one can write, with the reason printed for each."""
    (tmp_path / "file").write_text("a regular file\n")
    return {"under-a-file": (tmp_path / "file" / "out", f"{tmp_path / 'file'} is not a directory"),
            "in-proc": (Path("/proc/kmc-out"), "cannot create a file in /proc (No such file or directory)")}


def _base(tmp_path: Path) -> Path:
    base = tmp_path / "base.toml"
    base.write_text(FENCED)
    return base


# command line for an output path `p` (with the suffix it needs), the option as printed
COMMANDS: dict[str, tuple[Callable[[Path, Path], list[str]], str, str]] = {
    "check --itf-dir": (lambda p, t: ["check", *SMALL, "--itf-dir", str(p)], "", "--itf-dir"),
    "check --dump-graph": (lambda p, t: ["check", *SMALL, "--dump-graph", str(p)], ".graphml", "--dump-graph"),
    "compare --plot": (lambda p, t: ["compare", "replication", "--max-leader-epoch", "1", "--plot", str(p)],
                       ".png", "--plot"),
    "gate --junit": (lambda p, t: ["gate", str(_base(t)), "--junit", str(p)], ".xml", "--junit"),
    "trace -o": (lambda p, t: ["trace", "--scenario", str(SCENARIO), "--format", "mermaid", "-o", str(p)],
                 ".mmd", "--output"),
    "simulate --itf-dir": (lambda p, t: ["simulate", *SMALL, "--walks", "5", "--itf-dir", str(p)], "",
                           "--itf-dir"),
}


@pytest.mark.parametrize("where", ["under-a-file", "in-proc"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_unwritable_output_is_refused_before_the_run(run_kmc, no_run: None, tmp_path: Path, command: str,
                                                        where: str) -> None:
    argv, suffix, option = COMMANDS[command]
    path, reason = _unwritable(tmp_path)[where]
    path = path.with_name(path.name + suffix)
    rc, out, err = run_kmc(*argv(path, tmp_path))
    assert (rc, out) == (2, "")
    assert err == f"kmc: error: {option} {path}: {reason}\n"


def test_gate_update_of_a_baseline_in_proc_is_refused_before_the_run(run_kmc, no_run: None) -> None:
    # /proc/version can be read but not replaced: the refusal comes before the baseline is even read
    rc, out, err = run_kmc("gate", "/proc/version", "--update")
    assert (rc, out) == (2, "")
    assert err == "kmc: error: --update /proc/version: cannot create a file in /proc (No such file or directory)\n"


def test_a_wrong_suffix_is_refused_before_the_run(run_kmc, no_run: None, tmp_path: Path) -> None:
    rc, out, err = run_kmc("check", *SMALL, "--dump-graph", str(tmp_path / "g.png"))
    assert (rc, out) == (2, "")
    assert err == f"kmc: error: --dump-graph {tmp_path / 'g.png'}: the file name must end in .graphml or .dot\n"
    rc, out, err = run_kmc("compare", "replication", "--plot", str(tmp_path / "p.pdf"))
    assert (rc, out) == (2, "")
    assert err == f"kmc: error: --plot {tmp_path / 'p.pdf'}: the file name must end in .png or .svg\n"


def _spoil_after(monkeypatch: pytest.MonkeyPatch, target: str, folder: Path) -> None:
    """Run `target` as usual, then turn `folder` into a regular file: as a disk that fills or a
    folder someone removes during a long run, the write after the run fails."""
    module, name = target.rsplit(".", 1)
    real = getattr(__import__(module, fromlist=[name]), name)

    def run(*args: Any, **kw: Any) -> Any:
        result = real(*args, **kw)
        folder.rmdir()
        folder.write_text("no longer a folder\n")
        return result

    monkeypatch.setattr(target, run)


def test_check_json_is_printed_whole_when_the_traces_cannot_be_written(run_kmc, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    _spoil_after(monkeypatch, "kmc.cli.check.run_with_progress", out_dir)
    itf_dir = out_dir / "itf"
    rc, out, err = run_kmc("check", *SMALL, "--no-properties", "--quiet", "--json", "--itf-dir", str(itf_dir))
    assert rc == 2
    assert err == f"kmc: error: --itf-dir {itf_dir / 'replication-hw-weak-isr.itf.json'}: {out_dir} is not a directory\n"
    result = json.loads(out)  # the whole object, as without --itf-dir
    assert result["invariants"]["weak-isr"]["holds"] is False
    assert result["invariants"]["weak-isr"]["trace_length"] == 8  # regression pin: kmc's shortest trace here


def test_check_text_is_printed_whole_when_the_graph_cannot_be_written(run_kmc, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    _spoil_after(monkeypatch, "kmc.cli.check.run_with_progress", out_dir)
    path = out_dir / "g.dot"
    rc, out, err = run_kmc("check", *SMALL, "--no-properties", "--quiet", "--dump-graph", str(path))
    assert rc == 2
    assert err == f"kmc: error: --dump-graph {path}: {out_dir} is not a directory\n"
    assert "  weak-isr       VIOLATED (8 steps)\n" in out and "Step 8: become_follower" in out


def test_compare_json_is_printed_whole_when_the_plot_cannot_be_written(run_kmc, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    _spoil_after(monkeypatch, "kmc.cli.compare.run_with_progress", out_dir)
    path = out_dir / "p.svg"
    rc, out, err = run_kmc("compare", "fetch", "--modes", "epoch-fenced", "--quiet", "--json", "--plot", str(path))
    assert rc == 2
    assert err == f"kmc: error: --plot {path}: {out_dir} is not a directory\n"
    assert [c["column"] for c in json.loads(out)["modes"]] == ["epoch-fenced"]


def test_gate_lines_are_printed_when_the_junit_file_cannot_be_written(run_kmc, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    _spoil_after(monkeypatch, "kmc.cli.gate.run_check", out_dir)
    path = out_dir / "gate.xml"
    base = _base(tmp_path)
    rc, out, err = run_kmc("gate", str(base), "--quiet", "--junit", str(path))
    assert rc == 2
    assert err == f"kmc: error: --junit {path}: {out_dir} is not a directory\n"
    assert out.endswith(f"1 of 1 checks match {base}\n") and out.startswith("ok     fetch --mode=epoch-fenced")


def test_dump_graph_past_its_cap_keeps_the_verdict(run_kmc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import networkx as nx

    monkeypatch.setattr("kmc.engines.explicit.export.DEFAULT_CAP", 100)
    path = tmp_path / "big.graphml"
    rc, out, err = run_kmc("check", *SMALL, "--no-properties", "--quiet", "--json", "--dump-graph", str(path))
    assert rc == 12 and json.loads(out)["invariants"]["weak-isr"]["holds"] is False
    assert err == (f"kmc: note: --dump-graph {path} holds a partial graph, the first 100 states in BFS order "
                   "(graphs are for small runs: bound the run with --max-states or smaller model options)\n")
    g = nx.read_graphml(str(path), force_multigraph=True)
    assert g.number_of_nodes() == 100 and g.graph["partial"] is True
    # the levels before the last one whole, as a plain breadth-first enumeration counts them
    model, _ = build("replication", mode="hw", max_leader_epoch=1)
    per_level = Counter(int(d["level"]) for _, d in g.nodes(data=True))
    last = max(per_level)
    sizes = [len(states_within(model, steps)) for steps in range(last)]
    whole = {steps + 1: n - (sizes[steps - 1] if steps else 0) for steps, n in enumerate(sizes)}
    assert {lv: n for lv, n in per_level.items() if lv < last} == {lv: n for lv, n in whole.items() if lv < last}
    assert 0 < per_level[last] <= whole[last]
    rc, out, _ = run_kmc("graph", str(path), "--levels")
    assert rc == 0 and "a partial graph: the first 100 states in BFS order" in out


ODD_MODEL = '''\
"""A counter whose invariants bear names TOML must quote: a dot, a space, a double quote."""

from typing import Sequence

from kmc.model.core import Action, Backend, Bool, Effect, Field, Invariant, Model, Option, Schema, State, StateView, action


class Odd(Model):
    name = "odd"
    summary = "x climbs from 0 to max_top"
    modes = {"plain": "the one mode"}
    options = (Option("mode", "plain", "the one mode", choices=("plain",)),
               Option("max_top", 3, "where x stops", min=1, max=5))

    def _build(self) -> None:
        self.schema = Schema([Field("x", lo=0, hi=5, doc="the counter")])

    def initial_states(self) -> list[State]:
        return [self.schema.state(x=0)]

    def actions(self) -> Sequence[Action]:
        return [self.bump]

    @action()
    def bump(self, s: StateView, X: Backend) -> Bool:
        """x goes up by one below the top."""
        return s.x < self.settings["max_top"]

    @bump.effect
    def _(self, s: StateView, X: Backend) -> Effect:
        return {"x": s.x + 1}


def invariants(model: Odd) -> list[Invariant]:
    return [Invariant("a.b", lambda s, X: s.x <= 3, "x never passes 3"),
            Invariant("a b", lambda s, X: s.x <= 2, "x never passes 2"),
            Invariant('a"b', lambda s, X: s.x >= 0, "x is never negative")]
'''

# stale on purpose: every expectation and the count are wrong, one check has no tables at all
STALE = '''\
# my baseline: this comment stays
[[check]]
model = "odd.py"   # the model beside this file
states = 1   # a wrong count
[check.settings]
mode = "plain"   # the only mode
max-top = 3      # spelled with a dash

[check.expect]
# the names TOML must quote
"a.b" = "violated 7"
'a b' = "holds"
'a"b' = "violated 1"

[[check]]
model = "odd.py"   # the second check: every invariant, nothing expected yet
'''


def test_gate_update_writes_any_name_keeps_comments_symlink_and_mode(run_kmc, tmp_path: Path) -> None:
    (tmp_path / "odd.py").write_text(ODD_MODEL)
    real = tmp_path / "kept" / "base.toml"
    real.parent.mkdir()
    real.write_text(STALE)
    real.chmod(0o640)
    link = tmp_path / "base.toml"
    link.symlink_to(Path("kept") / "base.toml")
    rc, out, _ = run_kmc("gate", str(link), "--quiet")
    assert rc == 12 and "       a b: expected to hold, VIOLATED (3 steps)\n" in out
    assert "       a\"b: holds, not in the baseline\n" in out
    rc, out, _ = run_kmc("gate", str(link), "--quiet", "--update")
    assert rc == 0 and out.endswith(f"{link}: rewritten with the verdicts and counts of this run (2 checks changed)\n")
    assert link.is_symlink() and os.readlink(link) == str(Path("kept") / "base.toml")
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in real.parent.iterdir()) == ["base.toml"]  # no temporary file left
    # x climbs 0..3: 4 states; x <= 2 fails at x = 3, after 3 steps; the others hold
    expect = {"a.b": "holds", "a b": "violated 3", 'a"b': "holds"}
    assert real.read_text() == STALE.replace("states = 1", "states = 4").replace(
        '"a.b" = "violated 7"', '"a.b" = "holds"').replace("'a b' = \"holds\"", "'a b' = \"violated 3\"").replace(
        "'a\"b' = \"violated 1\"", "'a\"b' = \"holds\"") + (
        'states = 4\n\n[check.settings]\nmode = "plain"\nmax_top = 3\n\n'
        '[check.expect]\n"a.b" = "holds"\n"a b" = "violated 3"\n"a\\"b" = "holds"\n')
    data = tomllib.loads(real.read_text())
    assert [c["expect"] for c in data["check"]] == [expect, expect]
    assert data["check"][0]["settings"] == {"mode": "plain", "max-top": 3}
    rc, out, _ = run_kmc("gate", str(link), "--quiet")
    assert rc == 0 and out.endswith(f"2 of 2 checks match {link}\n")


def test_trace_scenario_text_goes_to_the_output_file(run_kmc, tmp_path: Path) -> None:
    path = tmp_path / "table.txt"
    rc, printed, _ = run_kmc("trace", "--scenario", str(SCENARIO))
    assert rc == 0
    rc, out, err = run_kmc("trace", "--scenario", str(SCENARIO), "-o", str(path))
    assert (rc, out, err) == (0, "", "")
    assert path.read_text() == printed  # the same table (stdout is not a terminal here: no colours either)


def test_trace_output_to_a_pipe_is_written_in_place(run_kmc, tmp_path: Path) -> None:
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    read: list[str] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_text()), daemon=True)  # never blocks the exit
    reader.start()
    rc, out, err = run_kmc("trace", "--scenario", str(SCENARIO), "--format", "mermaid", "-o", str(fifo))
    reader.join(timeout=10)
    assert (rc, out, err) == (0, "", "")
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still the pipe, not a file renamed over it
    assert read[0].startswith("sequenceDiagram\n")
