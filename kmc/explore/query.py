"""The explorer's search: `field op value` clauses joined by `and`, over a state's raw fields.

A field is named as a state's flat element (`con_leader`, `md_isr[0][1]`, the names the page's
raw table shows); `op` is one of `== = != < <= > >=`; a value is an integer. The text is parsed
here, never evaluated as Python: anything else is refused naming what is allowed.
"""

from __future__ import annotations

import difflib
import operator
import re
from dataclasses import dataclass
from typing import Callable

from kmc.errors import BadInput
from kmc.model.core import State

OPS: dict[str, Callable[[int, int], bool]] = {
    "==": operator.eq, "=": operator.eq, "!=": operator.ne,
    "<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt,
}
_CLAUSE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])*)\s*(==|!=|<=|>=|=|<|>)\s*(-?\d+)\s*$")
_AND = re.compile(r"\s+and\s+|\s*&&\s*")
MAX_QUERY = 1000  # characters: a query is typed by a person


@dataclass(frozen=True)
class Clause:
    position: int  # in the flat state tuple
    test: Callable[[int, int], bool]
    value: int


@dataclass(frozen=True)
class Query:
    clauses: tuple[Clause, ...]

    def matches(self, state: State) -> bool:
        return all(c.test(state[c.position], c.value) for c in self.clauses)


def parse(text: str, names: list[str]) -> Query:
    """The query `text` over a schema whose flat elements are `names`; BadInput when it is not one."""
    if len(text) > MAX_QUERY:
        raise BadInput(f"the search is {len(text)} characters long; at most {MAX_QUERY}")
    if not text.strip():
        raise BadInput("an empty search: write field op value, e.g. " + _example(names))
    position = {n: k for k, n in enumerate(names)}
    clauses = []
    for part in _AND.split(text.strip()):
        m = _CLAUSE.match(part)
        if m is None:
            raise BadInput(f"cannot read {part.strip()!r}: write field op value (op one of "
                           f"{' '.join(OPS)}, an integer value), clauses joined by 'and', e.g. {_example(names)}")
        name, op, value = m.groups()
        if name not in position:
            near = difflib.get_close_matches(name, names, n=3)
            hint = f"did you mean {', '.join(near)}?" if near else f"fields are named as in the raw table, e.g. {names[0]}"
            raise BadInput(f"no field {name!r}; {hint}")
        clauses.append(Clause(position[name], OPS[op], int(value)))
    return Query(tuple(clauses))


def _example(names: list[str]) -> str:
    return f"{names[0]} == 1" if names else "field == 1"
