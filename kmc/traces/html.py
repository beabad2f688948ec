"""A trace as one self-contained HTML page: the sequence diagram drawn as inline SVG (no
script or font fetched from anywhere), next to a step-by-step table of the fields that
change, with the violated invariant highlighted. Clicking a step in the table or in the
diagram highlights it in both; a few lines of inline script do that, and nothing else
depends on them."""

from __future__ import annotations

from html import escape

from kmc.traces.scenario import columns_that_change, table
from kmc.traces.sequence import Event, Sequence, build
from kmc.traces.trace import Trace

CHAR = 6.7  # width of a character of the 11 px monospace font, in px
LINE = 14
MIN_COL, MAX_COL = 150, 330


def _fit(text: str, width: float) -> str:
    n = int((width - 14) / CHAR)
    return text if len(text) <= n else text[: max(n - 1, 1)] + "…"


def _note(x: float, y: float, width: float, lines: list[str], first_bold: bool, cls: str = "note") -> tuple[str, float]:
    h = 8 + LINE * len(lines)
    parts = [f'<rect class="{cls}" x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{h}" rx="3"/>']
    for i, line in enumerate(lines):
        weight = ' font-weight="bold"' if first_bold and i == 0 else ""
        parts.append(f'<text x="{x + 6:.1f}" y="{y + 4 + LINE * (i + 1) - 3:.1f}"{weight}>{escape(_fit(line, width))}</text>')
    return "".join(parts), h


def svg(seq: Sequence) -> str:
    longest = max([len(line) for ev in seq.events for lines in ev.notes.values() for line in lines]
                  + [len(f"{ev.step}. {ev.label}") for ev in seq.events] + [10])
    col = max(MIN_COL, min(MAX_COL, longest * CHAR + 24))
    x_of = {p: 20 + col / 2 + i * col for i, p in enumerate(seq.participants)}
    width = 40 + col * len(seq.participants)
    body: list[str] = []
    y = 56.0
    for ev in seq.events:
        body.append(f'<g class="event" id="ev-{ev.step}" data-step="{ev.step}">')
        y = _event(body, ev, x_of, col, y)
        body.append("</g>")
    if seq.invariant:
        note, h = _note(24, y + 4, width - 48, [f"{seq.invariant} is violated"], True, "violation")
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
    return (f'<svg id="diagram" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="11">'
            + defs + "".join(head) + "".join(body) + "</svg>")


