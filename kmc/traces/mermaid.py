"""A trace as a Mermaid sequence diagram (kmc/traces/sequence.py says what becomes what).
Mermaid draws arrows level, so a message is drawn when it is received, its label naming the
step that sent it; one still in flight at the end is drawn dashed at the step that sent it."""

from __future__ import annotations

from kmc.traces.sequence import Arrow, Sequence, build
from kmc.traces.trace import Trace


def _text(s: str) -> str:
    """Mermaid message and note text: `#` and `;` are entity and statement syntax there."""
    return s.translate({ord("#"): "#35;", ord(";"): "#59;"})


def _sent(a: Arrow) -> str:
    return "" if a.sent is None or a.sent == a.received else f" (sent at {a.sent})"


def render_sequence(seq: Sequence) -> str:
    ids = {p: f"p{k}" for k, p in enumerate(seq.participants)}
    lines = ["sequenceDiagram", f"    title {_text(seq.title)}"]
    lines += [f"    participant {ids[p]} as {_text(p)}" for p in seq.participants]
    for ev in seq.events:
        for a in seq.arrows:
            if a.received == ev.step:
                lines.append(f"    {ids[a.source]}->>{ids[a.target]}: {_text(a.message + _sent(a))}")
        for who, changes in ev.notes.items():
            body = [f"{ev.step}. {ev.label}", *changes] if who == ev.lane else changes
            if body:
                lines.append(f"    Note over {ids[who]}: {'<br/>'.join(_text(c) for c in body)}")
        for a in seq.arrows:
            if a.sent == ev.step and a.received is None:
                lines.append(f"    {ids[a.source]}--){ids[a.target]}: {_text(a.message)} (in flight)")
    if seq.invariant:
        span = ids[seq.participants[0]] + ("," + ids[seq.participants[-1]] if len(seq.participants) > 1 else "")
        lines.append(f"    Note over {span}: {_text(seq.invariant)} is violated")
    return "\n".join(lines) + "\n"


def render(trace: Trace) -> str:
    return render_sequence(build(trace))
