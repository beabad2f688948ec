"""The engines a run can use, by name. Adding an engine is one package with an `ENGINE`
(kmc/engines/interface.py) and one line here; nothing else names it."""

from __future__ import annotations

from kmc.engines.compiled import ENGINE as COMPILED
from kmc.engines.explicit import DFS, SCALAR
from kmc.engines.interface import Engine
from kmc.engines.spark import ENGINE as SPARK
from kmc.engines.symbolic import ENGINE as Z3
from kmc.engines.vector import ENGINE as VECTOR
from kmc.errors import BadInput

ENGINES: dict[str, Engine] = {e.name: e for e in (VECTOR, SCALAR, DFS, SPARK, Z3, COMPILED)}
DEFAULT = VECTOR.name


def engine(name: str, job: str = "check") -> Engine:
    """The engine called `name`, which must run `job` ("check", "simulate" or "prove")."""
    if name not in ENGINES:
        raise BadInput(f"unknown engine {name!r}; allowed: {', '.join(ENGINES)}")
    found = ENGINES[name]
    if not getattr(found.capabilities, job):
        raise BadInput(f"the {name} engine does not {job}; engines that do: {', '.join(able(job))}")
    return found


def able(capability: str) -> list[str]:
    """The names of the engines with `capability`, in the table's order."""
    return [n for n, e in ENGINES.items() if getattr(e.capabilities, capability)]
