"""Every action and invariant of every model runs under the tracing backend: no model code
branches on state with a plain Python `if`, so the vector and z3 engines can run it."""

from __future__ import annotations

from typing import Any

import pytest

from kmc import registry
from kmc.semantics.contract import contract_problems
from kmc.model.core import Action, Field, Invariant, Model, Option, Param, Schema


def every_model_and_mode() -> list[tuple[str, str]]:
    return [(name, mode) for name in registry.MODELS for mode in registry.model_class(name).modes]


@pytest.mark.parametrize("name,mode", every_model_and_mode())
def test_model_keeps_the_contract(name: str, mode: str) -> None:
    model, invariants = registry.build(name, mode=mode)
    assert contract_problems(model, invariants) == []


@pytest.mark.parametrize("name,mode", every_model_and_mode())
def test_model_keeps_the_contract_with_other_bounds(name: str, mode: str) -> None:
    cls = registry.model_class(name)
    settings = {o.name: o.default + 1 for o in cls.options if isinstance(o.default, int) and not isinstance(o.default, bool)}
    model, invariants = registry.build(name, mode=mode, **settings)
    assert contract_problems(model, invariants) == []


class Branchy(Model):
    """A model that breaks the contract: its action branches on state with `if`."""

    name = "branchy"
    summary = "test only"
    modes = {"only": "the one mode"}
    options = (Option("mode", "only", "mode", choices=("only",)),)

    def _build(self) -> None:
        self.schema = Schema([Field("x", lo=0, hi=3)])

    def initial_states(self) -> list[tuple[int, ...]]:
        return [(0,)]

    def actions(self) -> list[Action]:
        def guard(s: Any, X: Any, k: int) -> Any:
            if s.x < 3:  # not allowed: data-dependent branch
                return True
            return False

        return [Action("bump", guard, lambda s, X, k: {"x": s.x + k}, (Param("k", (1,)),))]


def test_a_python_if_on_state_is_reported_with_the_action() -> None:
    model = Branchy()
    problems = contract_problems(model, [Invariant("small", lambda s, X: s.x <= 3, "x at most 3")])
    assert len(problems) == 1
    assert problems[0].startswith("action bump(k=1) (guard): truth value of state-dependent term")
