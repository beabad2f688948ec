"""Which invariants check which model, by reference: the one resolver of kmc's catalogue,
model files, installed packages and the Spark engine's executors.

A model does not import its invariants (they import the model), so the invariants name their
model: `@for_model(Kraft)` on `invariants(model)` pairs the class with the module that
function is defined in, where `lemmas(model)` and `properties(model)` are found too. A model
without such a declaration is checked against `invariants(model)` in its own module; a
subclass inherits its parent's. Nothing is imported by name here, and no error is caught.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any, Callable, TypeVar

from kmc.model.core import Model

_PAIRED: dict[type[Model], ModuleType] = {}

F = TypeVar("F", bound=Callable[..., Any])


def for_model(cls: type[Model]) -> Callable[[F], F]:
    """Decorate `invariants(model)`: these are the invariants of `cls` (and its subclasses)."""
    def pair(fn: F) -> F:
        _PAIRED[cls] = sys.modules[fn.__module__]
        return fn
    return pair


def home(cls: type[Model]) -> ModuleType | None:
    """The module with the invariants of `cls`: the one declared for it or for its nearest
    parent, else the first module of the class or a parent that defines `invariants`."""
    for c in cls.__mro__:
        if c in _PAIRED:
            return _PAIRED[c]
        module = sys.modules.get(c.__module__)
        if c is not Model and issubclass(c, Model) and callable(getattr(module, "invariants", None)):
            return module
    return None


def function(cls: type[Model], name: str) -> Callable[[Any], Any] | None:
    """`invariants`, `lemmas` or `properties` of the module `home(cls)`, or None."""
    fn = getattr(home(cls), name, None)
    return fn if callable(fn) and not isinstance(fn, type) else None
