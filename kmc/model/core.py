"""The model contract: schema, actions, invariants, options, and the Model base class.

A model is a finite state machine over named integer fields. A concrete state is a flat
tuple of ints laid out by the model's Schema. Actions and invariants read a state through a
*view* (`s.hw[r]`, `s.log_id[r][o]`) and compute with Python operators on those values and
with the lifted operations of a backend `X: Backend` (see kmc/semantics/), so that the same
code runs on Python ints, numpy columns and z3 terms. Plain `if`, `and`, `or`, `min`, `max`
are for concrete parameters and constants only.

An action is declared once, on the model class, with its parameters, its guard (the decorated
method, whose docstring says when Kafka does it) and its effect right below it:

    @action(replica=REPLICA, epoch=EPOCH)
    def become_leader(self, s: StateView, X: Backend, r: int, e: int) -> Bool:
        '''A replica becomes leader on a LeaderAndIsr request naming it ...'''
        return X.and_(e < s.next_leader_epoch, s.request_leader[e] == r, s.epoch[r] < e)

    @become_leader.effect
    def _(self, s: StateView, X: Backend, r: int, e: int) -> Effect:
        return {"epoch": {r: e}, "leader": {r: r}, "isr": {r: list(s.request_isr[e])}}

Read from a model instance, `self.become_leader` is that model's `Action`; a model's `actions()`
lists them in the order engines explore, as a TLA+ spec's `Next` lists its disjuncts.

This module depends on nothing else in kmc: engines depend on it, never the reverse.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Iterable, Mapping, Protocol, Sequence, TypeVar, overload

from kmc.errors import BadInput
from kmc.model import declared
from kmc.model.lanes import Lane, Lanes, Message  # noqa: F401 (re-exported: model files import the contract from here)
from kmc.model.located import DeclarationError, class_at, defined_at, failed
from kmc.model.schema import (  # noqa: F401 (re-exported: model files import the contract from here)
    NONE, Bool, Effect, Field, Int, Schema, State, StateView, View, replica_name,
)


# ---------------------------------------------------------------------------------------
# Actions and invariants
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """A concrete parameter of an action family: its name, its values, how to show one."""

    name: str
    values: tuple[int, ...]
    show: Callable[[int], str] = str


@dataclass(frozen=True)
class Action:
    """A family of transitions over concrete parameters.

    `guard(s, X, *params)` says whether the transition is enabled; `effect(s, X, *params)`
    returns the fields it changes. `where(*params)` filters parameter combinations that
    never make sense (a replica following itself), on concrete values only.
    """

    name: str
    guard: Callable[..., Any]
    effect: Callable[..., Mapping[str, Any]]
    params: tuple[Param, ...] = ()
    where: Callable[..., bool] | None = None
    doc: str = ""

    def bindings(self) -> list[tuple[int, ...]]:
        combos = itertools.product(*(p.values for p in self.params))
        return [c for c in combos if self.where is None or self.where(*c)]


@dataclass(frozen=True)
class Domain:
    """What an action parameter ranges over, read from the model when its actions are built:
    `Domain(lambda m: m.R, replica_name)` is every replica of the model, shown as r1, r2, ..."""

    values: Callable[[Any], Iterable[int]]
    show: Callable[[int], str] = str

    def __post_init__(self) -> None:
        if not callable(self.values):
            raise DeclarationError(f"{declared.caller()}: Domain({self.values!r}) takes a function of the model, "
                                   "as Domain(lambda m: m.R, replica_name) or Domain(lambda m: range(3))")


def distinct(a: int, b: int, *rest: int) -> bool:
    """`where=distinct`: the first two parameters differ (a replica never follows itself)."""
    return a != b


class ActionDef:
    """An action declared on a model class (see `action`); read from a model it is that model's `Action`."""

    def __init__(self, guard: Callable[..., Bool], name: str | None, params: dict[str, Domain],
                 where: Callable[..., bool] | None):
        self.guard = guard
        self.name = name or guard.__name__
        self.params = params
        self.where = where
        self.doc = " ".join((guard.__doc__ or "").split())
        self._effect: Callable[..., Effect] | None = None
        self._check_arity(guard, "guard")

    def effect(self, fn: Callable[..., Effect]) -> Callable[..., Effect]:
        """Declares the action's effect: the fields it changes (decorate a method named `_`)."""
        if self._effect is not None:
            raise DeclarationError(f"{defined_at(fn)}: action {self.name}: a second effect declared: "
                                   "an action has one effect")
        self._check_arity(fn, "effect")
        self._effect = fn
        return fn

    def replace(self, *, guard: Callable[..., Bool] | None = None,
                effect: Callable[..., Effect] | None = None) -> ActionDef:
        """The same action with another guard or effect, for a variant of a model in a subclass:
        `consume = Transactions.consume.replace(guard=_reads_to_log_end)`."""
        effect = effect or self._effect
        if effect is None:
            raise self.no_effect()
        out = ActionDef(guard or self.guard, self.name, self.params, self.where)
        out.doc = self.doc
        out.effect(effect)
        return out

    def _check_arity(self, fn: Callable[..., Any], part: str) -> None:
        code = getattr(fn, "__code__", None)
        want = 3 + len(self.params)  # self, s, X, then one per parameter
        if code is not None and code.co_argcount != want:
            raise DeclarationError(
                f"{defined_at(fn)}: action {self.name}: its {part} takes {code.co_argcount} arguments; with "
                f"parameters ({', '.join(self.params)}) it must take ({', '.join(['self', 's', 'X', *self.params])})"
            )

    def no_effect(self) -> DeclarationError:
        args = ", ".join(["self", "s", "X", *self.params])
        return DeclarationError(f"{defined_at(self.guard)}: action {self.name} declares no effect: add "
                                f"`@{self.guard.__name__}.effect` and `def _({args}) -> Effect:` below it, returning "
                                "the fields it changes")

    @overload
    def __get__(self, model: None, owner: type) -> ActionDef: ...
    @overload
    def __get__(self, model: Model, owner: type) -> Action: ...

    def __get__(self, model: Model | None, owner: type) -> ActionDef | Action:
        if model is None:
            return self
        if self._effect is None:
            raise self.no_effect()
        return Action(
            self.name,
            self.guard.__get__(model, owner),
            self._effect.__get__(model, owner),
            tuple(Param(name, tuple(d.values(model)), d.show) for name, d in self.params.items()),
            self.where,
            self.doc,
        )


