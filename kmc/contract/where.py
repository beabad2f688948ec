"""Where model code is: the file and line of a guard, an effect or a predicate, and the line
of model code an exception came from, for messages that a model's author can act on.

A function is unwrapped first (decorators that keep `__wrapped__`, `functools.partial`,
bound methods, callable objects), so a message points at the model's own `def`, never at a
wrapper. In a traceback, the line that "did it" is the deepest frame of model code: frames in
kmc's backends (kmc/semantics/) and the contract check (kmc/contract/), in the model contract (kmc/model/core.py, schema.py), in
numpy, z3 or the standard library are machinery, not the model (kmc/model/located.py).
"""

from __future__ import annotations

import importlib.util
import os
import traceback
from typing import Any, Callable

import numpy

import kmc.contract
import kmc.semantics
from kmc.model import located
from kmc.model.located import code_of, defined_at  # noqa: F401 (re-exported: the contract check's callers use them)

def _origin(name: str) -> str:
    """The file an installed package starts from, without importing it (z3 is loaded only by the code that uses it)."""
    spec = importlib.util.find_spec(name)
    return "" if spec is None or spec.origin is None else spec.origin


_MACHINERY = tuple(os.path.dirname(located.path_key(p)) + os.sep
                   for p in (kmc.semantics.__file__, kmc.contract.__file__, numpy.__file__, _origin("z3")) if p)


def is_machinery(filename: str) -> bool:
    return located.is_contract(filename) or located.path_key(filename).startswith(_MACHINERY)


def model_frame(error: BaseException, fn: Callable[..., Any]) -> traceback.FrameSummary | None:
    """The deepest frame of model code in `error`'s traceback, or None."""
    return located.raised_at(error, fn, machinery=is_machinery)


def blame(error: BaseException, fn: Callable[..., Any]) -> str:
    """`file:line (in function): source line` of the deepest model-code frame of `error`'s
    traceback; the definition of `fn` when no frame is model code."""
    return located.blame(error, fn, machinery=is_machinery)
