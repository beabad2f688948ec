"""The symbolic backend and encoding (z3 successors = scalar successors), k-induction
verdicts, the lemmas (checked by BFS), and the CLI of `kmc check --engine z3` and `kmc prove`."""

from __future__ import annotations

import json
import re

import pytest
import z3

from kmc import registry
from kmc.engines.symbolic import induction
from kmc.engines.vector import engine as vector
from kmc.semantics.scalar import ScalarModel
from kmc.api import Limits, SearchOptions
from kmc.engines.symbolic.encoding import SymbolicModel, new_solver
from kmc.errors import ReplayError
from kmc.registry import select
from tests.conftest import build, states_within


@pytest.mark.parametrize("name,mode", [("replication", "hw"), ("replication", "kip320"),
                                       ("replication", "kip320-first-try"), ("fetch", "epoch-fenced")])
def test_z3_successors_are_the_scalar_successors(name: str, mode: str) -> None:
    """From concrete states, the transition relation allows exactly the scalar successors
    (enumerated with blocking clauses); the independent source is ScalarModel.successors."""
    model, invariants = build(name, mode=mode)
    sm, scalar = SymbolicModel(model, invariants), ScalarModel(model)
    for state in sorted(states_within(model, 3))[:12]:
        solver = new_solver()
        s, t = sm.state("s"), sm.state("t")
        solver.add(*[v == c for v, c in zip(s, state)], sm.transition(s, t, sm.selector("sel")))
        found = set()
        while solver.check() == z3.sat:
            nxt = sm.decode(solver.model(), t)
            found.add(nxt)
            solver.add(z3.Or([v != c for v, c in zip(t, nxt)]))
        assert found == {n for _, n in scalar.successors(state)}


def test_a_step_that_is_not_a_scalar_step_is_a_replay_error() -> None:
    model, invariants = build("replication", mode="hw")
    init = model.initial_states()[0]
    with pytest.raises(ReplayError):
        SymbolicModel(model, invariants).path([init, init])


@pytest.mark.parametrize("mode", ["hw", "kip101", "kip279", "kip320-first-try", "kip320"])
def test_lemmas_hold_in_every_reachable_state(mode: str) -> None:
    """The explicit engine agrees that every shipped lemma is an invariant (complete search)."""
    model, _ = build("replication", mode=mode)
    result = vector.check(model, registry.lemmas("replication", model), Limits(), SearchOptions(keep_going=True))
    assert result.complete and not result.violated


PROOFS = [
    ("type-ok", ["leader-knows-epoch"]),
    ("leader-in-isr", ["leader-in-own-isr", "request-leader-in-isr"]),
]


@pytest.mark.parametrize("mode", ["hw", "kip101", "kip279", "kip320-first-try", "kip320"])
@pytest.mark.parametrize("invariant,lemmas", PROOFS)
def test_replication_proofs(mode: str, invariant: str, lemmas: list[str]) -> None:
    model, invariants = build("replication", mode=mode)
    known = invariants + registry.lemmas("replication", model)
    [inv] = select(known, [invariant])
    proof = induction.prove(model, inv, select(known, lemmas), k=1, timeout=60)
    assert proof.verdict == induction.PROVED and proof.k == 1


@pytest.mark.parametrize("mode", ["hw", "epoch", "epoch-fenced"])
@pytest.mark.parametrize("invariant", ["type-ok", "hw-le-leo"])
def test_fetch_proofs(mode: str, invariant: str) -> None:
    model, invariants = build("fetch", mode=mode)
    [inv] = select(invariants, [invariant])
    assert induction.prove(model, inv, k=1).verdict == induction.PROVED


def test_without_its_lemmas_leader_in_isr_is_not_inductive() -> None:
    model, invariants = build("replication", mode="kip320")
    [inv] = select(invariants, ["leader-in-isr"])
    proof = induction.prove(model, inv, k=1)
    assert proof.verdict == induction.NOT_INDUCTIVE and proof.failed == "leader-in-isr"
    sm = ScalarModel(model)
    (first_action, before), (action, after) = proof.cti
    assert first_action is None and action is not None and sm.step(before, action) == after
    assert not sm.violated(before, [inv]) and sm.violated(after, [inv])


def test_a_false_invariant_gives_the_shortest_real_counterexample() -> None:
    model, invariants = build("replication", mode="hw")
    [inv] = select(invariants, ["strong-isr"])
    proof = induction.prove(model, inv, k=12)
    # 9 steps: TLC's shortest counterexample (tests/reference/tlc-replication.md, table B;
    # tests/test_replication_verdicts.py); k = 10 levels, the trace's 10 states
    assert proof.verdict == induction.COUNTEREXAMPLE and proof.trace is not None and proof.trace.length == 9
    assert proof.k == 10


