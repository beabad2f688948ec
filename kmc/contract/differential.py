"""The differential check: model code gives the same answers under every interpretation.

The contract check (kmc/contract/traced.py) sees every question model code asks of a state
value. It cannot see code that asks nothing: `s.x is -1` is True for the Python int -1 and
False for a numpy column or a z3 term; `isinstance(s.x, int)`, `type(s.x)` likewise. Such
code gives the scalar engine one state space and the vector or z3 engine another, silently.

This check draws states, the model's initial states first, then `count` states with each flat
position uniform in its field's range (reachable or not, as k-induction's states are), and
evaluates every guard, every effect (on the states where its scalar guard holds) and every
invariant under the scalar, vector and z3 interpretations, the way the engines use them
(kmc/contract/outcomes.py). Every answer must equal the scalar one; an error under any
interpretation is reported too. Out-of-range indices are clipped the same way by every
backend, so unreachable states must agree as well.

Every state drawn is inside the declared ranges: the walks never step out of them. An effect
that takes a field out of its range from a reachable state (an initial state or one met on a
walk) is a mistake of its own, reported as such (`action bump(k=1) sets x to 4, outside
[0, 3] ...: guard it`); from an unreachable uniform state it is not compared (the engines
never run it there).

It takes a `random.Random` (or a seed) so that runs are reproducible without hypothesis. Given
a model's compiled kernels (kmc/semantics/compiled/kernels.py), it compares the compiled
interpretation too.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from kmc.model.core import Invariant, Model, Schema, State
from kmc.semantics.scalar import ScalarModel
from kmc.contract.outcomes import Failed, Answer, Probe, probes, scalar, symbolic, vector
from kmc.contract.where import defined_at

if TYPE_CHECKING:  # the compiled interpretation (llvmlite) is loaded only by who uses it
    from kmc.semantics.compiled.kernels import Kernels


@dataclass(frozen=True)
class Disagreement:
    """The first state where an action's guard or effect, or an invariant, answers differently
    under the vector or z3 interpretation than under the scalar one."""

    subject: str  # `action label` or `invariant name`
    part: str  # guard, effect or predicate
    where: str  # file:line of the function
    state: str  # the state, field by field
    scalar: str
    vector: str
    z3: str
    count: int  # (instance, state) pairs of this action or invariant that disagree
    compiled: str | None = None  # when the compiled interpretation was compared

    def __str__(self) -> str:
        more = f" ({self.count} disagreements in this {self.part})" if self.count > 1 else ""
        native = "" if self.compiled is None else f", compiled {self.compiled}"
        return (f"{self.subject} ({self.part}) at {self.where}: scalar {self.scalar}, vector {self.vector}, "
                f"z3 {self.z3}{native}, on state {self.state}{more}")


@dataclass(frozen=True)
class OutOfRange:
    """The first reachable state from which an action's effect sets a field outside its range."""

    subject: str  # `action label`
    where: str  # file:line of the effect
    field: str  # the element written, `x` or `hw[1]`
    value: int
    lo: int
    hi: int
    state: str
    count: int  # (instance, state) pairs of this action that leave a range

    def __str__(self) -> str:
        return (f"{self.subject} sets {self.field} to {self.value}, outside [{self.lo}, {self.hi}], from the reachable "
                f"state {self.state} (effect at {self.where}): guard it, or widen the range of {self.field}")


