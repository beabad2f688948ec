"""What a model must declare, checked when it is built (kmc/model/core.py calls these from
`Model.__init__`, kmc/registry.py on `invariants(model)`), so that each declaration mistake is
one line, `FILE:LINE: what is wrong: the fix`, a DeclarationError (exit 2), instead of a
traceback from deep inside an engine:

- a model class without `_build`, `initial_states` or `actions`, or whose options do not
  start with the mode; a `_build` that sets no `self.schema`;
- initial states that are not a list of tuples of ints laid out by the schema, or that start
  a field outside its range;
- `actions()` listing something that is not the model's action, or an action declared on the
  class that `actions()` never lists and no code of the model names (an action a mode lists
  and another does not is named by the code that chooses it);
- `invariants(model)` that raises, or returns something other than invariants.

Depends on nothing else in kmc but the schema, the errors and located.py.
"""

from __future__ import annotations

import difflib
import inspect
import sys
from types import CodeType
from typing import Any, Callable, Iterable, Iterator

from kmc.errors import BadInput
from kmc.model.located import DeclarationError, class_at, code_of, defined_at, failed, is_contract, short
from kmc.model.schema import Schema

REQUIRED = {
    "_build": "def _build(self) -> None: self.schema = Schema([Field(...), ...])",
    "initial_states": "def initial_states(self) -> list[State]: return [self.schema.state(...)]",
    "actions": "def actions(self) -> Sequence[Action]: return [self.an_action, ...]",
}


def check_class(cls: type, base: type) -> None:
    """The methods and class attributes every model class declares."""
    own = {n for k in cls.__mro__ if k not in (base, object) for n, v in vars(k).items() if inspect.isfunction(v)}
    for method, how in REQUIRED.items():
        if getattr(cls, method) is getattr(base, method):
            near = difflib.get_close_matches(method, sorted(own), n=1, cutoff=0.75)
            hint = f" (it defines {near[0]}: name it {method})" if near else ""
            raise DeclarationError(f"{class_at(cls)}: model class {cls.__name__} defines no {method}(){hint}: "
                                   f"add `{how}`")
    options = getattr(cls, "options", ())
    if not options or getattr(options[0], "name", None) != "mode":
        raise DeclarationError(f"{class_at(cls)}: model class {cls.__name__}: its options must start with the mode: "
                               "options = (Option(\"mode\", \"default\", \"the protocol variant\", "
                               "choices=(\"default\",)), ...)")
    modes = getattr(cls, "modes", None)
    if not isinstance(modes, dict) or not modes:
        raise DeclarationError(f"{class_at(cls)}: model class {cls.__name__} declares no modes: "
                               "modes = {\"default\": \"one line: what the mode models\"}")
    missing = [c for c in options[0].choices or (options[0].default,) if c not in modes]
    if missing:
        raise DeclarationError(f"{class_at(cls)}: model class {cls.__name__}: mode {missing[0]!r} of its mode option "
                               f"is not in modes ({', '.join(modes)}): give it a line in modes")
    if not isinstance(getattr(cls, "summary", None), str):
        raise DeclarationError(f"{class_at(cls)}: model class {cls.__name__} declares no summary: "
                               "summary = \"one line: what the model is\"")


def check_schema(model: Any) -> Schema:
    schema = getattr(model, "schema", None)
    if not isinstance(schema, Schema):
        raise DeclarationError(f"{defined_at(type(model)._build)}: {type(model).__name__}._build() sets no "
                               "self.schema: set self.schema = Schema([Field(\"x\", lo=0, hi=3), ...]) in it")
    return schema


def check_initial_states(model: Any) -> None:
    """`initial_states()` gives a non-empty list of states, each a tuple of ints in range."""
    schema = check_schema(model)
    fn = type(model).initial_states
    at = defined_at(fn)
    states = _call(model.initial_states, "initial_states()", fn)
    if isinstance(states, tuple) and all(isinstance(v, int) for v in states):
        raise DeclarationError(f"{at}: initial_states() returns one state, not a list of states: "
                               "return [self.schema.state(...)]")
    if not isinstance(states, (list, tuple)) or not states:
        raise DeclarationError(f"{at}: initial_states() returns {_shown(states)}: return a non-empty list of "
                               "states, as [self.schema.state(...)]")
    names = schema.element_names()
    for state in states:
        if not isinstance(state, tuple) or len(state) != schema.width:
            raise DeclarationError(f"{at}: initial_states() gives {_shown(state)}: a state is a tuple of "
                                   f"{schema.width} ints ({_fields(schema)}), as self.schema.state(...) builds")
        for name, v, lo, hi in zip(names, state, schema.lo, schema.hi):
            if isinstance(v, bool) or not isinstance(v, int):
                raise DeclarationError(f"{at}: initial_states() sets {name} to {v!r}: a field holds an int")
            if not lo <= v <= hi:
                raise DeclarationError(f"{at}: initial_states() starts {name} at {v}, outside its range [{lo}, {hi}]: "
                                       f"start it inside, or widen the range of field {name.split('[')[0]}")


