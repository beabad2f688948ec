"""A trace as a Graphviz DOT graph: a node per state (the fields its step changed), an edge
per step (the action); the violating state is drawn red."""

from __future__ import annotations

from kmc.traces.trace import Trace


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(trace: Trace) -> str:
    model = trace.model
    described = [model.describe(step.state) for step in trace.steps]
    lines = [
        "digraph trace {",
        f"  label={_q(model.title() + (f' -- {trace.invariant} violated' if trace.invariant else ''))};",
        "  labelloc=t; rankdir=TB;",
        '  node [shape=box, fontname="monospace", fontsize=10];',
        '  edge [fontname="monospace", fontsize=10];',
    ]
    for k, d in enumerate(described):
        if k == 0:
            body = ["initial"]
        else:
            before = described[k - 1]
            body = [f"state {k}"] + [f"{key}: {before.get(key, '-')} -> {v}" for key, v in d.items()
                                     if before.get(key, "-") != v]
        last = k == len(described) - 1 and trace.invariant
        style = ', color=red, fontcolor=red, penwidth=2' if last else ""
        lines.append(f"  s{k} [label={_q(chr(10).join(body))}{style}];")
    for k, step in enumerate(trace.steps[1:], start=1):
        assert step.instance is not None
        lines.append(f"  s{k - 1} -> s{k} [label={_q(step.instance.label)}];")
    lines.append("}")
    return "\n".join(lines).replace("\\n", "\\n") + "\n"
