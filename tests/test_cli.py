"""The command line: exit codes, one-line errors, the JSON fields scripts read.

The replication state counts and depths asserted here (10,131; 9,027; 5,973, depth 18) are
TLC's on the published specification: tests/reference/tlc-replication.md, table A."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

JSON_KEYS = {"model", "mode", "engine", "distinct_states", "generated_states", "depth", "seconds", "complete", "invariants"}


def test_check_json_on_a_holding_mode(run_kmc) -> None:
    # safety only: the replication model's liveness properties include failing ones (tests/test_liveness_models.py)
    rc, out, err = run_kmc("check", "replication", "--mode", "kip320", "--json", "--quiet", "--no-properties")
    assert rc == 0, err
    data = json.loads(out)
    assert JSON_KEYS <= set(data)
    assert (data["distinct_states"], data["depth"], data["complete"]) == (5973, 18, True)
    assert data["invariants"]["strong-isr"] == {"holds": True, "trace_length": None}


def test_check_violation_exits_12_with_a_trace(run_kmc) -> None:
    rc, out, _ = run_kmc("check", "replication", "--mode", "hw", "--invariant", "strong-isr", "--quiet")
    assert rc == 12
    assert "strong-isr  VIOLATED" in out
    assert "Step 1: controller_elect_leader(leader=r1)" in out


def test_check_json_stopped_run_leaves_others_undecided(run_kmc) -> None:
    rc, out, _ = run_kmc("check", "replication", "--mode", "hw", "--json", "--quiet")
    data = json.loads(out)
    assert rc == 12 and data["complete"] is False and data["stopped_by"] == "violation"
    verdicts = data["invariants"]
    assert [n for n, v in verdicts.items() if v["holds"] is False] == ["weak-isr"]
    assert all(v == {"holds": None, "trace_length": None} for n, v in verdicts.items() if n != "weak-isr")


def test_no_invariants_counts_the_whole_graph(run_kmc) -> None:
    rc, out, _ = run_kmc("check", "replication", "--mode", "hw", "--no-invariants", "--no-properties", "--json", "--quiet")
    data = json.loads(out)
    assert rc == 0 and data["distinct_states"] == 10131 and data["invariants"] == {}


def test_max_states_ends_the_run_cleanly(run_kmc) -> None:
    rc, out, _ = run_kmc("check", "replication", "--mode", "kip320", "--max-states", "100", "--json", "--quiet")
    data = json.loads(out)
    assert rc == 4  # undecided is not a pass (tests/test_exit_codes.py)
    assert data["distinct_states"] == 100 and data["complete"] is False and data["stopped_by"] == "max-states"
    assert all(v["holds"] is None for v in data["invariants"].values())


def test_max_depth_counts_levels_like_tlc(run_kmc) -> None:
    rc, out, _ = run_kmc("check", "replication", "--mode", "kip320", "--max-depth", "3", "--json", "--quiet")
    data = json.loads(out)
    assert rc == 4 and data["depth"] == 3 and data["stopped_by"] == "max-depth"


def test_itf_files_are_written_for_each_violation(run_kmc, tmp_path: Path) -> None:
    rc, _, _ = run_kmc("check", "replication", "--mode", "hw", "--continue", "--quiet", "--no-properties",
                       "--itf-dir", str(tmp_path))
    assert rc == 12
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["replication-hw-strong-isr.itf.json", "replication-hw-weak-isr.itf.json"]


def test_compare_prints_the_matrix(run_kmc) -> None:
    rc, out, _ = run_kmc("compare", "replication", "--modes", "hw,kip320", "--quiet")
    assert rc == 12
    assert "VIOLATED" in out and "10,131" in out and "5,973" in out


def test_compare_json(run_kmc) -> None:
    rc, out, _ = run_kmc("compare", "replication", "--modes", "kip279,kip320", "--json", "--quiet")
    data = json.loads(out)
    assert rc == 0
    assert [m["mode"] for m in data["modes"]] == ["kip279", "kip320"]
    assert [m["distinct_states"] for m in data["modes"]] == [9027, 5973]


def test_list_names_models_modes_and_invariants(run_kmc) -> None:
    rc, out, _ = run_kmc("list")
    assert rc == 0
    for word in ["replication", "kip320-first-try", "strong-isr", "--max-leader-epoch", "scalar"]:
        assert word in out


BAD_INPUT = [
    (["check", "kafka"], "unknown model 'kafka'; allowed: replication"),
    (["check", "replication", "--mode", "kip999"], "'--mode'"),
    (["check", "replication", "--invariant", "no-such"], "unknown invariant 'no-such'; allowed: weak-isr"),
    (["check", "replication", "--replicas", "0"], "'--replicas': 0 is not in the range 1<=x<=8"),
    (["check", "replication", "--log-size", "0"], "'--log-size': 0 is not in the range 1<=x<=8"),
    (["check", "replication", "--max-records", "-1"], "'--max-records': -1 is not in the range 0<=x<=15"),
    (["check", "replication", "--max-leader-epoch", "-2"], "'--max-leader-epoch'"),
    (["check", "replication", "--engine", "warp"], "'--engine'"),
    (["check", "replication", "--max-states", "0"], "'--max-states'"),
    (["compare", "replication", "--modes", "hw,nope"], "--modes: unknown mode 'nope'; allowed: hw"),
    (["compare", "replication", "--modes", ","], "--modes needs at least one mode"),
    (["check", "replication", "--no-invariants", "--invariant", "type-ok"], "exclude each other"),
]


@pytest.mark.parametrize("argv,message", BAD_INPUT, ids=[" ".join(a) for a, _ in BAD_INPUT])
def test_bad_input_exits_2_with_one_line(run_kmc, argv: list[str], message: str) -> None:
    rc, out, err = run_kmc(*argv)
    assert rc == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("kmc: error: ")
    assert message in err


def test_no_flag_is_defined_twice() -> None:
    """A model option must not reuse a flag of the command it is added to (click would
    silently let one of them win)."""
    import click

    from kmc import registry
    from kmc.cli.check import check
    from kmc.cli.compare import compare
    from kmc.cli.explore import explore

    for group in (check, compare, explore):
        for name in registry.MODELS:
            command = group.get_command(click.Context(group), name)
            assert command is not None
            flags = [f for p in command.params for f in p.opts + p.secondary_opts]
            assert len(flags) == len(set(flags)), (group.name, name, sorted(f for f in flags if flags.count(f) > 1))