def check_actions(model: Any, base: type, action_type: type, declared: dict[str, Any]) -> None:
    """Every item of `actions()` is one of the model's actions (`action_type`), and every
    action `declared` on the class (attribute name -> declaration, with `guard` and `name`)
    is listed by `actions()` or named by some code of the model."""
    fn = type(model).actions
    listed = list(_call(model.actions, "actions()", fn))
    for a in listed:
        if isinstance(a, action_type):
            continue
        if any(a is d for d in declared.values()):
            raise DeclarationError(f"{defined_at(fn)}: actions() lists {type(model).__name__}.{a.name}, the "
                                   f"declaration: list the model's action, self.{a.name}")
        raise DeclarationError(f"{defined_at(fn)}: actions() lists {_shown(a)}, not an action: list the model's "
                               "actions, as [self.bump, ...]")
    guards = {code_of(a.guard) for a in listed}
    for attr, d in declared.items():
        if code_of(d.guard) in guards or attr in names_used(type(model), base):
            continue
        raise DeclarationError(f"{defined_at(d.guard)}: action {d.name} is declared but actions() does not list it "
                               f"(engines explore only what it lists): add self.{attr} to actions(), or delete it")


def check_invariants(items: Any, make: Callable[..., Any], kind: type, what: str) -> list[Any]:
    """The list `make(model)` returned (`what`: "invariants(model)"), checked: each item a
    `kind`, no two with one name."""
    at = defined_at(make)
    if not isinstance(items, (list, tuple)):
        raise DeclarationError(f"{at}: {what} returns {_shown(items)}: return a list, as [an_invariant(model), ...]")
    seen: set[str] = set()
    for item in items:
        if isinstance(item, kind):
            name = str(getattr(item, "name"))
            if name in seen:
                raise DeclarationError(f"{at}: {what} returns two named {name!r}: give each its own name")
            seen.add(name)
            continue
        if getattr(item, "declares_invariant", None):
            name = getattr(item, "__name__", "f")
            raise DeclarationError(f"{at}: {what} lists {name}, the declaration: call it, {name}(model)")
        if callable(item):
            name = getattr(item, "__name__", "f")
            raise DeclarationError(f"{defined_at(item)}: {what} returns the function {name}, not an invariant: "
                                   f"declare it with @invariant(\"{name.replace('_', '-')}\") above its def, "
                                   f"and return {name}(model)")
        raise DeclarationError(f"{at}: {what} returns {_shown(item)}: return invariants, as [an_invariant(model)]")
    return list(items)


def call_listing(make: Callable[..., Any], model: Any, what: str) -> Any:
    """`make(model)` (`invariants(model)`, `lemmas(model)`...); what it raises is a
    DeclarationError with its line, and the usual cause's fix for a TypeError."""
    try:
        return make(model)
    except BadInput:
        raise
    except TypeError as e:
        raise DeclarationError(f"{failed(what, e, make)}: an invariant is `@invariant(\"name\")` above "
                               "`def f(m, s, X)`, listed as f(model)") from e
    except Exception as e:
        raise failed(what, e, make) from e


def caller() -> str:
    """`file:line` of the first frame outside the model contract: where a declaration was written."""
    frame = sys._getframe(1)
    while frame.f_back is not None and is_contract(frame.f_code.co_filename):
        frame = frame.f_back
    return f"{short(frame.f_code.co_filename)}:{frame.f_lineno}"


def _call(method: Callable[[], Any], part: str, fn: Callable[..., Any]) -> Any:
    try:
        return method()
    except BadInput:
        raise
    except Exception as e:
        raise failed(part, e, fn) from e


_USED: dict[type, frozenset[str]] = {}


def names_used(cls: type, base: type) -> frozenset[str]:
    """Every attribute name and string constant in the code of a model class, its classes
    below `base` and their modules: an action named there is chosen by some code."""
    if cls not in _USED:
        homes = [k for k in cls.__mro__ if k not in (base, object)]
        fns = [v for k in homes for v in vars(k).values()]
        fns += [v for m in {sys.modules.get(k.__module__) for k in homes} if m is not None for v in vars(m).values()
                if inspect.isfunction(v) and v.__module__ == m.__name__]
        names: set[str] = set()
        for fn in fns:
            for code in _codes(_unwrap(fn)):
                names.update(code.co_names)
                names.update(c for c in code.co_consts if isinstance(c, str))
        _USED[cls] = frozenset(names)
    return _USED[cls]


def _unwrap(value: Any) -> Iterable[CodeType]:
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, property):
        return [c for f in (value.fget, value.fset) if f is not None for c in [code_of(f)] if c is not None]
    code = code_of(value) if callable(value) else None
    return [code] if code is not None else []


def _codes(codes: Iterable[CodeType]) -> Iterator[CodeType]:
    for code in codes:
        yield code
        yield from _codes(c for c in code.co_consts if isinstance(c, CodeType))


def _fields(schema: Schema) -> str:
    shown = ", ".join(schema.element_names()[:6])
    return shown + (", ..." if schema.width > 6 else "")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