def test_a_false_lemma_is_a_counterexample_too() -> None:
    model, invariants = build("replication", mode="hw")
    [inv, lemma] = select(invariants, ["type-ok", "strong-isr"])
    proof = induction.prove(model, inv, [lemma], k=12)
    assert proof.verdict == induction.COUNTEREXAMPLE and proof.failed == "strong-isr"


def test_timeout_gives_unknown() -> None:
    model, invariants = build("replication", mode="kip320")
    [inv] = select(invariants, ["strong-isr"])
    proof = induction.prove(model, inv, k=30, timeout=0.3)
    assert proof.verdict == induction.UNKNOWN and proof.reason


# -- CLI ---------------------------------------------------------------------------------


def _stable(out: str) -> str:
    return re.sub(r"[\d.]+ s\b|[\d,]+ MiB", "#", out)


def test_check_engine_z3(run_kmc) -> None:
    rc, out, _ = run_kmc("check", "replication", "--mode", "hw", "--engine", "z3", "--depth", "9",
                         "--invariant", "strong-isr", "-q")
    assert rc == 12 and "strong-isr  VIOLATED (9 steps)" in out and "engine z3" in out
    again = run_kmc("check", "replication", "--mode", "hw", "--engine", "z3", "--depth", "9",
                    "--invariant", "strong-isr", "-q")[1]
    assert _stable(again) == _stable(out)  # fixed seeds: the same trace, line for line
    rc, out, _ = run_kmc("check", "replication", "--mode", "kip320", "--engine", "z3", "--depth", "3", "--json", "-q")
    data = json.loads(out)
    assert rc == 4 and data["engine"] == "z3" and data["depth"] == 4 and data["stopped_by"] == "max-depth"
    assert all(v["holds"] is None for v in data["invariants"].values())


@pytest.mark.parametrize("argv,message", [
    (["--depth", "3"], "--depth: only for --engine z3 (the engine is vector)"),
    (["--engine", "z3", "--depth", "3", "--max-depth", "3"], "--max-depth is for the explicit engines"),
    (["--engine", "z3", "--symmetry"], "the z3 engine does not reduce by symmetry"),
    (["--engine", "z3", "--max-states", "9"], "--max-states is for the explicit engines"),
])
def test_check_depth_usage_errors(run_kmc, argv: list[str], message: str) -> None:
    rc, out, err = run_kmc("check", "replication", *argv)
    assert rc == 2 and out == "" and message in err and err.startswith("kmc: error:")


def test_max_depth_is_the_bound_in_levels_for_z3_too(run_kmc) -> None:
    """--max-depth N (levels) is --depth N - 1 (steps) for the bounded search."""
    by_levels = run_kmc("check", "replication", "--mode", "kip320", "--engine", "z3", "--max-depth", "4", "--json", "-q")
    by_steps = run_kmc("check", "replication", "--mode", "kip320", "--engine", "z3", "--depth", "3", "--json", "-q")
    assert by_levels[0] == by_steps[0] == 4
    assert json.loads(by_levels[1])["depth"] == json.loads(by_steps[1])["depth"] == 4


def test_prove_verdicts_and_exit_codes(run_kmc) -> None:
    rc, out, _ = run_kmc("prove", "replication", "--mode", "kip320", "--invariant", "leader-in-isr",
                         "--lemma", "leader-in-own-isr", "--lemma", "request-leader-in-isr")
    assert rc == 0 and "proved by 1-induction" in out
    rc, out, _ = run_kmc("prove", "replication", "--mode", "kip320", "--invariant", "leader-in-isr")
    assert rc == 10 and "not inductive" in out and "State 1 (the bad successor), in full:" in out
    assert "quorum.isr" in out
    # 4 steps: the shortest, by a plain BFS in tests/test_idempotence.py (hw's strong-isr, 9 steps,
    # is test_a_false_invariant_gives_the_shortest_real_counterexample's: the same search, in-process)
    rc, out, _ = run_kmc("prove", "idempotence", "--mode", "no-idempotence", "--invariant", "no-duplicates", "--k", "5",
                         "--json")
    data = json.loads(out)
    assert rc == 12 and data["verdict"] == "counterexample" and data["trace_length"] == 4
    rc, _, err = run_kmc("prove", "replication", "--invariant", "no-such-thing")
    assert rc == 2 and "unknown invariant 'no-such-thing'" in err and "leader-knows-epoch" in err
