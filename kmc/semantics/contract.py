"""Checks that a model keeps the contract of kmc/model/core.py, so every engine can run it.

Every action's guard and effect, and every invariant, is evaluated once per parameter
binding on a state of opaque terms (the tracing backend, kmc/semantics/tracing.py). A Python
`if`, `and`, `or`, `not`, `min` or `max` on state, indexing a list by a state value or
looking one up in a dict raises there; so does any other error (a malformed effect, an
invariant that fails on terms). Each problem is reported with the action or invariant it
came from, the file and line of model code that did it, and what it did.

`class_problems` runs the same check under every option combination of a model class
(kmc/semantics/settings.py): code paths behind a mode, a switch or a bound are traced too.
What tracing cannot see (`s.x is -1`) is left to kmc/semantics/differential.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from kmc.model.core import Invariant, Model
from kmc.semantics.settings import models
from kmc.semantics.tracing import TRACING, DataDependentBranch, Term
from kmc.semantics.where import blame


@dataclass(frozen=True)
class Problem:
    """One break of the contract: `subject` is `action label` or `invariant name`, `family`
    the action or invariant name, `part` guard, effect or predicate, `where` the model code."""

    subject: str
    family: str
    part: str
    what: str
    where: str

    def __str__(self) -> str:
        return f"{self.subject} ({self.part}): {self.what}, at {self.where}"


def problems(model: Model, invariants: Sequence[Invariant]) -> list[Problem]:
    """Every break of the contract by `model` and `invariants`, in instance order."""
    schema = model.schema
    view = schema.view([Term(name) for name in schema.element_names()])
    found: list[Problem] = []

    def run(subject: str, family: str, part: str, fn: Callable[..., Any], *args: Any) -> None:
        try:
            out = fn(view, TRACING, *args)
            if part == "effect":
                schema.updates(out)
        except Exception as e:  # noqa: BLE001 - every error is a break of the contract
            what = str(e) if isinstance(e, DataDependentBranch) else f"{type(e).__name__}: {e}"
            found.append(Problem(subject, family, part, what, blame(e, fn)))

    for inst in model.instances():
        run(f"action {inst.label}", inst.action.name, "guard", inst.action.guard, *inst.args)
        run(f"action {inst.label}", inst.action.name, "effect", inst.action.effect, *inst.args)
    for inv in invariants:
        run(f"invariant {inv.name}", inv.name, "predicate", inv.predicate)
    return found


def contract_problems(model: Model, invariants: Sequence[Invariant]) -> list[str]:
    """One line per violation of the contract; empty when the model keeps it."""
    return [str(p) for p in problems(model, invariants)]


def class_problems(cls: type[Model], checks: Callable[[Model], Sequence[Invariant]], *,
                   full: bool = False) -> tuple[int, list[str]]:
    """The contract check under every option combination of `cls` (settings.option_settings;
    `checks(model)` gives the invariants, reports and lemmas to trace with it): the number of
    combinations run, and one line per problem, the first time it is seen (same action or
    invariant, part and line of model code), with the settings it was seen under and how
    many other bindings or combinations show it too."""
    first: dict[tuple[str, str, str], tuple[str, Problem]] = {}
    seen: dict[tuple[str, str, str], int] = {}
    runs = 0
    for model in models(cls, full=full):
        runs += 1
        for p in problems(model, checks(model)):
            key = (p.family, p.part, p.where)
            seen[key] = seen.get(key, 0) + 1
            first.setdefault(key, (model.title(), p))
    lines = []
    for key, (title, p) in first.items():
        more = seen[key] - 1
        lines.append(f"{p} [{title}" + (f"; {more} more bindings or settings" if more else "") + "]")
    return runs, lines
