"""A trace as a sequence diagram: lifelines, messages between them, notes of what changed.

Derived from the model contract alone, so it works for every model without code of its own:

- a **lifeline** per entity of `Model.describe`: the part of a key before the first dot
  (`r2.HW` belongs to `r2`, `controller.leader` to `controller`), in the order the model
  describes them; a key that is a replica's name (`r2`) belongs to that replica; other keys
  (`crashes`) belong to no lifeline and are shown with the step that changes them; a model
  that does not override `describe` is described from its schema: an element of a field
  with a replica axis belongs to that replica (`r2.hw`), the others to a lifeline named
  after the model, and with no entity at all the model is the one lifeline;
- a step **involves** the replicas among its action's parameters (parameters shown with
  `replica_name`) and the entities whose fields it changes;
- a step involving two or more lifelines is a **message** from its first replica parameter to
  the others (from a controller-like entity, described before any replica, when only that
  entity changes: the controller elects a replica); a step involving one is a note on it;
- every changed field becomes a line `field old → new` in a **note** over its lifeline, so
  crashes, truncations and HW moves show where they happen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kmc.model.core import NONE, Instance, Model, State, replica_name
from kmc.traces.trace import Trace

ARROW = "→"


@dataclass
class Event:
    step: int
    label: str  # the action with its non-replica parameters
    source: str | None  # a message's sender; None for a step shown as a note only
    targets: list[str]
    notes: dict[str, list[str]] = field(default_factory=dict)  # lifeline -> "field old → new" lines


@dataclass
class Sequence:
    title: str
    participants: list[str]
    events: list[Event]
    invariant: str | None  # violated at the last step, when the trace is a counterexample


def entity_of(key: str, replicas: set[str]) -> str | None:
    if "." in key:
        return key.split(".", 1)[0]
    return key if key in replicas else None


def field_of(key: str, replicas: set[str]) -> str:
    return key.split(".", 1)[1] if "." in key else "state" if key in replicas else key


def _replica_args(inst: Instance) -> list[str]:
    out: list[str] = []
    for p, a in zip(inst.action.params, inst.args):
        if p.show is replica_name and a != NONE and replica_name(a) not in out:
            out.append(replica_name(a))
    return out


def _short_label(inst: Instance) -> str:
    rest = [f"{p.name}={p.show(a)}" for p, a in zip(inst.action.params, inst.args) if p.show is not replica_name]
    return inst.action.name + (f"({', '.join(rest)})" if rest else "")


def from_schema(model: Model, state: State) -> dict[str, str]:
    """A state described by its schema, keyed by lifeline: `r2.hw` for an element of a field
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


def build(trace: Trace) -> Sequence:
    model = trace.model
    replicas = {replica_name(a) for inst in model.instances() for p, a in zip(inst.action.params, inst.args)
                if p.show is replica_name and a != NONE}
    own = type(model).describe is not Model.describe
    described = [model.describe(step.state) if own else from_schema(model, step.state) for step in trace.steps]
    order: list[str] = []
    for d in described:
        for key in d:
            e = entity_of(key, replicas)
            if e is not None and e not in order:
                order.append(e)
    for r in sorted(replicas):
        if r not in order:
            order.append(r)
    if not order:
        order.append(model.name)  # nothing names an entity: the model is the one lifeline
    first_replica = min((order.index(r) for r in replicas if r in order), default=len(order))

    events: list[Event] = []
    used: set[str] = set(r for r in replicas if r in order)
    for k, step in enumerate(trace.steps[1:], start=1):
        inst = step.instance
        assert inst is not None
        before, after = described[k - 1], described[k]
        notes: dict[str, list[str]] = {}
        loose: list[str] = []
        for key in dict.fromkeys([*before, *after]):
            old, new = before.get(key, "-"), after.get(key, "-")
            if old == new:
                continue
            line = f"{field_of(key, replicas)} {old} {ARROW} {new}"
            e = entity_of(key, replicas)
            if e is None:
                loose.append(line)
            else:
                notes.setdefault(e, []).append(line)
        args = [r for r in _replica_args(inst) if r in order]
        involved = args + [e for e in notes if e not in args]
        source: str | None = None
        targets: list[str] = []
        if len(involved) >= 2:
            upstream = [e for e in notes if order.index(e) < first_replica]
            if args and args[0] not in notes and len(notes) == 1 and upstream:
                source, targets = upstream[0], args
            else:
                source, targets = involved[0], involved[1:]
        anchor = source or (involved[0] if involved else order[0])
        if loose:
            notes.setdefault(anchor, []).extend(loose)
        if source is None:
            notes.setdefault(anchor, [])
        used.update(involved)
        used.add(anchor)
        events.append(Event(k, _short_label(inst), source, targets, notes))
    participants = [e for e in order if e in used]
    return Sequence(model.title(), participants, events, trace.invariant)
