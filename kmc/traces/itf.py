"""Traces as JSON in the Informal Trace Format (ITF) read by TLA+ and Apalache tooling.

Each state holds every field of the model's schema by name (arrays as JSON lists); the
"#meta" of each state names the step that led to it. A lasso (a liveness counterexample) has
ITF's "loop": the index of the state its last state equals (its own index when it stutters). The top-level "#meta" records the model
and its settings, so a saved trace can be read back (`loads`), replayed and re-rendered later.
Its "model_source" says where the model came from (a name, or a file and class): a hint for
the reader, who loads a model it trusts (`kmc trace` imports no file a trace names).
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Callable

from kmc.errors import BadInput
from kmc.model.core import Model
from kmc.traces import itf_shape
from kmc.traces.trace import Step, Trace


def to_itf(trace: Trace) -> dict[str, Any]:
    model = trace.model
    schema = model.schema
    states = []
    for k, step in enumerate(trace.steps):
        state: dict[str, Any] = {
            "#meta": {
                "index": k,
                "action": "init" if step.instance is None else step.instance.action.name,
                "params": {} if step.instance is None else step.instance.named_args(),
                "label": "init" if step.instance is None else step.instance.label,
            }
        }
        for f in schema.fields:
            state[f.name] = schema.value(step.state, f.name)
        states.append(state)
    return {
        "#meta": {
            "format": "ITF",
            "source": "kmc",
            "model": model.name,
            "model_source": model_source(model),
            "settings": dict(model.settings),
            "invariant": trace.invariant,
            "length": trace.length,
        },
        "vars": [f.name for f in schema.fields],
        "states": states,
        # a lasso (a liveness counterexample): ITF's loop index, the state the last step returns to
        **({"loop": trace.loop} if trace.loop is not None else {}),
    }


def model_source(model: Model) -> str:
    """Where the trace's model came from: kmc's own by name, any other by its file and class
    (`kmc trace` names that file in its hint to pass it with --model)."""
    cls = type(model)
    if cls.__module__.split(".")[0] == "kmc":
        return model.name
    return f"{inspect.getfile(cls)}:{cls.__qualname__}"


def dumps(trace: Trace) -> str:
    return json.dumps(to_itf(trace), indent=1)


def from_itf(data: Any, build: Callable[[str, dict[str, Any]], Model], source: str = "trace") -> Trace:
    """The Trace an ITF document written by `to_itf` describes. `build(source, settings)` makes
    the model from what the document says it was written from (its model_source, else its
    model's name): the caller decides what to trust, and imports no file named there. Raises
    BadInput naming what is wrong; the caller replays the trace and checks its claim."""
    try:
        meta = data["#meta"]
        model = build(meta.get("model_source") or meta["model"], dict(meta.get("settings", {})))
        states = data["states"]
    except (KeyError, TypeError) as e:
        raise BadInput(f"{source}: not an ITF trace written by kmc (missing {e})")
    by_call = {(i.action.name, tuple(sorted(i.named_args().items()))): i for i in model.instances()}
    steps: list[Step] = []
    for k, raw in enumerate(states):
        try:
            fields = {f.name: raw[f.name] for f in model.schema.fields}
            state = model.schema.state(**fields)
            step_meta = raw.get("#meta", {})
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise BadInput(f"{source}: state {k} does not fit model {model.name}: {e}")
        if k == 0:
            steps.append(Step(None, state))
            continue
        call = (step_meta.get("action"), tuple(sorted((step_meta.get("params") or {}).items())))
        inst = by_call.get(call)
        if inst is None:
            raise BadInput(f"{source}: state {k}: no action {step_meta.get('label', call[0])!r} in model {model.name}")
        steps.append(Step(inst, state))
    if not steps:
        raise BadInput(f"{source}: the trace has no states")
    loop = data.get("loop")
    if loop is not None and not (isinstance(loop, int) and 0 <= loop < len(steps)):
        raise BadInput(f"{source}: loop {loop!r} is not the index of one of its {len(steps)} states")
    return Trace(model, steps, meta.get("invariant"), loop=loop)


def loads(text: str, build: Callable[[str, dict[str, Any]], Model], source: str = "trace") -> Trace:
    data = itf_shape.check(itf_shape.parse(text, source), source)
    return from_itf(data, build, source)
