"""A trace as a sequence diagram: lanes, the messages between them, notes of what changed.

- The **lanes** are the processes the model declares (`Model.lanes`, kmc/model/lanes.py: the
  controller, b1, b2, ...) that the trace does something on. A model that declares none gets
  a lane per entity group of what it describes (`Model.describe`): the part of a key before
  the first dot (`r2.HW` belongs to `r2`), or a key that is a replica's name (`r2`); a model
  that does not override `describe` is described from its schema (an element of a field with
  a replica axis belongs to that replica, the others to a lane named after the model).
- A step happens on one lane: its declared local event's, else the receiver's of the message
  it receives, else the sender's of the one it sends (undeclared: the first lane whose fields
  it changes, else its first replica parameter's).
- An **arrow** is a declared message only, from its sender's lane at the step that sends it to
  its receiver's lane at the step that receives it (matched first sent, first received, by
  key when it has one); a message no step of the trace sent is drawn at its receipt, one
  still in flight at the end runs to the bottom.
- Every changed field is a line `field old → new` (of a value of several parts, only the
  parts that changed) in a **note** on the lane it belongs to (a field of no lane: on the
  step's lane), so crashes, truncations and HW moves show where they happen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kmc.model.core import NONE, Instance, Model, State, replica_name
from kmc.traces.trace import Trace

ARROW = "→"


@dataclass
class Event:
    step: int
    label: str  # the action with its parameters
    lane: str  # where it happens
    notes: dict[str, list[str]] = field(default_factory=dict)  # lane -> "field old → new" lines


@dataclass
class Arrow:
    """A message from lane `source` at step `sent` to lane `target` at step `received`
    (None: sent before the trace, or still in flight at its end)."""

    message: str
    source: str
    target: str
    sent: int | None
    received: int | None


@dataclass
class Sequence:
    title: str
    participants: list[str]
    events: list[Event]
    arrows: list[Arrow]
    invariant: str | None  # violated at the last step, when the trace is a counterexample


def lane_of(key: str, lanes: set[str]) -> str | None:
    head = key.split(".", 1)[0]
    return head if head in lanes else None


def field_of(key: str, lanes: set[str]) -> str:
    if key in lanes:
        return "state"
    return key.split(".", 1)[1] if lane_of(key, lanes) is not None else key


def from_schema(model: Model, state: State) -> dict[str, str]:
    """A state described by its schema, keyed by lane: `r2.hw` for an element of a field
    with a replica axis, `MODEL.field[i]` for the others; replica ids shown as r1, r2, ..."""
    out: dict[str, str] = {}
    for f in model.schema.fields:
        for pos, idx in model.schema.positions(f.name):
            shown = replica_name(state[pos]) if f.holds_replica else str(state[pos])
            if f.replica_axes:
                axis = f.replica_axes[0]
                rest = "".join(f"[{i}]" for a, i in enumerate(idx) if a != axis)
                out[f"{replica_name(idx[axis])}.{f.name}{rest}"] = shown
            else:
                out[f"{model.name}.{f.name}" + "".join(f"[{i}]" for i in idx)] = shown
    return out


def described(trace: Trace) -> list[dict[str, str]]:
    model = trace.model
    own = type(model).describe is not Model.describe
    return [model.describe(step.state) if own else from_schema(model, step.state) for step in trace.steps]


def _replicas(inst: Instance) -> list[str]:
    return [replica_name(a) for p, a in zip(inst.action.params, inst.args) if p.show is replica_name and a != NONE]


def _entity_lanes(model: Model, states: list[dict[str, str]]) -> list[str]:
    """An undeclared model's lanes: its entity groups, in the order it describes them."""
    replicas = {r for inst in model.instances() for r in _replicas(inst)}
    order: list[str] = []
    for d in states:
        for key in d:
            e = key.split(".", 1)[0] if "." in key else key if key in replicas else None
            if e is not None and e not in order:
                order.append(e)
    order += sorted(r for r in replicas if r not in order)
    return order or [model.name]  # nothing names an entity: the model is the one lane


def _parts(value: str) -> list[str]:
    """A described value split at its top-level ", " (not inside brackets or braces)."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(value):
        depth += (c in "([{") - (c in ")]}")
        if depth == 0 and value.startswith(", ", i):
            parts.append(value[start:i])
            start = i + 2
    return [*parts, value[start:]]


def changed(old: str, new: str) -> str:
    """`old → new`, or for values of several parts only the parts that changed, each after
    the words it shares with its old self: `RUNNING, epoch 1, metadata 1/1` to `RUNNING,
    epoch 1, metadata 1/2` is `metadata 1/1 → 1/2`."""
    a, b = _parts(old), _parts(new)
    if len(a) != len(b) or len(a) < 2:
        return f"{old} {ARROW} {new}"
    shown = []
    for x, y in zip(a, b):
        if x == y:
            continue
        xs, ys = x.split(" "), y.split(" ")
        n = 0
        while n < min(len(xs), len(ys)) - 1 and xs[n] == ys[n]:
            n += 1
        shown.append(" ".join([*xs[:n], " ".join(xs[n:]), ARROW, " ".join(ys[n:])]))
    return ", ".join(shown)


def _changes(before: dict[str, str], after: dict[str, str], lanes: set[str]) -> tuple[dict[str, list[str]], list[str]]:
    notes: dict[str, list[str]] = {}
    loose: list[str] = []
    for key in dict.fromkeys([*before, *after]):
        old, new = before.get(key, "-"), after.get(key, "-")
        if old == new:
            continue
        line = f"{field_of(key, lanes)} {changed(old, new)}"
        e = lane_of(key, lanes)
        if e is None:
            loose.append(line)
        else:
            notes.setdefault(e, []).append(line)
    return notes, loose


def build(trace: Trace) -> Sequence:
    model = trace.model
    states = described(trace)
    declared = model.lanes
    order = declared.order(model) if declared is not None else _entity_lanes(model, states)
    lanes = set(order)
    events: list[Event] = []
    arrows: list[Arrow] = []
    in_flight: list[Arrow] = []
    for k, step in enumerate(trace.steps[1:], start=1):
        inst = step.instance
        assert inst is not None
        notes, loose = _changes(states[k - 1], states[k], lanes)
        home: str | None
        if declared is not None:
            moves = declared.moves(model, inst.action, inst.args)
            for name, src, dsts in moves.sends:
                for dst in dsts:
                    arrows.append(Arrow(name, src, dst, k, None))
                    in_flight.append(arrows[-1])
            for name, srcs, dst in moves.receives:
                match = next((a for a in in_flight if a.message == name and a.target == dst and a.source in srcs),
                             None)
                if match is None:
                    arrows.append(Arrow(name, srcs[0], dst, None, k))
                else:
                    match.received = k
                    in_flight.remove(match)
            home = moves.home
        else:
            home = None
        home = home or next(iter(notes), None) or next((r for r in _replicas(inst) if r in lanes), order[0])
        notes = {home: notes.pop(home, []) + loose, **notes}
        events.append(Event(k, inst.label, home, notes))
    used = {e for ev in events for e in ev.notes} | {a.source for a in arrows} | {a.target for a in arrows}
    participants = [e for e in order if e in used]  # a process nothing happens on is left out
    return Sequence(model.title(), participants, events, arrows, trace.invariant)
