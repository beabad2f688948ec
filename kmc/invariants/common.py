"""Invariants every model shares."""

from __future__ import annotations

from typing import Any

from kmc.model.core import Backend, Bool, Invariant, Schema, StateView


def type_ok(schema: Schema) -> Invariant:
    """Every field of every state within its declared range."""

    def holds(s: StateView, X: Backend) -> Bool:
        checks = []
        for f in schema.fields:
            value = getattr(s, f.name)
            for leaf in _leaves(value, len(f.shape)):
                checks.append(X.and_(f.lo <= leaf, leaf <= f.hi))
        return X.and_(*checks)

    return Invariant("type-ok", holds, "every field within its range")


def _leaves(value: Any, depth: int) -> list[Any]:
    if depth == 0:
        return [value]
    return [leaf for sub in value for leaf in _leaves(sub, depth - 1)]
