"""Where model code is, for messages a model's author can act on: the file and line of a
function or a class, and the line of model code an exception came from.

A model's mistakes are reported as `FILE:LINE: what is wrong: the fix`. The line that "did
it" is the deepest frame that is not the model contract itself (kmc/model/core.py, schema.py,
declared.py, this file) nor the standard library. kmc/contract/where.py adds the backends,
numpy and z3 to that machinery for the contract check. Depends on nothing else in kmc but
its errors.
"""

from __future__ import annotations

import functools
import inspect
import os
import sysconfig
import traceback
from types import CodeType
from typing import Any, Callable

from kmc.errors import BadInput


class DeclarationError(BadInput, TypeError):
    """A model class or its invariants declared against the contract of kmc/model/core.py:
    one line, `FILE:LINE: what is wrong: the fix` (exit 2 on the command line; a TypeError to
    Python callers, as a wrong call is)."""


class Mistake(ValueError):
    """A mistake in how model code uses the contract (a state missing a field, an effect
    naming no field): its message says what is wrong and the fix, so it is shown without its
    type."""


def path_key(filename: str) -> str:
    return os.path.normcase(os.path.abspath(filename))


_HERE = os.path.dirname(path_key(__file__))
CONTRACT = tuple(os.path.join(_HERE, f) for f in ("core.py", "schema.py", "declared.py", "lanes.py", "located.py"))
_STDLIB = path_key(sysconfig.get_paths()["stdlib"]) + os.sep


def short(filename: str) -> str:
    """A path relative to the working directory when it is below it, as tests and CI print it."""
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive (Windows)
        return filename
    return filename if rel.startswith("..") else rel


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
    return f"{short(code.co_filename)}:{code.co_firstlineno}"


def class_at(cls: type) -> str:
    """`file:line` of a class statement (or of its module when the source cannot be read)."""
    try:
        filename = inspect.getsourcefile(cls) or "<unknown>"
        line = inspect.findsource(cls)[1] + 1
    except (OSError, TypeError):
        return getattr(inspect.getmodule(cls), "__file__", None) or cls.__module__
    return f"{short(filename)}:{line}"


def is_contract(filename: str) -> bool:
    """Frames of the model contract and of the standard library: never the model's own code."""
    path = path_key(filename)
    if path in CONTRACT or filename.startswith(("<frozen", "<string>")):  # <string>: a dataclass's __init__
        return True
    return path.startswith(_STDLIB) and not any(p in ("site-packages", "dist-packages") for p in path.split(os.sep))


def raised_at(error: BaseException, fn: Callable[..., Any], *,
              machinery: Callable[[str], bool] = is_contract) -> traceback.FrameSummary | None:
    """The deepest frame of `error`'s traceback that is model code (not `machinery`); None
    when there is none (then `defined_at(fn)` is where to look)."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not machinery(f.filename)]
    return frames[-1] if frames else None


def blame(error: BaseException, fn: Callable[..., Any], *,
          machinery: Callable[[str], bool] = is_contract) -> str:
    """`file:line (in function): source line` of the deepest model-code frame of `error`'s
    traceback; the definition of `fn` when no frame is model code."""
    f = raised_at(error, fn, machinery=machinery)
    if f is None:
        return defined_at(fn)
    line = f" `{f.line.strip()}`" if f.line else ""
    return f"{short(f.filename)}:{f.lineno} (in {f.name}){line}"


def failed(part: str, error: BaseException, fn: Callable[..., Any]) -> DeclarationError:
    """A DeclarationError for an exception raised by a model's `part` (`_build()`,
    `initial_states()`...): where it came from and what it was."""
    f = raised_at(error, fn)
    where = f"{short(f.filename)}:{f.lineno}" if f is not None else defined_at(fn)
    line = f", `{f.line.strip()}`" if f is not None and f.line else ""
    return DeclarationError(f"{where}: in {part}{line}: {explained(error)}")


def explained(error: BaseException) -> str:
    """An error's message, after its type unless it is a Mistake (whose message says it all)."""
    if isinstance(error, Mistake):
        return str(error)
    text = error.args[0] if isinstance(error, KeyError) and len(error.args) == 1 else error  # KeyError quotes its str
    return f"{type(error).__name__}: {text}"
