"""Run files: `--config FILE` gives a command its flags from TOML; flags on the command line win;
malformed files exit 2 with one line naming the file, the line and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

RUN = """\
# the seed's data loss, as a run file
model = "fetch"
mode = "hw"
max-records = 2
invariant = ["committed-never-lost"]
engine = "scalar"
json = true
quiet = true
"""


def test_check_takes_everything_from_the_run_file(run_kmc, tmp_path: Path) -> None:
    run = tmp_path / "run.toml"
    run.write_text(RUN)
    rc, out, _ = run_kmc("check", "--config", str(run))
    data = json.loads(out)
    assert rc == 12
    assert (data["model"], data["mode"], data["engine"]) == ("fetch", "hw", "scalar")
    assert list(data["invariants"]) == ["committed-never-lost"]


def test_flags_override_the_run_file(run_kmc, tmp_path: Path) -> None:
    run = tmp_path / "run.toml"
    run.write_text(RUN)
    rc, out, _ = run_kmc("check", "fetch", "--config", str(run), "--mode", "epoch", "--engine", "vector")
    data = json.loads(out)
    assert rc == 0 and (data["mode"], data["engine"]) == ("epoch", "vector")
    assert data["invariants"]["committed-never-lost"]["holds"] is True


def test_compare_takes_modes_as_a_list(run_kmc, tmp_path: Path) -> None:
    run = tmp_path / "run.toml"
    run.write_text('model = "replication"\nmodes = ["kip279", "kip320"]\njson = true\nquiet = true\n')
    rc, out, _ = run_kmc("compare", "--config", str(run))
    data = json.loads(out)
    # the state counts of tests/test_cli.py::test_compare_json
    # TLC's counts (tests/reference/tlc-replication.md, table A)
    assert rc == 0 and [m["distinct_states"] for m in data["modes"]] == [9027, 5973]


def test_gate_takes_its_flags_from_a_run_file(run_kmc, tmp_path: Path) -> None:
    run = tmp_path / "gate.toml"
    junit = tmp_path / "out.xml"
    run.write_text(f'junit = "{junit}"\nquiet = true\n')
    # the dogfood baseline's first check only (replication hw, 10,131 states): tests/test_gate.py
    # runs the others
    checks = (Path(__file__).resolve().parent.parent / "baselines" / "kmc.toml").read_text().split("[[check]]")
    base = tmp_path / "kmc.toml"
    base.write_text("[[check]]".join(checks[:2]))
    rc, out, _ = run_kmc("gate", str(base), "--config", str(run))
    assert rc == 0 and junit.exists()
    assert "1 of 1 checks match" in out


BAD_RUN_FILES = [
    ('model = "fetch"\nmode = "hw"\nmax-records = "two"\n', ":3: key 'max-records' must be an integer (got a string)"),
    ('model = "fetch"\n\nbogus = 1\n', ":3: unknown key 'bogus'; allowed: "),
    ('model = "kafka"\n', ":1: unknown model 'kafka'; allowed: replication, fetch"),
    ('model = 7\n', ":1: key 'model' must be a string (got an integer)"),
    ('mode = "hw"\n', ": no 'model' key"),
    ('model = "fetch"\nmode = "kip999"\n', ":2: key 'mode': 'kip999' is not one of"),
    ('model = "fetch"\nreplicas = 9\n', ":2: key 'replicas': 9 is not in the range 2<=x<=4"),
    ('model = "fetch"\ncontinue = "yes"\n', ":2: key 'continue' must be a boolean (got a string)"),
    ('model = "fetch"\ninvariant = [1]\n', ":2: key 'invariant' must be a string (got an integer)"),
    ('model = "fetch"\nmode = \n', ": malformed TOML"),
]


@pytest.mark.parametrize("text,message", BAD_RUN_FILES, ids=[m for _, m in BAD_RUN_FILES])
def test_malformed_run_file_exits_2_naming_file_line_and_key(run_kmc, tmp_path: Path, text: str, message: str) -> None:
    run = tmp_path / "run.toml"
    run.write_text(text)
    rc, out, err = run_kmc("check", "--config", str(run))
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"kmc: error: {run}")
    assert message in err


def test_missing_run_file(run_kmc, tmp_path: Path) -> None:
    rc, _, err = run_kmc("check", "fetch", "--config", str(tmp_path / "none.toml"))
    assert rc == 2 and "no such run file" in err
