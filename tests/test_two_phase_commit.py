"""The two-phase commit example (examples/two_phase_commit/), a model written outside kmc as a
user would write one: its distinct-state counts equal TLC's on Lamport's TwoPhase
specification (tests/reference/tlc-two-phase.md), TCConsistent holds, and the one invariant
meant to fail fails with the shortest trace a reader expects."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Iterator

import pytest

import kmc
from kmc.invariants import pairing
from kmc.model.core import Model
from tests.conftest import states_within

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "two_phase_commit"

# RMs -> distinct states, as TLC 2.20 printed them (tests/reference/tlc-two-phase.md)
TLC_DISTINCT = {3: 288, 4: 1568, 5: 8832, 6: 50816, 7: 296448}
# RMs -> states generated (successors computed, repeats and self-loops included), as TLC printed them
TLC_GENERATED = {3: 1146, 4: 8258, 5: 58146, 6: 402306, 7: 2744706}
# RMs -> depth of the complete state graph search, as TLC printed it
TLC_DEPTH = {3: 11, 4: 14, 5: 17, 6: 20, 7: 23}


@pytest.fixture(scope="module")
def example() -> Iterator[tuple[ModuleType, ModuleType]]:
    """The example's model and invariants modules, imported the way kmc will load them: the
    example directory on sys.path. sys.path and sys.modules are restored afterwards."""
    names = ("model", "invariants")
    saved = {n: sys.modules.pop(n) for n in names if n in sys.modules}
    sys.path.insert(0, str(EXAMPLE))
    try:
        yield importlib.import_module("model"), importlib.import_module("invariants")
    finally:
        sys.path.remove(str(EXAMPLE))
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved)


def run(example: tuple[ModuleType, ModuleType], rms: int, engine: str) -> kmc.CheckResult:
    model_mod, inv_mod = example
    model = model_mod.TwoPhaseCommit(rms=rms)
    return kmc.check(model, inv_mod.invariants(model), engine=engine, limits=kmc.Limits(), search=kmc.SearchOptions(keep_going=True))


@pytest.mark.parametrize(
    "rms,engine",
    [(n, "vector") for n in (3, 4, 5, 6)] + [(n, "scalar") for n in (3, 4, 5)],
)
def test_distinct_states_equal_tlc(example: tuple[ModuleType, ModuleType], rms: int, engine: str) -> None:
    result = run(example, rms, engine)
    assert result.complete
    assert result.distinct_states == TLC_DISTINCT[rms]
    assert result.generated_states == TLC_GENERATED[rms]
    assert result.depth == TLC_DEPTH[rms]


def test_seven_rms_give_296448_states(example: tuple[ModuleType, ModuleType]) -> None:
    """Issue 13's figure: TLC finds 296,448 distinct states for 7 RMs (tests/reference/tlc-two-phase.md)."""
    result = run(example, 7, "vector")
    assert result.complete
    assert result.distinct_states == 296_448
    assert result.generated_states == TLC_GENERATED[7]
    assert result.depth == TLC_DEPTH[7]


@pytest.mark.parametrize("rms", [1, 3, 5])
def test_consistency_and_type_ok_hold(example: tuple[ModuleType, ModuleType], rms: int) -> None:
    result = run(example, rms, "vector")
    assert result.complete
    assert result.invariants["consistency"].holds is True
    assert result.invariants["type-ok"].holds is True


@pytest.mark.parametrize("engine", ["vector", "scalar"])
def test_a_prepared_rm_can_still_abort(example: tuple[ModuleType, ModuleType], engine: str) -> None:
    """Preparing is a vote, not a decision: the TM aborts, r1 prepares anyway (the Abort
    message has not reached it), then receives the Abort message and aborts."""
    verdict = run(example, 3, engine).invariants["prepared-never-aborts"]
    assert verdict.holds is False and verdict.trace is not None
    assert verdict.trace.length == 3
    assert [s.instance.label for s in verdict.trace.steps[1:]] == [
        "tm_abort()", "rm_prepare(rm=r1)", "rm_rcv_abort_msg(rm=r1)",
    ]


def test_the_violation_is_shortest(example: tuple[ModuleType, ModuleType]) -> None:
    """No state within 2 steps violates prepared-never-aborts (a plain BFS, independent of the engines)."""
    from kmc.semantics.scalar import ScalarModel

    model_mod, inv_mod = example
    model: Model = model_mod.TwoPhaseCommit(rms=3)
    [inv] = [i for i in inv_mod.invariants(model) if i.name == "prepared-never-aborts"]
    sm = ScalarModel(model)
    assert not any(sm.violated(s, [inv]) for s in states_within(model, 2))


def test_every_action_is_named_after_a_spec_rule(example: tuple[ModuleType, ModuleType]) -> None:
    model_mod, inv_mod = example
    model = model_mod.TwoPhaseCommit(rms=2)
    assert [a.name for a in model.actions()] == [
        "tm_rcv_prepared", "tm_commit", "tm_abort",
        "rm_prepare", "rm_choose_to_abort", "rm_rcv_commit_msg", "rm_rcv_abort_msg",
    ]
    assert all(a.doc for a in model.actions())
    assert pairing.home(type(model)) is inv_mod  # invariants.py names the model: @for_model(TwoPhaseCommit)


def test_rms_out_of_range_is_refused(example: tuple[ModuleType, ModuleType]) -> None:
    model_mod, _ = example
    with pytest.raises(kmc.BadInput, match="--rms"):
        model_mod.TwoPhaseCommit(rms=13)


def orbits_by_sorting(model: Model) -> int:
    """An independent count of the symmetry classes: a plain breadth-first search over every
    reachable state (the scalar interpretation), each state keyed by its per-RM columns
    (rm_state, tm_prepared, msg_prepared) sorted, with the TM's fields: two states are one
    class exactly when renaming RMs maps one onto the other."""
    from kmc.semantics.scalar import ScalarModel

    sm = ScalarModel(model)
    n = len(model.RM)  # type: ignore[attr-defined]
    seen = set(model.initial_states())
    frontier = list(seen)
    while frontier:
        nxt = []
        for s in frontier:
            for _, t in sm.successors(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt

    def key(s: tuple[int, ...]) -> tuple[object, ...]:
        per_rm = sorted(zip(s[0:n], s[n + 1:2 * n + 1], s[2 * n + 1:3 * n + 1]))
        return (tuple(per_rm), s[n], s[3 * n + 1], s[3 * n + 2])
    return len({key(s) for s in seen})


@pytest.mark.parametrize("rms", [3, 4, 5])
def test_symmetry_counts_the_orbits(example: tuple[ModuleType, ModuleType], rms: int) -> None:
    """RMs are interchangeable: with symmetry kmc counts one state per class of states equal up
    to renaming RMs; the classes are counted here by sorting the RMs' columns."""
    model_mod, inv_mod = example
    model = model_mod.TwoPhaseCommit(rms=rms)
    assert [f.name for f in model.schema.fields] == ["rm_state", "tm_state", "tm_prepared", "msg_prepared",
                                                     "msg_commit", "msg_abort"]
    result = kmc.check(model, inv_mod.invariants(model), limits=kmc.Limits(), search=kmc.SearchOptions(keep_going=True, symmetry=True))
    assert result.distinct_states == orbits_by_sorting(model)
