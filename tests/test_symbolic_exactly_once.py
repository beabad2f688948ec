"""The z3 engine against BFS on the exactly-once models (issue 7: the engine-agreement tests of
tests/test_symbolic_bmc.py, for idempotence and transactions at their default bounds).

Every invariant the vector engine finds violated, BMC finds violated at exactly the vector
engine's trace length (asked for that invariant alone, up to that length), with a trace that
replays; every invariant the vector engine finds holding, BMC finds no violation of up to a
documented depth. The lengths in VIOLATED are regression pins (kmc's own output, first pinned in
commits 29b355c and 7ae23ac, the same as tests/test_idempotence.py and tests/test_transactions.py);
each test recomputes them with the vector engine's complete search and holds BMC to that.

Times on a shared 2-core machine (docs/symbolic.md has the table): each violation below takes
BMC at most about 10 s, except transactions kip98 exactly-once (16 steps, about 22 s: `slow`);
own-transaction (13 steps, 7 s) is `slow` too, for the default suite's time on a loaded machine.
"""

from __future__ import annotations

import functools

import pytest

from kmc import registry
from kmc.engines.symbolic import bmc
from kmc.engines.symbolic import induction
from kmc.engines.vector import engine as vector
from kmc.api import Limits, SearchOptions
from kmc.registry import select
from kmc.traces.replay import replay
from tests.conftest import build

CONFIGS = [("idempotence", "no-idempotence"), ("idempotence", "idempotence"),
           ("transactions", "kip98"), ("transactions", "kip890")]
# (model, mode, invariant, steps of the vector engine's shortest counterexample)
VIOLATED = [
    ("idempotence", "no-idempotence", "no-duplicates", 4),
    ("idempotence", "no-idempotence", "in-order", 4),
    ("transactions", "kip98", "no-hanging-transaction", 9),
    ("transactions", "kip98", "own-transaction", 13),
    ("transactions", "kip98", "exactly-once", 16),
]
# BMC: exactly-once about 22 s alone; own-transaction 7 s, 30 to 50 s under load (the default
# suite keeps kip98's no-hanging-transaction, 9 steps, and idempotence's two)
SLOW = {"exactly-once", "own-transaction"}
FAST_STEPS = {"idempotence": 6, "transactions": 6}  # idempotence: its whole BFS depth (7 levels)
SLOW_STEPS = 16  # transactions, under `slow`: as deep as the deepest kip98 counterexample


@functools.cache  # one run per configuration for the whole module: each test reads it, none changes it
def vector_run(name: str, mode: str):
    model, invariants = build(name, mode=mode)
    return model, invariants, vector.check(model, invariants, Limits(), SearchOptions(keep_going=True))


@pytest.mark.parametrize("name,mode", CONFIGS)
def test_the_violations_listed_are_all_the_vector_engine_finds(name: str, mode: str) -> None:
    _, _, want = vector_run(name, mode)
    assert want.complete
    violated = {n: v.trace.length for n, v in want.invariants.items() if v.holds is False}
    assert violated == {inv: steps for (m, md, inv, steps) in VIOLATED if (m, md) == (name, mode)}


@pytest.mark.parametrize("name,mode,invariant,steps", [
    pytest.param(*v, marks=[pytest.mark.slow] if v[2] in SLOW else []) for v in VIOLATED
])
def test_bmc_finds_the_violation_at_the_vector_length(name: str, mode: str, invariant: str, steps: int) -> None:
    model, invariants, want = vector_run(name, mode)
    assert want.invariants[invariant].trace.length == steps
    [inv] = select(invariants, [invariant])
    got = bmc.check(model, [inv], Limits(max_depth=steps + 1))  # runs of up to `steps` steps
    trace = got.invariants[invariant].trace
    assert got.stopped_by == "violation" and trace is not None and trace.length == steps
    assert trace.invariant == invariant
    replay(trace, inv)


def _holding(name: str, mode: str):
    model, invariants, want = vector_run(name, mode)
    assert want.complete
    return model, [i for i in invariants if want.invariants[i.name].holds is True], want.depth


def _assert_no_violation(name: str, mode: str, steps: int) -> None:
    model, holding, _ = _holding(name, mode)
    got = bmc.check(model, holding, Limits(max_depth=steps + 1), SearchOptions(keep_going=True))
    assert got.stopped_by == "max-depth" and got.depth == steps + 1
    assert all(got.invariants[i.name].holds is None for i in holding)


@pytest.mark.parametrize("name,mode", CONFIGS)
def test_bmc_finds_no_violation_of_what_holds_within_a_few_steps(name: str, mode: str) -> None:
    _assert_no_violation(name, mode, FAST_STEPS[name])


def test_idempotence_fast_steps_cover_its_whole_state_graph() -> None:
    for mode in ("no-idempotence", "idempotence"):
        assert _holding("idempotence", mode)[2] == FAST_STEPS["idempotence"] + 1  # BFS levels 1..7


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["kip98", "kip890"])
def test_transactions_bmc_finds_no_violation_of_what_holds_in_16_steps(mode: str) -> None:
    _assert_no_violation("transactions", mode, SLOW_STEPS)


# -- proofs (kmc prove) ------------------------------------------------------------------------

IDEMPOTENCE_LEMMAS = {"no-idempotence": ["unsent-not-sent", "requests-from-sends-and-retries"],
                      "idempotence": ["unsent-not-sent", "requests-from-sends-and-retries", "log-in-sequence"]}


@pytest.mark.parametrize("mode", ["no-idempotence", "idempotence"])
def test_idempotence_lemmas_hold_in_every_reachable_state(mode: str) -> None:
    """The vector engine's complete search agrees that the lemmas a mode's proofs use are invariants
    (log-in-sequence is false without idempotence: a retried batch is written twice)."""
    model, _ = build("idempotence", mode=mode)
    lemmas = select(registry.lemmas("idempotence", model), IDEMPOTENCE_LEMMAS[mode])
    result = vector.check(model, lemmas, Limits(), SearchOptions(keep_going=True))
    assert result.complete and not result.violated


@pytest.mark.parametrize("mode,invariant", [
    ("no-idempotence", "type-ok"), ("no-idempotence", "no-loss-of-acked"),
    ("idempotence", "type-ok"), ("idempotence", "no-loss-of-acked"),
    ("idempotence", "no-duplicates"), ("idempotence", "in-order"),
])
def test_idempotence_proofs(mode: str, invariant: str) -> None:
    model, invariants = build("idempotence", mode=mode)
    known = invariants + registry.lemmas("idempotence", model)
    [inv] = select(known, [invariant])
    proof = induction.prove(model, inv, select(known, IDEMPOTENCE_LEMMAS[mode]), k=1, timeout=60)
    assert proof.verdict == induction.PROVED and proof.k == 1


def test_without_its_lemmas_idempotence_type_ok_is_not_inductive() -> None:
    model, invariants = build("idempotence", mode="idempotence")
    [inv] = select(invariants, ["type-ok"])
    assert induction.prove(model, inv, k=1).verdict == induction.NOT_INDUCTIVE