def _event(out: list[str], ev: Event, x_of: dict[str, float], col: float, y: float) -> float:
    if ev.source is not None:
        x1 = x_of[ev.source]
        for t in ev.targets:
            x2 = x_of[t]
            out.append(f'<line class="msg" x1="{x1:.1f}" y1="{y + 14:.1f}" x2="{x2:.1f}" y2="{y + 14:.1f}" '
                       'marker-end="url(#arrow)"/>')
        mid = (x1 + x_of[ev.targets[0]]) / 2
        out.append(f'<text class="msg" x="{mid:.1f}" y="{y + 9:.1f}" text-anchor="middle">'
                   f'{escape(f"{ev.step}. {ev.label}")}</text>')
        y += 22
    tallest = 0.0
    for who, lines in ev.notes.items():
        shown = lines if ev.source is not None else [f"{ev.step}. {ev.label}", *lines]
        if not shown:
            continue
        note, h = _note(x_of[who] - col / 2 + 6, y + 2, col - 12, shown, ev.source is None)
        out.append(note)
        tallest = max(tallest, h)
    return y + tallest + 10


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 16px; color: #1d2330; background: #fff; }
h1 { font-size: 18px; margin: 0 0 4px 0; }
p.settings { font-family: monospace; color: #555; margin: 0 0 10px 0; }
div.banner { background: #fde2e1; border: 1px solid #d93025; color: #8c1d18; padding: 8px 12px;
             border-radius: 4px; margin-bottom: 12px; }
div.banner.report { background: #fff4d6; border-color: #c98a00; color: #6b4a00; }
div.panes { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
div.pane { overflow: auto; max-width: 100%; }
svg rect.actor { fill: #e8eefc; stroke: #3b5bdb; }
svg text.actor { font-weight: bold; }
svg line.life { stroke: #9aa5b8; stroke-dasharray: 4 3; }
svg line.msg { stroke: #1d2330; stroke-width: 1.3; }
svg rect.note { fill: #fff8c5; stroke: #c9b458; }
svg rect.violation { fill: #fde2e1; stroke: #d93025; stroke-width: 1.5; }
svg g.event.on rect.note { fill: #cfe8ff; stroke: #3b5bdb; }
svg g.event { cursor: pointer; }
table { border-collapse: collapse; font-family: monospace; font-size: 12px; }
th, td { border: 1px solid #d0d5dd; padding: 3px 6px; text-align: left; white-space: nowrap; }
th { background: #f2f4f7; position: sticky; top: 0; }
td.chg { background: #fff8c5; font-weight: bold; }
tr.bad td { background: #fde2e1; }
tr.bad td.chg { background: #f9c0bc; }
tr.on td { outline: 2px solid #3b5bdb; }
tr.loop td { border-left: 3px solid #7048e8; background: #f3f0ff; }
tr.loop-start td:first-child::after { content: " \21BA"; color: #7048e8; }
tr.back td:first-child::after { content: " \2192 loop"; color: #7048e8; }
tr { cursor: pointer; }
"""

_SCRIPT = """
(function () {
  function select(step) {
    document.querySelectorAll('.on').forEach(function (e) { e.classList.remove('on'); });
    var row = document.getElementById('step-' + step), ev = document.getElementById('ev-' + step);
    if (row) row.classList.add('on');
    if (ev) { ev.classList.add('on'); }
  }
  document.querySelectorAll('tr[data-step]').forEach(function (tr) {
    tr.addEventListener('click', function () { select(tr.dataset.step); });
  });
  document.querySelectorAll('g.event').forEach(function (g) {
    g.addEventListener('click', function () { select(g.dataset.step); });
  });
  document.body.dataset.rendered = document.querySelectorAll('g.event').length + ' events, '
    + document.querySelectorAll('tr[data-step]').length + ' rows';
})();
"""


def render(trace: Trace, doc: str = "", *, report: bool = False) -> str:
    seq = build(trace)
    model = trace.model
    columns = columns_that_change(trace)
    rows = table(trace, columns)
    what = "Example" if report else "Counterexample"
    title = f"{what}: {trace.invariant}" if trace.invariant else f"Trace of {model.name}"
    banner = ""
    if trace.loop is not None:
        cycle = ("stutters there for ever" if trace.stutters
                 else f"steps {trace.loop + 1} to {trace.length} go round, back to step {trace.loop}")
        banner = (f'<div class="banner" id="invariant"><b>{escape(f"Property {trace.invariant} is violated")}</b>'
                  f' by a lasso: {trace.loop} steps to step {trace.loop}, then the cycle {cycle}'
                  + (f": {escape(doc)}" if doc else "") + "</div>")
    elif trace.invariant:
        verb = "Availability report {} fails" if report else "Invariant {} is violated"
        banner = (f'<div class="banner{" report" if report else ""}" id="invariant"><b>'
                  f'{escape(verb.format(trace.invariant))}</b> at step {trace.length}'
                  + (f": {escape(doc)}" if doc else "") + "</div>")
    head = "<tr><th>#</th><th>step</th>" + "".join(f"<th>{escape(c)}</th>" for c in columns) + "</tr>"
    body = []
    prev: dict[str, object] | None = None
    for k, row in enumerate(rows):
        bad = ' class="bad"' if trace.invariant and trace.loop is None and k == len(rows) - 1 else ""
        if trace.loop is not None and k >= trace.loop:
            marks = ["loop"] + (["loop-start"] if k == trace.loop else []) + (
                ["back"] if k == len(rows) - 1 and not trace.stutters else [])
            bad = f' class="{" ".join(marks)}"'

        cells = []
        for c in columns:
            changed = prev is not None and row[c] != prev[c]
            cells.append(f'<td{" class=chg" if changed else ""}>{escape(str(row[c]))}</td>')
        body.append(f'<tr id="step-{k}" data-step="{k}"{bad}><td>{k}</td><td>{escape(str(row["action"]))}</td>'
                    + "".join(cells) + "</tr>")
        prev = row
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>kmc: {escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{escape(title)} ({trace.length} steps)</h1>"
        f'<p class="settings">{escape(model.title())}</p>{banner}'
        '<div class="panes">'
        f'<div class="pane" id="sequence">{svg(seq)}</div>'
        f'<div class="pane"><table id="steps"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table></div>'
        f"</div><script>{_SCRIPT}</script></body></html>\n"
    )
