"""Effects as flat maps, for models whose actions branch like a TLA+ CASE (the `kraft` model).

A TLA+ action of the KRaft specification changes many variables in sub-actions chosen by a
CASE on the state. Under kmc's contract an effect cannot branch with a Python `if` on the
state, so the model builds each sub-action's effect as a flat map (field name, concrete
indices) -> new value, and `cases` merges them into one effect whose every element is an
`X.ite` chain over the CASE's arms, in order (the first arm that holds wins, as TLC does).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from kmc.model.core import Backend, Bool, Effect, StateView

Key = tuple[Any, ...]  # (field name, index, index, ...)
Flat = dict[Key, Any]


def old(s: StateView, key: Key) -> Any:
    """The current value of one element of the state."""
    value = getattr(s, key[0])
    for i in key[1:]:
        value = value[i]
    return value


def merge(*parts: Flat) -> Flat:
    """Sub-effects that change disjoint elements (or agree), as one; later parts win."""
    out: Flat = {}
    for p in parts:
        out.update(p)
    return out


def cases(s: StateView, X: Backend, arms: Sequence[tuple[Bool, Flat]], other: Flat | None = None) -> Flat:
    """TLA+'s CASE: the effect of the first arm whose condition holds, else `other` (an
    element no branch names keeps its value)."""
    other = other or {}
    keys: dict[Key, None] = dict.fromkeys(other)
    for _, eff in arms:
        keys.update(dict.fromkeys(eff))
    out: Flat = {}
    for key in keys:
        current = old(s, key)
        value = other.get(key, current)
        for cond, eff in reversed(arms):
            value = X.ite(cond, eff.get(key, current), value)
        out[key] = value
    return out


def when(s: StateView, X: Backend, cond: Bool, eff: Flat, otherwise: Flat | None = None) -> Flat:
    """IF cond THEN eff ELSE otherwise (default: UNCHANGED)."""
    return cases(s, X, [(cond, eff)], otherwise)


def row(name: str, i: int, values: Iterable[Any]) -> Flat:
    """field[i][j] = values[j] for every j."""
    return {(name, i, j): v for j, v in enumerate(values)}


def nested(flat: Flat) -> Effect:
    """The flat map as the nested {field: {index: ...}} effect Schema.updates takes."""
    out: Effect = {}
    for key, value in flat.items():
        if len(key) == 1:
            out[key[0]] = value
            continue
        node = out.setdefault(key[0], {})
        for i in key[1:-1]:
            node = node.setdefault(i, {})
        node[key[-1]] = value
    return out
