"""Checks that a model keeps the contract of kmc/model/core.py, so every engine can run it.

Every action's guard and effect, and every invariant, is evaluated once per parameter
binding on a state of opaque terms (the tracing backend, kmc/semantics/tracing.py). A Python
`if`, `and`, `or`, `not`, `min` or `max` on state, indexing a list by a state value or
looking one up in a dict raises there; so does any other error (a malformed effect, an
invariant that fails on terms). Each problem is reported with the action or invariant it
came from, the file and line of model code that did it, what it did and what to write
instead (kmc/contract/replacement.py); `contract_problems` reports a problem that every
binding of an action shows once, with the number of bindings.

`class_problems` runs the same check under every option combination of a model class
(kmc/contract/settings.py): code paths behind a mode, a switch or a bound are traced too.
What tracing cannot see (`s.x is -1`) is left to kmc/contract/differential.py.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from kmc.model.core import Invariant, Model
from kmc.model.located import Mistake, explained
from kmc.contract.replacement import replacement
from kmc.contract.settings import models
from kmc.semantics.tracing import TRACING, DataDependentBranch, Term
from kmc.contract.where import blame, model_frame


@dataclass(frozen=True)
class Problem:
    """One break of the contract: `subject` is `action label` or `invariant name`, `family`
    the action or invariant name, `part` guard, effect or predicate, `where` the model code,
    `fix` what to write instead (for a data-dependent branch), `bindings` how many bindings
    of the action show it."""

    subject: str
    family: str
    part: str
    what: str
    where: str
    fix: str = ""
    bindings: int = 1

    def __str__(self) -> str:
        part = f"{self.part}, {self.bindings} bindings" if self.bindings > 1 else self.part
        return f"{self.subject} ({part}): {self.what}, at {self.where}" + (f": use {self.fix}" if self.fix else "")


def problems(model: Model, invariants: Sequence[Invariant]) -> list[Problem]:
    """Every break of the contract by `model` and `invariants`, in instance order."""
    schema = model.schema
    view = schema.view([Term(name) for name in schema.element_names()])
    found: list[Problem] = []

    def run(subject: str, family: str, part: str, fn: Callable[..., Any], *args: Any) -> None:
        try:
            out = fn(view, TRACING, *args)
            if part == "effect" and not isinstance(out, dict):
                raise Mistake(f"the effect returns {out!r}, not a dict: return {{\"field\": new value, ...}}"
                              + (" (a missing `return`?)" if out is None else ""))
            if part == "effect":
                schema.updates(out)
            elif out is None:
                raise Mistake(f"the {part} returns None: return a truth value (a missing `return`?)")
        except Exception as e:  # noqa: BLE001 - every error is a break of the contract
            branch = isinstance(e, DataDependentBranch)
            what = str(e) if branch else explained(e)
            fix = replacement(model_frame(e, fn), what) if branch else ""
            found.append(Problem(subject, family, part, what, blame(e, fn), fix))

    for inst in model.instances():
        run(f"action {inst.label}", inst.action.name, "guard", inst.action.guard, *inst.args)
        run(f"action {inst.label}", inst.action.name, "effect", inst.action.effect, *inst.args)
    for inv in invariants:
        run(f"invariant {inv.name}", inv.name, "predicate", inv.predicate)
    return found


def contract_problems(model: Model, invariants: Sequence[Invariant]) -> list[str]:
    """One line per break of the contract (a break that several bindings of an action show,
    at the same line of model code, once, with their number); empty when the model keeps it."""
    first: dict[tuple[str, str, str], Problem] = {}
    count: dict[tuple[str, str, str], int] = {}
    for p in problems(model, invariants):
        key = (p.family, p.part, p.where)
        first.setdefault(key, p)
        count[key] = count.get(key, 0) + 1
    return [str(dataclasses.replace(p, bindings=count[key])) for key, p in first.items()]


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
