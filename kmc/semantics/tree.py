"""Lifted selection over nested lists (the rows of an array field), for every backend."""

from __future__ import annotations

from typing import Any


def ite_tree(X: Any, c: Any, a: Any, b: Any) -> Any:
    """`X.ite` applied leaf by leaf to equally shaped nested lists (rows of an array)."""
    if isinstance(a, list):
        return [ite_tree(X, c, x, y) for x, y in zip(a, b)]
    return X.ite(c, a, b)
