"""kmc.check is the one way to run an engine: it refuses a model that breaks the contract before
any engine runs it, and never returns a trace that does not replay."""

from __future__ import annotations

from typing import Any

import pytest

import kmc
from kmc.engines.result import CheckResult
from kmc.model.core import Action, Field, Invariant, Model, Option, Param, Schema
from kmc.traces.trace import Step


class Counter(Model):
    """x counts up to 3; `branchy` makes its guard branch on state (a contract breach)."""

    name = "counter"
    summary = "test only"
    modes = {"plain": "a lifted guard", "branchy": "a Python `if` on state"}
    options = (Option("mode", "plain", "mode", choices=("plain", "branchy")),)

    def _build(self) -> None:
        self.schema = Schema([Field("x", lo=0, hi=3)])

    def initial_states(self) -> list[tuple[int, ...]]:
        return [(0,)]

    def actions(self) -> list[Action]:
        def guard(s: Any, X: Any, k: int) -> Any:
            if self.mode == "branchy":
                return True if s.x < 3 else False
            return s.x < 3

        return [Action("bump", guard, lambda s, X, k: {"x": s.x + k}, (Param("k", (1,)),))]


SMALL = Invariant("small", lambda s, X: s.x <= 2, "x at most 2")


def test_a_violation_comes_with_a_replayed_shortest_trace() -> None:
    result = kmc.check(Counter(), [SMALL], engine="scalar")
    assert result.invariants["small"].holds is False
    assert [s.state for s in result.invariants["small"].trace.steps] == [(0,), (1,), (2,), (3,)]  # type: ignore[union-attr]


def test_a_model_that_breaks_the_contract_is_refused_before_any_engine_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args: Any, **kwargs: Any) -> CheckResult:
        raise AssertionError("the engine ran")

    monkeypatch.setattr(kmc.ENGINES["scalar"], "check", never)
    with pytest.raises(kmc.ContractError, match=r"model counter breaks the contract.*action bump\(k=1\) \(guard\)"):
        kmc.check(Counter(mode="branchy"), [SMALL], engine="scalar")


def test_a_trace_that_does_not_replay_is_raised_never_returned(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = kmc.ENGINES["scalar"].check

    def tampered(*args: Any, **kwargs: Any) -> CheckResult:
        result = engine(*args, **kwargs)
        trace = result.invariants["small"].trace
        trace.steps[2] = Step(trace.steps[2].instance, (3,))  # type: ignore[union-attr]  # a step that skips a value
        return result

    monkeypatch.setattr(kmc.ENGINES["scalar"], "check", tampered)
    with pytest.raises(kmc.ReplayError, match="step 2: bump\\(k=1\\) does not lead to the recorded state"):
        kmc.check(Counter(), [SMALL], engine="scalar")


def test_options_for_an_engine_that_takes_none_are_bad_input() -> None:
    from kmc.engines.spark.engine import SparkOptions

    with pytest.raises(kmc.BadInput, match="the vector engine takes no options of its own"):
        kmc.check(Counter(), [SMALL], options=SparkOptions())
