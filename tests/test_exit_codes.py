"""Exit codes (kmc/exits.py): an undecided run is not a pass, properties run when asked or
when the model checks them by default, lemmas are checkable, and README.md's table is the
module's. Each case: the input, the exit code, the one line printed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kmc import exits, registry

ROOT = Path(__file__).resolve().parents[1]
KIP320 = ("replication", "--mode", "kip320")
# every limit of kmc check and compare, set so low that the run stops before deciding anything
LIMITS = {
    "--max-states 100": (["--max-states", "100"], "stopped by --max-states 100"),
    "--max-depth 3": (["--max-depth", "3"], "stopped by --max-depth 3"),
    "--time-limit": (["--time-limit", "0.000001"], "stopped by --time-limit 1e-06"),
    # the scalar engine stops at the memory limit; the vector and compiled engines go on on disk
    # (tests/test_spill.py)
    "--memory-limit": (["--memory-limit", "1", "--engine", "scalar"], "stopped by --memory-limit 1"),
}


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# -- check and compare: exit 4 when a limit leaves a verdict undecided -------------------------


@pytest.mark.parametrize("limit", list(LIMITS))
def test_check_stopped_by_a_limit_exits_4_naming_it(run_kmc, limit: str) -> None:
    argv, says = LIMITS[limit]
    rc, out, err = run_kmc("check", *KIP320, *argv, "--json", "--quiet")
    data = json.loads(out)  # --json keeps its shape: complete, stopped_by, null verdicts
    assert rc == exits.INCOMPLETE == 4 and data["complete"] is False
    assert all(v["holds"] is None for v in data["invariants"].values())
    line = one_line(err)
    assert line.startswith(f"kmc: incomplete: {says} with 4 verdicts undecided (weak-isr, strong-isr, "
                           "leader-in-isr, type-ok)"), line
    assert line.endswith("exit 4 (--allow-incomplete: exit 0)")


@pytest.mark.parametrize("limit", list(LIMITS))
def test_compare_stopped_by_a_limit_exits_4(run_kmc, limit: str) -> None:
    argv, says = LIMITS[limit]
    rc, out, err = run_kmc("compare", "replication", "--modes", "kip320,kip101", *argv, "--json", "--quiet")
    assert rc == 4 and [c["complete"] for c in json.loads(out)["modes"]] == [False, False]
    assert one_line(err).startswith(f"kmc: incomplete: {says} in 2 of 2 columns with 4 verdicts undecided")


def test_allow_incomplete_exits_0_and_still_says_so(run_kmc) -> None:
    rc, _, err = run_kmc("check", *KIP320, "--max-states", "100", "--allow-incomplete", "--quiet")
    assert rc == 0 and one_line(err).endswith("exit 0 (--allow-incomplete)")
    rc, _, _ = run_kmc("compare", "replication", "--modes", "kip320", "--max-depth", "3", "--allow-incomplete", "-q")
    assert rc == 0


def test_a_violation_within_the_limit_exits_12(run_kmc) -> None:
    # hw's shortest strong-isr violation has 9 steps (TLC: tests/reference/tlc-replication.md),
    # found at level 10: --max-depth 10 reaches it, weak-isr stays undecided, and 12 wins
    rc, out, err = run_kmc("check", "replication", "--mode", "hw", "--continue", "--max-depth", "10", "--json", "-q")
    data = json.loads(out)
    assert rc == 12 and data["invariants"]["strong-isr"]["trace_length"] == 9 and err == ""


def test_a_complete_run_within_its_limits_exits_0(run_kmc) -> None:
    # kip320 reaches 5,973 distinct states in 18 levels (TLC, tests/reference/tlc-replication.md);
    # a run stopped at exactly 5,973 states or 18 levels cannot know that nothing follows
    rc, out, err = run_kmc("check", *KIP320, "--max-states", "5974", "--max-depth", "19", "--json", "-q")
    data = json.loads(out)
    assert rc == 0 and data["complete"] is True and data["distinct_states"] == 5973 and err == ""


def test_z3_bounded_search_is_incomplete_unless_it_finds_a_violation(run_kmc) -> None:
    rc, _, err = run_kmc("check", *KIP320, "--engine", "z3", "--depth", "2", "--invariant", "strong-isr", "-q")
    assert rc == 4 and one_line(err).startswith(
        "kmc: incomplete: stopped by the z3 engine's bound of 2 steps (a bounded search decides no invariant "
        "holds) with 1 verdict undecided (strong-isr)")


def test_simulate_never_exits_4(run_kmc) -> None:
    # a simulation decides no invariant holds: 'not violated' within its walks is its answer
    rc, out, _ = run_kmc("simulate", *KIP320, "--walks", "50", "--walkers", "50", "--depth", "10", "--quiet")
    assert rc == 0 and "not violated" in out


# -- which properties a check runs -------------------------------------------------------------


def test_the_fixed_protocol_passes_by_default(run_kmc) -> None:
    rc, out, err = run_kmc("check", *KIP320, "--json", "--quiet")
    data = json.loads(out)
    assert rc == 0 and "properties" not in data and err == ""
    assert data["distinct_states"] == 5973 and all(v["holds"] for v in data["invariants"].values())


def test_invariant_alone_checks_no_property(run_kmc) -> None:
    rc, out, _ = run_kmc("check", "kraft", "--invariant", "log-matching", "--json", "--quiet")
    data = json.loads(out)
    assert rc == 0 and list(data["invariants"]) == ["log-matching"] and "properties" not in data


def test_properties_run_when_the_model_checks_them_by_default(run_kmc) -> None:
    # kraft's properties are those its specification's cfg checks: default=True
    model, _ = registry.build("kraft")
    props = registry.properties_of(model)
    assert props and all(p.default for p in props)
    rc, out, _ = run_kmc("check", "kraft", "--json", "--quiet")
    assert rc == 0 and sorted(json.loads(out)["properties"]) == sorted(p.name for p in props)
    rc, out, _ = run_kmc("check", "kraft", "--no-properties", "--json", "--quiet")
    assert rc == 0 and "properties" not in json.loads(out)


def test_replications_properties_run_only_when_asked(run_kmc) -> None:
    # violated in the specification itself (TLC: tests/reference/tlc-liveness.md), so not by default
    model, _ = registry.build("replication", mode="kip320")
    assert [p.default for p in registry.properties_of(model)] == [False, False, False]
    rc, out, _ = run_kmc("check", *KIP320, "--no-invariants", "--properties", "--json", "--quiet")
    props = json.loads(out)["properties"]
    assert rc == 12 and set(props) == {"leader-elected", "leader-takes-office", "hw-catches-up"}
    assert props["leader-elected"]["holds"] is False and props["leader-elected"]["trace_length"] == 2


@pytest.mark.parametrize("flags,message", [
    (["--properties", "--property", "leader-elected"], "kmc: error: --property and --properties exclude each other"),
    (["--properties", "--no-properties"], "kmc: error: --properties and --no-properties exclude each other"),
    (["--engine", "z3", "--properties"], "kmc: error: the z3 engine does not check liveness properties"),
])
def test_property_flags_that_cannot_go_together(run_kmc, flags: list[str], message: str) -> None:
    rc, _, err = run_kmc("check", *KIP320, *flags, "--quiet")
    assert rc == 2 and one_line(err).startswith(message)


def test_a_default_property_on_an_engine_that_cannot_check_it_is_a_note(run_kmc) -> None:
    rc, out, err = run_kmc("check", "kraft", "--engine", "dfs", "--json")
    assert rc == 0 and "properties" not in json.loads(out)
    assert "note: liveness properties are not checked with --engine dfs" in err


# -- lemmas ------------------------------------------------------------------------------------


def test_a_lemma_is_checked_like_an_invariant(run_kmc) -> None:
    rc, out, _ = run_kmc("check", *KIP320, "--invariant", "leader-knows-epoch", "--invariant", "strong-isr",
                         "--json", "--quiet")
    data = json.loads(out)
    assert rc == 0 and list(data["invariants"]) == ["leader-knows-epoch", "strong-isr"]
    assert data["invariants"]["leader-knows-epoch"]["holds"] is True and data["distinct_states"] == 5973


def test_an_unknown_invariant_lists_lemmas_too(run_kmc) -> None:
    rc, _, err = run_kmc("check", *KIP320, "--invariant", "no-such", "--quiet")
    line = one_line(err)
    assert rc == 2 and line.startswith("kmc: error: unknown invariant 'no-such'; allowed: weak-isr") \
        and "leader-knows-epoch" in line


# -- gate: per-check limits, INCOMPLETE, incomplete_ok -----------------------------------------


CHECK = """[[check]]
model = "replication"
{limit}
[check.settings]
mode = "kip320"
[check.expect]
strong-isr = "holds"
"""
GATE_LIMITS = ["max_states = 100", "max_depth = 3", "time_limit = 0.000001", 'memory_limit = 1\nengine = "scalar"',
               'memory_limit = "1K"\nengine = "scalar"']  # the engine that stops there (vector spills)


@pytest.mark.parametrize("limit", GATE_LIMITS)
def test_gate_check_stopped_by_its_limit_is_incomplete(run_kmc, tmp_path: Path, limit: str) -> None:
    base, junit = tmp_path / "base.toml", tmp_path / "junit.xml"
    base.write_text(CHECK.format(limit=limit))
    rc, out, _ = run_kmc("gate", str(base), "--quiet", "--junit", str(junit))
    key = limit.split(" =")[0]
    assert rc == exits.INCOMPLETE
    assert re.search(rf"^       incomplete: stopped by {key} = \S+ with 1 invariant undecided \(strong-isr\)$",
                     out, re.M), out
    assert out.splitlines()[-1] == "a check is incomplete: raise its limits, or say incomplete_ok = true in it"
    assert '<failure message="incomplete: stopped by' in junit.read_text() and 'type="incomplete"' in junit.read_text()


@pytest.mark.parametrize("limit", GATE_LIMITS)
def test_gate_incomplete_ok_passes(run_kmc, tmp_path: Path, limit: str) -> None:
    base = tmp_path / "base.toml"
    base.write_text(CHECK.format(limit=limit + "\nincomplete_ok = true"))
    rc, out, _ = run_kmc("gate", str(base), "--quiet")
    assert rc == 0 and "incomplete_ok)" in out and out.splitlines()[-1] == f"1 of 1 checks match {base}"


def test_gate_complete_within_its_limits_passes(run_kmc, tmp_path: Path) -> None:
    base = tmp_path / "base.toml"
    base.write_text(CHECK.format(limit="time_limit = 600\nmax_states = 5974\nmax_depth = 19\nmemory_limit = \"64G\"\n"
                                       "states = 5973"))
    rc, out, _ = run_kmc("gate", str(base), "--quiet")
    assert rc == 0 and "(5,973 states" in out


def test_gate_incomplete_beats_stale(run_kmc, tmp_path: Path) -> None:
    base = tmp_path / "base.toml"
    stale = CHECK.format(limit="").replace('"holds"', '"violated 9"')
    base.write_text(CHECK.format(limit="max_depth = 3") + "\n" + stale)
    rc, out, _ = run_kmc("gate", str(base), "--quiet")
    assert rc == 4 and "STALE  replication" in out and "INCOMPLETE replication" in out


def test_gate_update_keeps_the_limits(run_kmc, tmp_path: Path) -> None:
    import tomllib

    base = tmp_path / "base.toml"
    base.write_text(CHECK.format(limit="max_depth = 3\ntime_limit = 60\nincomplete_ok = true"))
    rc, _, _ = run_kmc("gate", str(base), "--quiet", "--update")
    check = tomllib.loads(base.read_text())["check"][0]
    assert rc == 0 and check["max_depth"] == 3 and check["time_limit"] == 60 and check["incomplete_ok"] is True
    assert check["expect"]["strong-isr"] == "holds"
    rc, _, _ = run_kmc("gate", str(base), "--quiet")
    assert rc == 0


@pytest.mark.parametrize("line,message", [
    ("time_limit = 0", "key 'time_limit' must be a positive number of seconds (got 0)"),
    ("time_limit = nan", "key 'time_limit' must be a positive number of seconds (got nan)"),
    ("max_states = 0", "key 'max_states' must be at least 1 (got 0)"),
    ("max_depth = true", "key 'max_depth' must be an integer (got a boolean)"),
    ('memory_limit = "5X"', "key 'memory_limit': '5X' is not a size"),
    ('incomplete_ok = "yes"', "key 'incomplete_ok' must be a boolean"),
])
def test_gate_bad_limits_are_one_line(run_kmc, tmp_path: Path, line: str, message: str) -> None:
    base = tmp_path / "base.toml"
    base.write_text(CHECK.format(limit=line))
    rc, out, err = run_kmc("gate", str(base))
    assert rc == 2 and out == "" and message in one_line(err)


# -- README.md's table is kmc/exits.py --------------------------------------------------------


def test_readme_lists_every_exit_code_of_the_module() -> None:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \|", section, re.M)
    module = {name: value for name, value in vars(exits).items() if name.isupper() and isinstance(value, int)}
    assert {name: int(code) for code, name in rows} == module
    assert len(rows) == len(module)  # each name once


def test_every_command_takes_its_codes_from_the_module() -> None:
    # no command defines an exit code of its own
    for path in [*(ROOT / "kmc" / "cli").glob("*.py"), *(ROOT / "kmc" / "gate").glob("*.py")]:
        assert not re.search(r"^EXIT_\w+", path.read_text(), re.M), path
