"""A trace as a Mermaid sequence diagram (kmc/traces/sequence.py says what becomes what)."""

from __future__ import annotations

from kmc.traces.sequence import Sequence, build
from kmc.traces.trace import Trace


def _text(s: str) -> str:
    """Mermaid message and note text: `#` and `;` are entity and statement syntax there."""
    return s.replace("#", "#35;").replace(";", "#59;")


def render_sequence(seq: Sequence) -> str:
    ids = {p: f"p{k}" for k, p in enumerate(seq.participants)}
    lines = ["sequenceDiagram", f"    title {_text(seq.title)}"]
    lines += [f"    participant {ids[p]} as {_text(p)}" for p in seq.participants]
    for ev in seq.events:
        label = _text(f"{ev.step}. {ev.label}")
        if ev.source is not None:
            for t in ev.targets:
                lines.append(f"    {ids[ev.source]}->>{ids[t]}: {label}")
        for who, changes in ev.notes.items():
            body = changes if ev.source is not None else [f"{ev.step}. {ev.label}", *changes]
            if body:
                lines.append(f"    Note over {ids[who]}: {'<br/>'.join(_text(c) for c in body)}")
    if seq.invariant:
        span = ids[seq.participants[0]] + ("," + ids[seq.participants[-1]] if len(seq.participants) > 1 else "")
        lines.append(f"    Note over {span}: {_text(seq.invariant)} is violated")
    return "\n".join(lines) + "\n"


def render(trace: Trace) -> str:
    return render_sequence(build(trace))
