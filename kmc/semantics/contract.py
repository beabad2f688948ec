"""Checks that a model keeps the contract of kmc/model/core.py, so every engine can run it.

Every action's guard and effect, and every invariant, is evaluated once per parameter
binding on a state of opaque terms (the tracing backend). A Python `if`, `and`, `or`, `min`
or `max` on state, or indexing a list by a state value, raises there; the problem is
reported with the action or invariant it came from.
"""

from __future__ import annotations

from typing import Sequence

from kmc.semantics.tracing import TRACING, DataDependentBranch, Term
from kmc.model.core import Invariant, Model


def contract_problems(model: Model, invariants: Sequence[Invariant]) -> list[str]:
    """One line per violation of the contract; empty when the model keeps it."""
    schema = model.schema
    terms = [Term(name) for name in schema.element_names()]
    view = schema.view(terms)
    problems: list[str] = []
    for inst in model.instances():
        for part, fn in (("guard", inst.action.guard), ("effect", inst.action.effect)):
            try:
                out = fn(view, TRACING, *inst.args)
                if part == "effect":
                    schema.updates(out)
            except DataDependentBranch as e:
                problems.append(f"action {inst.label} ({part}): {e}")
            except Exception as e:  # a malformed effect: unknown field, wrong shape
                problems.append(f"action {inst.label} ({part}): {type(e).__name__}: {e}")
    for inv in invariants:
        try:
            inv.predicate(view, TRACING)
        except DataDependentBranch as e:
            problems.append(f"invariant {inv.name}: {e}")
    return problems
