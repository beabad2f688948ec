"""Where model code is: the file and line of a guard, an effect or a predicate, and the line
of model code an exception came from, for messages that a model's author can act on.

A function is unwrapped first (decorators that keep `__wrapped__`, `functools.partial`,
bound methods, callable objects), so a message points at the model's own `def`, never at a
wrapper. In a traceback, the line that "did it" is the deepest frame of model code: frames in
kmc's backends (kmc/semantics/), in the contract (kmc/model/core.py), in numpy, z3 or the
standard library are machinery, not the model.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os
import sysconfig
import traceback
from types import CodeType
from typing import Any, Callable

import numpy

import kmc.model.core
import kmc.semantics

def _dir(path: str) -> str:
    return os.path.normcase(os.path.abspath(path)) + os.sep


def _package_dir(name: str) -> str | None:
    """Where an installed package is, without importing it (z3 is loaded only by the code that uses it)."""
    spec = importlib.util.find_spec(name)
    return None if spec is None or spec.origin is None else os.path.dirname(spec.origin)


_MACHINERY = tuple(_dir(p) for p in (os.path.dirname(kmc.semantics.__file__), os.path.dirname(numpy.__file__),
                                     _package_dir("z3")) if p is not None)
_STDLIB = _dir(sysconfig.get_paths()["stdlib"])
_CORE = os.path.normcase(os.path.abspath(kmc.model.core.__file__))


def code_of(fn: Callable[..., Any]) -> CodeType | None:
    """The code object of the function behind `fn`, or None when it has none (a builtin)."""
    for _ in range(16):  # wrappers of wrappers, but never a cycle
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif inspect.ismethod(fn):
            fn = fn.__func__
        elif hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        elif not inspect.isfunction(fn) and callable(fn) and hasattr(type(fn), "__call__"):
            call = type(fn).__call__
            if not inspect.isfunction(call):
                return None
            fn = call
        else:
            break
    return getattr(fn, "__code__", None)


def defined_at(fn: Callable[..., Any]) -> str:
    """`file:line` of the `def` (or lambda) behind `fn`, or `<unknown>`."""
    code = code_of(fn)
    if code is None:
        return "<unknown>"
    return f"{_short(code.co_filename)}:{code.co_firstlineno}"


def blame(error: BaseException, fn: Callable[..., Any]) -> str:
    """`file:line (in function): source line` of the deepest model-code frame of `error`'s
    traceback; the definition of `fn` when no frame is model code."""
    frames = traceback.extract_tb(error.__traceback__)
    model = [f for f in frames if not _is_machinery(f.filename)]
    if not model:
        return defined_at(fn)
    f = model[-1]
    line = f" `{f.line.strip()}`" if f.line else ""
    return f"{_short(f.filename)}:{f.lineno} (in {f.name}){line}"


def _is_machinery(filename: str) -> bool:
    path = os.path.normcase(os.path.abspath(filename))
    if path == _CORE or path.startswith(_MACHINERY):
        return True
    if path.startswith(_STDLIB):  # installed packages may live below it: users' models are not machinery
        return not any(part in ("site-packages", "dist-packages") for part in path.split(os.sep))
    return filename.startswith("<frozen")


def _short(filename: str) -> str:
    """A path relative to the working directory when it is below it, as tests and CI print it."""
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive (Windows)
        return filename
    return filename if rel.startswith("..") else rel