def action(*, name: str | None = None, where: Callable[..., bool] | None = None,
           **params: Domain) -> Callable[[Callable[..., Bool]], ActionDef]:
    """Declares an action on a model class: the decorated method is its guard, its docstring
    the action's doc (when Kafka does it), the keyword arguments its parameters in order
    (`follower=REPLICA, leader=REPLICA`), `where` a filter on concrete parameters, and `name`
    the action's name when it is not the method's (a spec variant of a common action)."""

    def declare(guard: Callable[..., Bool]) -> ActionDef:
        for key, domain in params.items():
            if not isinstance(domain, Domain):
                raise DeclarationError(f"{defined_at(guard)}: action {name or guard.__name__}: its parameter {key} "
                                       f"ranges over {domain!r}, not a Domain: declare one, as REPLICA = "
                                       f"Domain(lambda m: m.R, replica_name), and write {key}=REPLICA")
        return ActionDef(guard, name, params, where)

    return declare


M = TypeVar("M")


def invariant(name: str, *, report: bool = False) -> Callable[[Callable[[M, StateView, Backend], Bool]],
                                                              Callable[[M], Invariant]]:
    """Declares an invariant of a model: `@invariant("weak-isr") def weak_isr(m, s, X)`, whose
    docstring is the invariant's doc; `weak_isr(m)` is then model m's `Invariant`."""

    def declare(holds: Callable[[M, StateView, Backend], Bool]) -> Callable[[M], Invariant]:
        doc = " ".join((holds.__doc__ or "").split())
        code = getattr(holds, "__code__", None)
        if code is not None and code.co_argcount != 3:
            raise DeclarationError(f"{defined_at(holds)}: invariant {name} takes {code.co_argcount} arguments; an "
                                   "invariant takes (m, s, X): the model, the state, the backend")

        def bind(m: M) -> Invariant:
            return Invariant(name, functools.partial(holds, m), doc, report)

        bind.__name__ = holds.__name__
        bind.__doc__ = holds.__doc__
        bind.declares_invariant = name  # type: ignore[attr-defined]  # for kmc/model/declared.py's messages
        return bind

    return declare


