"""A sequence diagram (kmc/traces/sequence.py) drawn as inline SVG: a lane per process, per
step a band with its notes (wrapped, never cut off), a message as an arrow from its sender at
the step that sends it to its receiver at the step that receives it, a lasso's cycle as a
bracket on the left, the violated invariant in red at the bottom. Each step's band is a
`<g class="event" data-step="k">` the page's script selects."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from html import escape

from kmc.traces.sequence import Sequence

CHAR = 6.7  # width of a character of the 11 px monospace font, in px
LINE = 14
COL = 290  # a lane's width (two traces side by side: NARROW)
NARROW = 236
LASSO = 56  # the margin left of the first lane for a lasso's bracket (else 24)
TOP = 56


def wrap(line: str, width: float) -> list[str]:
    """A note's line broken to fit `width` px, continuation lines indented."""
    n = max(int((width - 12) / CHAR), 8)
    return textwrap.wrap(line, n, subsequent_indent="  ", break_on_hyphens=False) or [""]


@dataclass
class _Band:
    top: float
    bottom: float
    anchor: dict[str, float]  # lane -> y where its note ends (a message sent there leaves from it)


def _note(x: float, y: float, width: float, lines: list[str], bold: int, cls: str) -> tuple[str, float]:
    wrapped = [(i < bold, w) for i, line in enumerate(lines) for w in wrap(line, width)]
    h = 8 + LINE * len(wrapped)
    parts = [f'<g class="n"><rect class="{cls}" x="{x:.1f}" y="{y:.1f}" width="{width}" height="{h}" rx="3"/>']
    for i, (strong, text) in enumerate(wrapped):
        weight = ' font-weight="bold"' if strong else ""
        parts.append(f'<text x="{x + 6:.1f}" y="{y + LINE * (i + 1):.1f}"{weight}>{escape(text)}</text>')
    return "".join(parts) + "</g>", h


def render(seq: Sequence, *, loop: int | None = None, stutters: bool = False, facts: list[str] | None = None,
           col: int = COL) -> str:
    left = LASSO if loop is not None else 24
    x_of = {p: left + col / 2 + i * col for i, p in enumerate(seq.participants)}
    width = left + col * len(seq.participants) + 12
    received = {a.received for a in seq.arrows if a.received is not None}
    body: list[str] = []
    bands: dict[int, _Band] = {}
    y = float(TOP)
    for ev in seq.events:
        top = y
        y += 16 if ev.step in received else 4  # room for an arrow coming in
        body.append(f'<g class="event" data-step="{ev.step}" data-lane="{escape(ev.lane)}">')
        tallest, anchor = 0.0, {}
        for who, lines in ev.notes.items():
            shown = [f"{ev.step}. {ev.label}", *lines] if who == ev.lane else lines
            if not shown:
                continue
            note, h = _note(x_of[who] - col / 2 + 6, y, col - 12, shown, 1 if who == ev.lane else 0,
                            "note home" if who == ev.lane else "note")
            body.append(note)
            tallest = max(tallest, h)
            anchor[who] = y + h
        body.append("</g>")
        y += tallest + 14
        bands[ev.step] = _Band(top, y, anchor)
    end = y
    for a in seq.arrows:
        x1, x2 = x_of[a.source], x_of[a.target]
        if a.sent is None or a.sent == a.received:  # drawn level at its receipt
            y1 = y2 = bands[a.received].top + 12 if a.received is not None else end
        else:
            sent = bands[a.sent]
            y1 = sent.anchor.get(a.source, sent.bottom - 14) + 2
            y2 = bands[a.received].top + 14 if a.received is not None else end + 8
        dash = ' stroke-dasharray="5 4"' if a.received is None else ""
        mx, my = x1 + (x2 - x1) * 0.3, y1 + (y2 - y1) * 0.3 - 4
        flight = " (in flight)" if a.received is None else ""
        body.append(f'<g class="msg" data-sent="{a.sent if a.sent is not None else ""}" '
                    f'data-received="{a.received if a.received is not None else ""}">'
                    f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"{dash} marker-end="url(#arrow)"/>'
                    f'<text x="{mx:.1f}" y="{my:.1f}" text-anchor="middle">{escape(a.message + flight)}</text></g>')
    y = end + (16 if any(a.received is None for a in seq.arrows) else 0)
    if loop is not None and seq.events:
        y = _lasso(body, bands, loop, stutters, facts or [], y, width)
    if seq.invariant:
        lines = [f"{seq.invariant} is violated"]
        note, h = _note_wide(left - 16, y + 4, width - left + 4, lines, "violation")
        body.append(f'<g id="violation">{note}</g>')
        y += h + 12
    height = y + 16
    head = []
    for p, x in x_of.items():
        head.append(f'<line class="life" x1="{x:.1f}" y1="38" x2="{x:.1f}" y2="{height - 8:.1f}"/>')
        head.append(f'<rect class="actor" x="{x - col / 2 + 10:.1f}" y="10" width="{col - 20:.1f}" height="28" rx="4"/>')
        head.append(f'<text class="actor" x="{x:.1f}" y="29" text-anchor="middle">{escape(p)}</text>')
    defs = ('<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" '
            'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>')
    return (f'<svg class="diagram" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="11">'
            + defs + "".join(head) + "".join(body) + "</svg>")


def _note_wide(x: float, y: float, w: float, lines: list[str], cls: str) -> tuple[str, float]:
    n = max(int((w - 12) / CHAR), 8)
    wrapped = [part for line in lines for part in textwrap.wrap(line, n) or [""]]
    h = 8 + LINE * len(wrapped)
    out = [f'<g class="n"><rect class="{cls}" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h}" rx="3"/>']
    out += [f'<text x="{x + 6:.1f}" y="{y + LINE * (i + 1):.1f}">{escape(t)}</text>' for i, t in enumerate(wrapped)]
    return "".join(out) + "</g>", h


def _lasso(body: list[str], bands: dict[int, _Band], loop: int, stutters: bool, facts: list[str], y: float,
           width: float) -> float:
    """The cycle: a bracket left of the lanes over its steps, an arrow back to where it starts,
    and its fairness facts below the diagram."""
    last = max(bands)
    first = last if stutters else loop + 1
    top, bottom = bands[first].top + 4, bands[last].bottom - 8
    cycle = (f"the run stutters at step {last} for ever" if stutters
             else f"steps {first} to {last} go round, back to the state of step {loop}")
    body.append(f'<g class="loop"><path d="M{LASSO - 8},{bottom:.1f} H{LASSO - 30} V{top:.1f} H{LASSO - 8}" '
                f'fill="none" marker-end="url(#arrow)"/><text x="{LASSO - 46}" y="{top + 4:.1f}">↺</text></g>')
    lines = [f"↺ The cycle: {cycle}.", "Fairness on the cycle:", *facts]
    note, h = _note_wide(LASSO - 40, y + 4, width - LASSO + 28, lines, "facts")
    body.append(f'<g class="facts">{note}</g>')
    return y + h + 12
