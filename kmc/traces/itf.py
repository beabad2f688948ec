"""Traces as JSON in the Informal Trace Format (ITF) read by TLA+ and Apalache tooling.

Each state holds every field of the model's schema by name (arrays as JSON lists); the
"#meta" of each state names the step that led to it. The top-level "#meta" records the model
and its settings, so a saved trace can be replayed and re-rendered later.
"""

from __future__ import annotations

import json
from typing import Any

from kmc.traces.trace import Trace


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
            "settings": dict(model.settings),
            "invariant": trace.invariant,
            "length": trace.length,
        },
        "vars": [f.name for f in schema.fields],
        "states": states,
    }


def dumps(trace: Trace) -> str:
    return json.dumps(to_itf(trace), indent=1)
