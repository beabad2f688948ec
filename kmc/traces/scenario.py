"""Scripted runs: a sequence of actions by name and parameters, played through the model.

A step is written `action(arg, name=value, ...)`: positional arguments fill the action's
parameters in order, replicas are named r1, r2, ... (or `none`), records m0, m1, ...
Parameters left out are inferred when exactly one enabled binding matches. A step that is
not enabled stops the run with an error naming the step and what was enabled instead.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from kmc.semantics.scalar import ScalarModel
from kmc.errors import BadInput
from kmc.model.core import Instance, Model
from kmc.traces.trace import Step, Trace

_STEP = re.compile(r"^\s*([a-z_]+)\s*(?:\((.*)\))?\s*$")


class ScenarioError(BadInput):
    """A scenario step that is malformed, unknown, ambiguous or not enabled."""


def parse_step(text: str) -> tuple[str, list[str], dict[str, str]]:
    match = _STEP.match(text)
    if not match:
        raise ScenarioError(f"malformed step {text!r}; write action(arg, name=value)")
    name, inside = match.group(1), match.group(2) or ""
    positional: list[str] = []
    named: dict[str, str] = {}
    for part in [p.strip() for p in inside.split(",") if p.strip()]:
        if "=" in part:
            key, value = (x.strip() for x in part.split("=", 1))
            named[key] = value
        elif named:
            raise ScenarioError(f"step {text!r}: positional argument {part!r} after a named one")
        else:
            positional.append(part)
    return name, positional, named


def _matches(inst: Instance, positional: list[str], named: dict[str, str]) -> bool:
    params = inst.action.params
    if len(positional) > len(params):
        return False
    for p, want in zip(params, positional):
        if p.show(inst.args[params.index(p)]) != want:
            return False
    names = {p.name for p in params}
    for key, want in named.items():
        if key not in names:
            return False
        k = [p.name for p in params].index(key)
        if params[k].show(inst.args[k]) != want:
            return False
    return True


def run_scenario(model: Model, steps: Sequence[str]) -> Trace:
    """Play `steps` from the model's (single) initial state; the Trace of every state."""
    sm = ScalarModel(model)
    inits = model.initial_states()
    if len(inits) != 1:
        raise ScenarioError(f"model {model.name} has {len(inits)} initial states; scenarios need one")
    trace = [Step(None, inits[0])]
    actions = {a.name for a in model.actions()}
    for number, text in enumerate(steps, start=1):
        name, positional, named = parse_step(text)
        if name not in actions:
            raise ScenarioError(f"step {number} {text!r}: unknown action {name!r}; allowed: {', '.join(sorted(actions))}")
        state = trace[-1].state
        candidates = [i for i in sm.instances if i.action.name == name and _matches(i, positional, named)]
        enabled = [(i, nxt) for i in candidates if (nxt := sm.step(state, i)) is not None]
        if not enabled:
            others = [i.label for i in sm.instances if sm.step(state, i) is not None]
            raise ScenarioError(f"step {number} {text!r} is not enabled; enabled: {', '.join(others) or 'nothing'}")
        if len({nxt for _, nxt in enabled}) > 1:
            raise ScenarioError(
                f"step {number} {text!r} is ambiguous: {', '.join(i.label for i, _ in enabled)}; name more parameters"
            )
        inst, nxt = enabled[0]
        trace.append(Step(inst, nxt))
    return Trace(model, trace)


def columns_that_change(trace: Trace) -> list[str]:
    """The described fields whose value differs somewhere along the trace, in model order."""
    described = [trace.model.describe(s.state) for s in trace.steps]
    keys = list(dict.fromkeys(k for d in described for k in d))
    return [k for k in keys if len({d.get(k, "-") for d in described}) > 1]


def table(trace: Trace, columns: Sequence[str]) -> list[dict[str, Any]]:
    """One row per state: the step's label, then each column's described value ('-' when absent)."""
    rows = []
    for k, step in enumerate(trace.steps):
        d = trace.model.describe(step.state)
        row: dict[str, Any] = {"step": k, "action": "initial" if step.instance is None else step.instance.label}
        row.update({c: d.get(c, "-") for c in columns})
        rows.append(row)
    return rows
