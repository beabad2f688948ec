"""What model code answers on given concrete states, under each interpretation, used the way
the engines use it (for kmc/contract/differential.py).

A *probe* is one guard, effect or invariant predicate (bound to an instance's parameters).
Its outcomes are one per state: a bool for a guard or a predicate, the successor (a flat
state) for an effect, `None` where an effect is not run (its guard is false there), or a
`Failed` when the code raised.

- scalar: a view of one state over Python ints with `SCALAR`, state by state, an effect only
  where its guard holds (the bfs and dfs engines, trace replay);
- vector: all states in one batch, a numpy column per position in the engines' dtype, with
  `Vector`; a guard or predicate that gives a constant holds for every state or for none; an
  effect runs on the rows where its guard holds (the vector and Spark engines' level step);
- z3: the terms the symbolic engine builds, once, over a bit-vector constant per position
  with `Symbolic` at the engine's width; each state's outcomes are those terms with the
  state's numbers substituted for the constants, simplified to numerals
  (kmc/contract/symbolic_eval.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import z3

from kmc.model.core import Invariant, Model, Schema, State
from kmc.semantics.scalar import SCALAR
from kmc.semantics.symbolic import Symbolic, as_int, schema_width, to_z3_bool
from kmc.contract.symbolic_eval import PackedTerms
from kmc.semantics.vector import Vector, level_dtype


@dataclass(frozen=True, eq=False)
class Failed:
    """The code raised: never equal to any outcome, not even another failure."""

    error: str

    def __repr__(self) -> str:
        return f"raised {self.error}"


Answer = Any  # bool | State | None | Failed


@dataclass(frozen=True)
class Probe:
    """A guard, effect or predicate with its parameters; `guard` is the index of the probe
    of the same instance's guard (for an effect)."""

    subject: str
    family: str
    part: str
    fn: Callable[..., Any]
    args: tuple[int, ...] = ()
    guard: int = -1


def probes(model: Model, invariants: Sequence[Invariant]) -> list[Probe]:
    """Every guard and effect of every instance, then every invariant."""
    out: list[Probe] = []
    for inst in model.instances():
        subject = f"action {inst.label}"
        out.append(Probe(subject, inst.action.name, "guard", inst.action.guard, inst.args))
        out.append(Probe(subject, inst.action.name, "effect", inst.action.effect, inst.args, len(out) - 1))
    out += [Probe(f"invariant {i.name}", i.name, "predicate", i.predicate) for i in invariants]
    return out


def _failed(e: BaseException) -> Failed:
    return Failed(f"{type(e).__name__}: {e}")


def _successor(schema: Schema, state: State, effect: Any) -> State:
    nxt = list(state)
    for pos, value in schema.updates(effect):
        nxt[pos] = int(value)
    return tuple(nxt)


# -- scalar ---------------------------------------------------------------------------------


def scalar(schema: Schema, ps: Sequence[Probe], states: Sequence[State]) -> list[list[Answer]]:
    """Outcomes per probe, per state, under the scalar interpretation."""
    out: list[list[Answer]] = [[] for _ in ps]
    for state in states:
        view = schema.view(state)
        for k, p in enumerate(ps):
            if p.part == "effect" and out[p.guard][-1] is not True:
                out[k].append(None)
                continue
            try:
                value = p.fn(view, SCALAR, *p.args)
                out[k].append(_successor(schema, state, value) if p.part == "effect" else bool(value))
            except Exception as e:  # noqa: BLE001 - reported as a disagreement
                out[k].append(_failed(e))
    return out


# -- vector ---------------------------------------------------------------------------------


def truth(value: Any, n: int) -> np.ndarray:
    """Where a guard or a predicate holds over a batch of n states, as the level step reads it:
    a constant everywhere or nowhere, an array where it is true (not 0)."""
    if np.ndim(value) == 0:
        return np.full(n, bool(value))
    v = np.asarray(value)
    if v.shape != (n,):
        raise ValueError(f"an array of shape {v.shape} for a batch of {n} states")
    return v if v.dtype == np.bool_ else v != 0


def vector(schema: Schema, ps: Sequence[Probe], states: Sequence[State]) -> list[list[Answer]]:
    """Outcomes per probe, per state, under the vector interpretation, all states in one batch."""
    dtype = level_dtype(schema.lo, schema.hi)
    X = Vector(dtype)
    rows = np.array(states, dtype=dtype).reshape(len(states), schema.width)
    n = len(states)
    view = schema.view(list(np.ascontiguousarray(rows.T)))
    out: list[list[Answer]] = []
    for p in ps:
        if p.part != "effect":
            try:
                out.append([bool(b) for b in truth(p.fn(view, X, *p.args), n)])
            except Exception as e:  # noqa: BLE001
                out.append([_failed(e)] * n)
            continue
        enabled = [i for i, g in enumerate(out[p.guard]) if g is True]
        found: list[Answer] = [None] * n
        if enabled:
            sub = rows[enabled]
            try:
                effect = p.fn(schema.view(list(sub.T)), X, *p.args)
                nxt = sub.astype(np.int64)
                for pos, v in dict(schema.updates(effect)).items():  # a position written twice keeps the last value
                    nxt[:, pos] = np.broadcast_to(np.asarray(v).astype(np.int64), (len(enabled),))
                for i, row in zip(enabled, nxt.tolist()):
                    found[i] = tuple(row)
            except Exception as e:  # noqa: BLE001
                for i in enabled:
                    found[i] = _failed(e)
        out.append(found)
    return out


# -- z3 -------------------------------------------------------------------------------------


def symbolic(schema: Schema, ps: Sequence[Probe], states: Sequence[State]) -> list[list[Answer]]:
    """Outcomes per probe, per state, of the symbolic engine's terms."""
    width = schema_width(schema)
    X = Symbolic(width)
    consts = [z3.BitVec(f"s.{name}", width) for name in schema.element_names()]
    view = schema.view(X.wrap(list(consts)))
    pack = PackedTerms(consts)
    plans: list[Any] = []  # per probe: Failed, a slot (guard, predicate), or {position: slot}
    for p in ps:
        try:
            value = p.fn(view, X, *p.args)
            if p.part == "effect":
                plans.append({pos: pack.add(as_int(v, width)) for pos, v in schema.updates(value)})
            else:
                plans.append(pack.add(to_z3_bool(value)))
        except Exception as e:  # noqa: BLE001
            plans.append(_failed(e))
    out: list[list[Answer]] = [[] for _ in ps]
    for state in states:
        values = pack.values(state)
        for k, plan in enumerate(plans):
            if isinstance(plan, Failed):
                out[k].append(plan)
            elif isinstance(plan, dict):
                nxt = list(state)
                for pos, slot in plan.items():
                    nxt[pos] = values[slot]
                out[k].append(tuple(nxt))
            else:
                out[k].append(bool(values[plan]))
    return out