def draw(model: Model, rng: random.Random, count: int) -> list[State]:
    """The initial states, `count - count // 2` states with every position uniform in its
    range, and `count // 2` states met on random walks from the initial states (reachable
    states, where guards that uniform states rarely enable hold)."""
    schema = model.schema
    uniform = [tuple(rng.randint(lo, hi) for lo, hi in zip(schema.lo, schema.hi)) for _ in range(count - count // 2)]
    return list(model.initial_states()) + uniform + walk(model, rng, count // 2)


def in_range(schema: Schema, state: State) -> bool:
    return all(lo <= v <= hi for v, lo, hi in zip(state, schema.lo, schema.hi))


def walk(model: Model, rng: random.Random, count: int, *, depth: int = 40) -> list[State]:
    """Up to `count` states met on random walks of the scalar model, each at most `depth`
    steps from an initial state, restarting at a deadlock or when a step raises; a step out of
    a field's range is not taken."""
    stepper = ScalarModel(model)
    starts = model.initial_states()
    met: list[State] = []
    state, steps = (rng.choice(starts) if starts else ()), 0
    for _ in range(2 * count if starts else 0):  # a step or a restart each: bounded
        try:
            nexts = [t for _, t in stepper.successors(state) if in_range(model.schema, t)] if steps < depth else []
        except Exception:  # noqa: BLE001 - the differential check reports it on the states
            nexts = []
        if not nexts:
            state, steps = rng.choice(starts), 0
            continue
        state, steps = rng.choice(nexts), steps + 1
        met.append(state)
        if len(met) == count:
            break
    return met


def differences(model: Model, invariants: Sequence[Invariant], *, rng: random.Random | int = 0,
                count: int = 300, compiled: Kernels | None = None) -> list[Disagreement]:
    """The first disagreement of each action (guard, effect) and invariant, in instance order;
    empty when the three interpretations (four, with `compiled`) agree on every drawn state."""
    return findings(model, invariants, rng=rng, count=count, compiled=compiled)[1]


def report(model: Model, invariants: Sequence[Invariant], *, rng: random.Random | int = 0,
           count: int = 300) -> str:
    """One line for a ContractError: the effects that leave a range, then the disagreements;
    empty when there is neither."""
    leaks, found = findings(model, invariants, rng=rng, count=count)
    parts = [str(leak) for leak in leaks]
    if found:
        parts.append("its interpretations disagree (a Python `is`, a dict or set keyed by a state value?): "
                     + "; ".join(map(str, found)))
    return "; ".join(parts)


def findings(model: Model, invariants: Sequence[Invariant], *, rng: random.Random | int = 0,
             count: int = 300, compiled: Kernels | None = None) -> tuple[list[OutOfRange], list[Disagreement]]:
    """The first effect of each action that leaves a range from a reachable state, and the
    first disagreement of each action (guard, effect) and invariant, in instance order."""
    rng = rng if isinstance(rng, random.Random) else random.Random(rng)
    schema = model.schema
    states = draw(model, rng, count)
    starts = len(model.initial_states())
    uniform = range(starts, starts + count - count // 2)  # the other states are reachable
    ps = probes(model, invariants)
    answers = (scalar(schema, ps, states), vector(schema, ps, states), symbolic(schema, ps, states))
    native = None if compiled is None else compiled.outcomes(states, len(invariants))
    first: dict[tuple[str, str], Disagreement] = {}
    counts: dict[tuple[str, str], int] = {}
    leaks: dict[str, OutOfRange] = {}
    for k, p in enumerate(ps):
        for i, state in enumerate(states):
            s, v, z = (a[k][i] for a in answers)
            if p.part == "effect" and s is None:
                continue  # disabled by the scalar guard: the effect may read out of range
            if p.part == "effect" and isinstance(s, tuple) and not in_range(schema, s):
                if i not in uniform:
                    found = leaks.get(p.family) or _out_of_range(schema, p, state, s)
                    leaks[p.family] = dataclasses.replace(found, count=found.count + (p.family in leaks))
                continue  # the engines never take this step from an unreachable state
            c = s if native is None else native[k][i]
            if _agree(s, v, z) and (c is None or c == s):
                continue
            key = (p.family, p.part)
            counts[key] = counts.get(key, 0) + 1
            if key not in first:
                first[key] = _disagreement(schema, p, state, s, v, z, None if native is None else (c,))
    return list(leaks.values()), [dataclasses.replace(d, count=counts[key]) for key, d in first.items()]


def _out_of_range(schema: Schema, p: Probe, state: State, successor: State) -> OutOfRange:
    j = next(j for j, v in enumerate(successor) if not schema.lo[j] <= v <= schema.hi[j])
    return OutOfRange(p.subject, defined_at(p.fn), schema.element_names()[j], successor[j], schema.lo[j],
                      schema.hi[j], show_state(schema, state), count=1)


def _agree(s: Answer, v: Answer, z: Answer) -> bool:
    if isinstance(s, Failed) or isinstance(z, Failed) or isinstance(v, Failed):
        return False
    return (v is None or v == s) and z == s  # a vector effect is not run where its guard is false


def _disagreement(schema: Schema, p: Probe, state: State, s: Answer, v: Answer, z: Answer,
                  compiled: tuple[Answer] | None = None) -> Disagreement:
    outcomes = (s, v, z, *(compiled or ()))
    if p.part == "effect":
        changed = _changed_positions(state, outcomes)
        shown = [_writes(schema, state, o, changed) for o in outcomes]
    else:
        shown = [repr(o) for o in outcomes]
    return Disagreement(p.subject, p.part, defined_at(p.fn), show_state(schema, state), shown[0], shown[1], shown[2],
                        count=1, compiled=shown[3] if compiled else None)


def _changed_positions(state: State, outcomes: Sequence[Answer]) -> list[int]:
    """Positions where the successors differ; with fewer than two successors, the positions
    the one there is changes."""
    rows = [o for o in outcomes if isinstance(o, tuple)]
    if len(rows) < 2:
        rows.append(state)
    return [j for j in range(len(state)) if len({r[j] for r in rows}) > 1]


def _writes(schema: Schema, state: State, outcome: Answer, positions: list[int]) -> str:
    if outcome is None:
        return "not run (guard false)"
    if not isinstance(outcome, tuple):
        return repr(outcome)
    names = schema.element_names()
    return "{" + ", ".join(f"{names[j]}: {outcome[j]}" for j in positions) + "}"


def show_state(schema: Schema, state: State) -> str:
    """A state field by field: `x=-1 hw=[0, 1]`."""
    return " ".join(f"{f.name}={_plain(schema.value(state, f.name))}" for f in schema.fields)


def _plain(value: Any) -> Any:
    return [_plain(v) for v in value] if isinstance(value, list) else int(value)