@dataclass(frozen=True)
class Instance:
    """One member of an action family: the action with its parameters bound."""

    id: int
    action: Action
    args: tuple[int, ...]

    @property
    def label(self) -> str:
        shown = ", ".join(f"{p.name}={p.show(a)}" for p, a in zip(self.action.params, self.args))
        return f"{self.action.name}({shown})"

    def named_args(self) -> dict[str, int]:
        return {p.name: a for p, a in zip(self.action.params, self.args)}


@dataclass(frozen=True)
class Invariant:
    """A named safety property: `predicate(s, X)` must hold in every reachable state.

    With `report=True` it is an availability report instead: engines count the states where
    it fails and keep a shortest example, but never fail a run or stop a search for it.
    """

    name: str
    predicate: Callable[[Any, Any], Any]
    doc: str
    report: bool = False


# ---------------------------------------------------------------------------------------
# Options: bounds, modes and switches, validated the same way for the CLI and the API
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """A model option. Its CLI flag is `--` + name with dashes (Kafka's name where Kafka has one)."""

    name: str
    default: int | bool | str
    help: str
    min: int | None = None
    max: int | None = None
    choices: tuple[str, ...] | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def check(self, value: Any) -> Any:
        if isinstance(self.default, bool):
            if not isinstance(value, bool):
                raise BadInput(f"{self.flag} takes true or false (got {value!r})")
            return value
        if isinstance(self.default, int):
            if isinstance(value, bool) or not isinstance(value, int):
                raise BadInput(f"{self.flag} takes an integer (got {value!r})")
            lo = "" if self.min is None else f"{self.min}"
            hi = "" if self.max is None else f"{self.max}"
            if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
                allowed = f"from {lo} to {hi}" if lo and hi else (f"at least {lo}" if lo else f"at most {hi}")
                raise BadInput(f"{self.flag} must be {allowed} (got {value})")
            return value
        if self.choices is not None and value not in self.choices:
            raise BadInput(f"{self.flag}: unknown value {value!r}; allowed: {', '.join(self.choices)}")
        return value


T = TypeVar("T")


class Backend(Protocol):
    """The lifted operations every backend provides (kmc/semantics/): `X` in model code.

    Every backend gives them the same meaning; `Scalar` (Python ints) is the definition."""

    name: str

    def ite(self, c: Bool, a: Any, b: Any) -> Any:
        """a if c else b (element by element for equally shaped lists)."""
    def and_(self, *xs: Bool) -> Bool:
        """Every x holds (true for none)."""
    def or_(self, *xs: Bool) -> Bool:
        """Some x holds (false for none)."""
    def not_(self, x: Bool) -> Bool: ...
    def implies(self, a: Bool, b: Bool) -> Bool: ...
    def iff(self, a: Bool, b: Bool) -> Bool:
        """a and b have the same truth value (a 0/1 flag counts as a truth value)."""
    def min_(self, *xs: Int) -> Int: ...
    def max_(self, *xs: Int) -> Int: ...
    def at(self, array: Sequence[Any], index: Int) -> Any:
        """array[index] for a state-dependent index; out-of-range indices read the nearest element."""
    def set_at(self, array: Sequence[Any], index: Int, value: Any) -> list[Any]:
        """A copy of array with array[index] = value; an out-of-range index changes nothing."""
    def all(self, xs: Iterable[Bool]) -> Bool: ...
    def any(self, xs: Iterable[Bool]) -> Bool: ...
    def forall(self, xs: Iterable[T], fn: Callable[[T], Bool]) -> Bool:
        """fn(x) holds for every x of a concrete range (TLA+'s \\A x \\in xs)."""
    def exists(self, xs: Iterable[T], fn: Callable[[T], Bool]) -> Bool:
        """fn(x) holds for some x of a concrete range (TLA+'s \\E x \\in xs)."""
    def count(self, xs: Iterable[Bool]) -> Int:
        """How many of xs hold (0/1 flags count as truth values): the size of a set of flags."""


