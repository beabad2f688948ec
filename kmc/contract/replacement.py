"""What to write instead: the operation of `X` for the Python construct that asked a
state-dependent term a question it cannot answer (kmc/semantics/tracing.py).

Python 3.11 tells where, inside a line, the failing instruction is; the smallest expression
of the model's source at exactly those columns, and the statement or expression around it,
say which construct it was: `if`, `a if c else b`, `and`, `or`, `not`, a chained comparison,
`in`, `min`, `max`, `all`, `any`, a list index or a dict lookup.
"""

from __future__ import annotations

import ast
import functools
import linecache
from traceback import FrameSummary

CALLS = {"min": "X.min_(a, b) for `min`", "max": "X.max_(a, b) for `max`",
         "all": "X.all([...]) or X.forall(range, fn) for `all`", "any": "X.any([...]) or X.exists(range, fn) for `any`",
         "abs": "X.ite(x < 0, -x, x) for `abs`", "bool": "the term itself (or X.ite) for `bool`",
         "range": "X.forall / X.exists over a concrete range, with X.implies, for `range` of a state value",
         "sorted": "X.min_ / X.max_ for `sorted`", "sum": "X.count(flags) for `sum`"}

INDEX = "X.at(xs, i) for `xs[i]`"
LOOKUP = "X.at(a_list, i) or X.ite over the keys for a dict or set lookup"
TRUTH = "X.ite, X.and_, X.or_, X.not_, X.min_ or X.max_ for Python's if, and, or, not, min, max"


def replacement(frame: FrameSummary | None, what: str) -> str:
    """`X.op(...) for <construct>`: what to write instead of the construct that did `what`
    (a DataDependentBranch message) at `frame`; a general list when the source is unknown."""
    fallback = INDEX if "as an index" in what else LOOKUP if "dict key" in what else TRUTH
    if frame is None or frame.colno is None or frame.end_colno is None or frame.end_lineno is None:
        return fallback
    tree = _parents(frame.filename)
    if tree is None:
        return fallback
    span = (frame.lineno, frame.colno, frame.end_lineno, frame.end_colno)
    for node, parent in tree.items():
        if _span(node) == span:
            found = _construct(node, parent, what)
            if found:
                return found
    return fallback


def _construct(node: ast.AST, parent: ast.AST | None, what: str) -> str | None:
    if isinstance(node, ast.BoolOp):
        return "X.and_(a, b) for `and`" if isinstance(node.op, ast.And) else "X.or_(a, b) for `or`"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return "X.not_(a) for `not`"
    if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
        return "X.or_(x == a, x == b, ...) for `in`"
    if isinstance(node, ast.Compare) and len(node.ops) > 1:
        return "X.and_(a <= b, b < c) for a chained comparison"
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id in CALLS:
            return CALLS[node.func.id]
        if isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            return LOOKUP
    if isinstance(node, ast.Subscript):
        return INDEX if "as an index" in what else LOOKUP
    if isinstance(parent, ast.IfExp) and node is parent.test:
        return "X.ite(c, a, b) for `a if c else b`"
    if isinstance(parent, ast.If) and node is parent.test:
        return "X.ite(c, a, b) for `if` (compute both branches, choose with X.ite)"
    if isinstance(parent, ast.comprehension) and node in parent.ifs:
        return "X.ite or X.count for an `if` in a comprehension"
    return None


def _span(node: ast.AST) -> tuple[int, int, int, int] | None:
    if not hasattr(node, "lineno") or getattr(node, "end_lineno", None) is None:
        return None
    return (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


@functools.lru_cache(maxsize=64)
def _parents(filename: str) -> dict[ast.AST, ast.AST | None] | None:
    """Every node of a source file with its parent; None when the file cannot be parsed."""
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return None
    out: dict[ast.AST, ast.AST | None] = {tree: None}
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            out[child] = parent
    return out
