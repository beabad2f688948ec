"""Liveness properties and fairness: the temporal part of the model contract (kmc/model/core.py).

A property is one of four forms over state predicates written exactly like invariants (the
lifted operations of a backend `X`, so every interpretation runs them):

    eventually P          <>P         some state of every fair behaviour satisfies P
    P leads_to Q          P ~> Q      every state satisfying P is followed (or met) by one satisfying Q
    always eventually P   []<>P       P holds infinitely often
    eventually always P   <>[]P       from some point on, P holds for ever

It is declared where invariants are, in the module of the model's `invariants(model)`, by a
function `properties(model)` beside `invariants(model)`. `kmc check` checks a property when it
is named (`--property NAME`), with `--properties`, or, when no `--invariant` is named, if it is
declared `default=True`: a property the protocol is meant to satisfy, as those a
specification's cfg checks (kraft's); a property known to fail in the specification itself
stays `default=False`.

    @eventually("elected", fair=[weak("elect_leader")])
    def elected(m, s, X):
        '''some replica is eventually leader'''
        return s.leader != NONE

    @leads_to("acked-replicated", fair=[weak("fetch", "follower")])
    def acked_replicated(m, s, X):
        '''an acknowledged record reaches every live ISR member'''
        return (P, Q)          # a leads_to predicate returns the pair (P, Q)

Behaviours are those of TLA+'s `Init /\\ [][Next]_vars /\\ Fairness`: any state may be
followed by stuttering steps (a state with no enabled action stutters for ever), and
fairness is TLA+'s `WF_vars(A)` and `SF_vars(A)` with TLC's meaning, for A an action family
(`weak("send")`: the disjunction of every instance), one condition per value of some of its
parameters (`weak("fetch", "follower")`: WF for each follower's fetches), or per instance
(`weak("fetch", "follower", "leader")`). A step counts for A only if it changes the state
(`<<A>>_vars`): a step of A that changes nothing neither takes nor enables A.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence, TypeVar

from kmc.model.core import Backend, Bool, Instance, StateView

FORMS: dict[str, str] = {
    "eventually": "<>P",
    "leads_to": "P ~> Q",
    "always_eventually": "[]<>P",
    "eventually_always": "<>[]P",
}


@dataclass(frozen=True)
class Fairness:
    """WF_vars(A) (`kind` "weak") or SF_vars(A) ("strong") for the action family `action`,
    one condition per combination of the values of the parameters named in `per`."""

    kind: str
    action: str
    per: tuple[str, ...] = ()

    def __str__(self) -> str:
        k = "WF" if self.kind == "weak" else "SF"
        return f"{k}({self.action}" + (f" per {', '.join(self.per)}" if self.per else "") + ")"

    def conditions(self, instances: Sequence[Instance]) -> list[tuple[str, list[int]]]:
        """(label, instance ids) of each condition this declaration makes: for each value of
        the `per` parameters, the instances of the family with those values."""
        family = [i for i in instances if i.action.name == self.action]
        if not family:
            known = sorted({i.action.name for i in instances})
            raise ValueError(f"fairness {self}: no action named {self.action!r}; actions: {', '.join(known)}")
        names = [p.name for p in family[0].action.params]
        unknown = [p for p in self.per if p not in names]
        if unknown:
            raise ValueError(f"fairness {self}: {self.action} has no parameter {unknown[0]!r}; "
                             f"parameters: {', '.join(names) or 'none'}")
        groups: dict[tuple[int, ...], list[int]] = {}
        for inst in family:
            args = inst.named_args()
            groups.setdefault(tuple(args[p] for p in self.per), []).append(inst.id)
        k = "WF" if self.kind == "weak" else "SF"
        out = []
        for values, ids in groups.items():
            inst = next(i for i in family if i.id == ids[0])
            shown = ", ".join(f"{p}={_show(inst, p)}" for p in self.per)
            out.append((f"{k}({self.action}" + (f"({shown})" if shown else "") + ")", ids))
        return out


def _show(inst: Instance, param: str) -> str:
    for p, a in zip(inst.action.params, inst.args):
        if p.name == param:
            return p.show(a)
    return "?"


def weak(action: str, *per: str) -> Fairness:
    """WF_vars(action): if the action stays enabled (changing the state) from some point on,
    it is eventually taken; with `per`, one condition per value of those parameters."""
    return Fairness("weak", action, tuple(per))


def strong(action: str, *per: str) -> Fairness:
    """SF_vars(action): if the action is enabled infinitely often, it is eventually taken."""
    return Fairness("strong", action, tuple(per))


@dataclass(frozen=True)
class Property:
    """A named liveness property: `form` (a key of FORMS) over `predicate(s, X)`, which gives P
    (for leads_to the pair (P, Q)), checked on the behaviours that satisfy `fairness`; `default`:
    `kmc check` checks it when no property and no invariant is named."""

    name: str
    form: str
    predicate: Callable[[Any, Any], Any]
    doc: str
    fairness: tuple[Fairness, ...] = ()
    default: bool = False

    @property
    def formula(self) -> str:
        return FORMS[self.form]

    def parts(self, s: Any, X: Any) -> tuple[Any, Any]:
        """(P, Q) on a state (or a batch): Q is None except for leads_to."""
        out = self.predicate(s, X)
        if self.form == "leads_to":
            p, q = out
            return p, q
        return out, None

    def describe(self) -> str:
        fair = ", ".join(map(str, self.fairness)) or "no fairness"
        return f"{self.formula} under {fair}"


M = TypeVar("M")


def _declare(form: str, name: str, fair: Sequence[Fairness], default: bool) -> Callable[
        [Callable[[M, StateView, Backend], Any]], Callable[[M], Property]]:
    if form not in FORMS:
        raise ValueError(f"unknown property form {form!r}; allowed: {', '.join(FORMS)}")

    def declare(fn: Callable[[M, StateView, Backend], Any]) -> Callable[[M], Property]:
        doc = " ".join((fn.__doc__ or "").split())

        def bind(m: M) -> Property:
            return Property(name, form, lambda s, X: fn(m, s, X), doc, tuple(fair), default)

        bind.__name__ = fn.__name__
        bind.__doc__ = fn.__doc__
        return bind

    return declare


def eventually(name: str, *, fair: Sequence[Fairness] = (), default: bool = False) -> Callable[
        [Callable[[M, StateView, Backend], Bool]], Callable[[M], Property]]:
    """Declares `<>P`: the decorated function of (model, s, X) is P, its docstring the doc;
    `default=True`: `kmc check` checks it unless told which properties or invariants to check."""
    return _declare("eventually", name, fair, default)


def leads_to(name: str, *, fair: Sequence[Fairness] = (), default: bool = False) -> Callable[
        [Callable[[M, StateView, Backend], Any]], Callable[[M], Property]]:
    """Declares `P ~> Q`: the decorated function returns the pair (P, Q)."""
    return _declare("leads_to", name, fair, default)


def always_eventually(name: str, *, fair: Sequence[Fairness] = (), default: bool = False) -> Callable[
        [Callable[[M, StateView, Backend], Bool]], Callable[[M], Property]]:
    """Declares `[]<>P`."""
    return _declare("always_eventually", name, fair, default)


def eventually_always(name: str, *, fair: Sequence[Fairness] = (), default: bool = False) -> Callable[
        [Callable[[M, StateView, Backend], Bool]], Callable[[M], Property]]:
    """Declares `<>[]P`."""
    return _declare("eventually_always", name, fair, default)