# ---------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------


class Model:
    """Base class of every model.

    Subclasses set `name`, `summary`, `modes` (mode -> one-line meaning), `options` (the first
    is `mode`), and implement `_build()` to set `schema`, and `initial_states()`, `actions()`;
    building a model checks those declarations (kmc/model/declared.py).
    A model does not name its invariants (they import the model): `invariants(model)`
    declares its model by reference, `@for_model(Cls)` (kmc/invariants/pairing.py; kmc's
    models: kmc/invariants/<model>.py), or is defined in the model's own module.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    modes: ClassVar[dict[str, str]]
    options: ClassVar[tuple[Option, ...]]
    lanes: ClassVar[Lanes | None] = None  # its processes and messages, for traces (kmc/model/lanes.py)

    schema: Schema

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for value in vars(cls).values():
            if isinstance(value, ActionDef) and value._effect is None:
                raise value.no_effect()

    def __init__(self, **settings: Any):
        declared.check_class(type(self), Model)
        known = {o.name: o for o in self.options}
        for key in settings:
            if key not in known:
                raise BadInput(f"unknown option {key!r} for model {self.name}; allowed: {', '.join(known)}")
        self.settings: dict[str, Any] = {}
        for opt in self.options:
            self.settings[opt.name] = opt.check(settings.get(opt.name, opt.default))
        self.mode: str = self.settings["mode"]
        self._validate()
        try:
            self._build()
        except BadInput:
            raise
        except Exception as e:
            raise failed("_build()", e, type(self)._build) from e
        self._instances: list[Instance] | None = None
        declared.check_initial_states(self)
        actions = {a: v for k in reversed(type(self).__mro__) for a, v in vars(k).items() if isinstance(v, ActionDef)}
        declared.check_actions(self, Model, Action, actions)
        self._check_lanes(actions)

    def _check_lanes(self, declared_actions: dict[str, ActionDef]) -> None:
        lanes = type(self).lanes
        if lanes is None:
            return
        if not isinstance(lanes, Lanes):
            raise DeclarationError(f"{class_at(type(self))}: model class {type(self).__name__}: lanes = {lanes!r}: "
                                   "declare lanes = Lanes(Lane(\"controller\"), ..., local={...}, messages=[...])")
        by_name = {d.name: d.__get__(self, type(self)) for d in declared_actions.values()}
        lanes.check(self, by_name)

    def _validate(self) -> None:
        """Cross-option checks; raise BadInput naming the options."""

    def _build(self) -> None:
        raise NotImplementedError

    def initial_states(self) -> list[State]:
        raise NotImplementedError

    def actions(self) -> Sequence[Action]:
        raise NotImplementedError

    def instances(self) -> list[Instance]:
        """Every (action, parameters) pair in the deterministic order engines use."""
        if self._instances is None:
            out: list[Instance] = []
            for action in self.actions():
                for args in action.bindings():
                    out.append(Instance(len(out), action, args))
            self._instances = out
        return self._instances

    def describe(self, state: State) -> dict[str, str]:
        """Human-readable fields of a state, for traces. Models override for Kafka's terms."""
        return {n: str(v) for n, v in zip(self.schema.element_names(), state)}

    def title(self) -> str:
        """The model, its mode and its settings, in one line (as flags that rerun it): a switch on
        as --name, one that is on by default and turned off as --no-name."""
        shown = [f"{o.flag}={self.settings[o.name]}" for o in self.options
                 if o.name != "mode" and not isinstance(o.default, bool)]
        shown += [o.flag if self.settings[o.name] else f"--no-{o.flag[2:]}" for o in self.options
                  if isinstance(o.default, bool) and (self.settings[o.name] or o.default)]
        return " ".join([self.name, f"--mode={self.mode}", *shown])
