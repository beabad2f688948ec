"""Liveness properties of kmc's models: their verdicts, TLC's on the replication spec
(tests/reference/tlc-liveness.md), and the two explicit engines agreeing."""

from __future__ import annotations

import json

import pytest

from kmc import registry
from kmc.api import check
from kmc.engines.result import CheckResult

MODES = ("hw", "kip101", "kip279", "kip320-first-try", "kip320")

# TLC 2.20 on the wrapper modules of tests/reference/tlc-liveness.md (2 replicas, LogSize 2,
# MaxRecords 2, MaxLeaderEpoch 2): "Temporal properties were violated" (False) or "No error
# has been found" (True), the same in all five modules.
TLC_VERDICTS = {"leader-elected": False, "leader-takes-office": True, "hw-catches-up": False}
# TLC's lassos in Kip320 (tests/reference/tlc-liveness.md): "State 1" ... "State n", then
# "State n+1: Stuttering": n - 1 steps to the cycle, which is stuttering
TLC_KIP320_LASSOS = {"leader-elected": 2, "hw-catches-up": 7}


def run(name: str, engine: str = "vector", **settings: object) -> CheckResult:
    model, _ = registry.build(name, **settings)
    return check(model, [], engine=engine, properties=registry.properties_of(model))


def test_kip98_hangs_a_transaction_for_ever_and_kip890_does_not() -> None:
    kip98 = run("transactions", mode="kip98").properties["lso-advances"]
    assert kip98.holds is False and kip98.trace is not None
    trace = kip98.trace
    # the hanging transaction: a late write lands after the abort marker, then nothing fair is
    # left to do: the run stutters with the partition blocked (regression pin, 41f876f: 12 steps)
    assert trace.stutters and trace.loop == trace.length == 12
    labels = [s.instance.label for s in trace.steps[1:]]  # type: ignore[union-attr]
    assert labels.index("write_marker(partition=out-0)") < labels.index("partition_append(producer=p2, partition=out-0)")
    assert run("transactions", mode="kip890").properties["lso-advances"].holds is True


@pytest.mark.parametrize("mode", MODES)
def test_replication_verdicts_equal_tlcs(mode: str) -> None:
    result = run("replication", mode=mode)
    assert {n: v.holds for n, v in result.properties.items()} == TLC_VERDICTS


def test_kip320_lassos_have_tlcs_lengths() -> None:
    result = run("replication", mode="kip320")
    for name, steps in TLC_KIP320_LASSOS.items():
        trace = result.properties[name].trace
        assert trace is not None and trace.stutters and trace.loop == steps


@pytest.mark.parametrize("mode", ["hw", "kip320"])
def test_scalar_and_vector_engines_agree_on_replication(mode: str) -> None:
    vector, scalar = run("replication", mode=mode), run("replication", "scalar", mode=mode)
    for name, v in vector.properties.items():
        s = scalar.properties[name]
        assert v.holds == s.holds
        assert (v.trace is None) == (s.trace is None)
        if v.trace is not None and s.trace is not None:
            assert (v.trace.loop, v.trace.length) == (s.trace.loop, s.trace.length)


@pytest.mark.parametrize("mode,acked", [("hw", False), ("epoch", True), ("epoch-fenced", True)])
def test_fetch_acked_records_reach_the_isr_unless_truncated_to_the_hw(mode: str, acked: bool) -> None:
    # hw mode loses an acknowledged record (the KIP-101 truncation): the ISR member that lost
    # it never gets it back; leader-elected holds in every mode
    result = run("fetch", mode=mode)
    assert result.properties["acked-replicated"].holds is acked
    assert result.properties["leader-elected"].holds is True


def test_the_command_line_shows_lasso_and_fairness(run_kmc) -> None:  # type: ignore[no-untyped-def]
    rc, out, _ = run_kmc("check", "replication", "--mode", "kip320", "--no-invariants", "--quiet",
                         "--property", "leader-elected", "--property", "leader-takes-office")
    assert rc == 12
    assert "leader-elected       VIOLATED (2 steps)" in out and "leader-takes-office  holds" in out
    assert "Step 3: stuttering for ever (back to step 2)" in out and "Fairness on the cycle:" in out
    rc, out, _ = run_kmc("check", "replication", "--mode", "kip320", "--quiet", "--no-properties")
    assert rc == 0 and "leader-elected" not in out


def test_property_flags_refuse_what_cannot_be_done(run_kmc) -> None:  # type: ignore[no-untyped-def]
    rc, _, err = run_kmc("check", "replication", "--property", "no-such", "--quiet")
    assert rc == 2 and "unknown property 'no-such'; allowed: leader-elected" in err
    rc, _, err = run_kmc("check", "replication", "--engine", "z3", "--property", "leader-elected", "--quiet")
    assert rc == 2 and "the z3 engine does not check liveness properties" in err and len(err.strip().splitlines()) == 1
    rc, _, err = run_kmc("check", "replication", "--property", "leader-elected", "--no-properties", "--quiet")
    assert rc == 2


def test_kmc_list_shows_properties_and_fairness(run_kmc) -> None:  # type: ignore[no-untyped-def]
    rc, out, _ = run_kmc("list")
    assert rc == 0
    assert "properties (liveness, under their fairness; kmc check --properties checks them all):" in out
    assert "lso-advances" in out and "[]<>P under WF(init_producer_id per producer)" in out


def test_a_saved_lasso_replays_and_renders(run_kmc, tmp_path) -> None:  # type: ignore[no-untyped-def]
    rc, _, _ = run_kmc("check", "replication", "--mode", "kip320", "--no-invariants", "--quiet",
                       "--property", "hw-catches-up", "--itf-dir", str(tmp_path))
    saved = tmp_path / "replication-kip320-hw-catches-up.itf.json"
    assert rc == 12 and json.loads(saved.read_text())["loop"] == 7
    rc, out, _ = run_kmc("trace", str(saved), "--format", "html")
    assert rc == 0 and 'class="loop loop-start"' in out and "by a lasso: 7 steps to step 7" in out
