"""A trace as one self-contained HTML page a person reads: the sequence diagram
(kmc/traces/svg.py), a bar to step through it (keys, buttons) and filter the fields, the
selected step's whole state with the fields it changed, and the step table; two traces side
by side when given two. The page's style and script are kmc/traces/page/trace.css and
trace.js, inlined: it fetches nothing, so it can be attached to a ticket or a CI run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from importlib import resources

from kmc.traces import svg
from kmc.traces.sequence import build, changed, described
from kmc.traces.trace import Trace


@dataclass(frozen=True)
class Shown:
    """A trace as the page shows it: the violated invariant's doc, whether it is an
    availability report, and a lasso's fairness facts."""

    trace: Trace
    doc: str = ""
    report: bool = False
    facts: tuple[str, ...] = ()


def _asset(name: str) -> str:
    return (resources.files("kmc.traces") / "page" / name).read_text(encoding="utf-8")


def _title(s: Shown) -> str:
    trace = s.trace
    what = "Example" if s.report else "Counterexample"
    return f"{what}: {trace.invariant}" if trace.invariant else f"Trace of {trace.model.name}"


def _banner(s: Shown) -> str:
    trace, doc = s.trace, s.doc
    if trace.loop is not None:
        cycle = ("stutters there for ever" if trace.stutters
                 else f"steps {trace.loop + 1} to {trace.length} go round, back to step {trace.loop}")
        facts = "".join(f"<li>{escape(f)}</li>" for f in s.facts)
        return (f'<div class="banner"><b>{escape(f"Property {trace.invariant} is violated")}</b>'
                f" by a lasso: {trace.loop} steps to step {trace.loop}, then the cycle {cycle}"
                + (f": {escape(doc)}" if doc else "") + (f"<ul>{facts}</ul>" if facts else "") + "</div>")
    if trace.invariant:
        verb = "Availability report {} fails" if s.report else "Invariant {} is violated"
        return (f'<div class="banner{" report" if s.report else ""}"><b>'
                f'{escape(verb.format(trace.invariant))}</b> at step {trace.length}'
                + (f": {escape(doc)}" if doc else "") + "</div>")
    return ""


def _steps(trace: Trace, states: list[dict[str, str]], labels: list[str]) -> str:
    """The step table: per step its action and the fields it changed, as the diagram's notes
    show them (each a `data-key` the filter hides), the violating step red, a lasso's cycle marked."""
    rows = []
    for k, label in enumerate(labels):
        marks = []
        if trace.invariant and trace.loop is None and k == trace.length:
            marks.append("bad")
        if trace.loop is not None and k >= trace.loop:
            marks += ["loop"] + (["loop-start"] if k == trace.loop else []) + (
                ["back"] if k == trace.length and not trace.stutters else [])
        changes = []
        if k > 0:
            before, after = states[k - 1], states[k]
            for key in dict.fromkeys([*before, *after]):
                old, new = before.get(key, "-"), after.get(key, "-")
                if old != new:
                    changes.append(f'<li data-key="{escape(key)}">{escape(f"{key}: {changed(old, new)}")}</li>')
        cls = f' class="{" ".join(marks)}"' if marks else ""
        rows.append(f'<tr data-step="{k}"{cls}><td>{k}</td><td>{escape(label)}</td>'
                    f'<td><ul>{"".join(changes)}</ul></td></tr>')
    return ('<table class="steps"><colgroup><col class="n"><col class="action"><col></colgroup>'
            "<thead><tr><th>#</th><th>step</th><th>fields changed</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _section(s: Shown, index: int, pair: bool) -> str:
    trace = s.trace
    states = described(trace)
    labels = ["initial"] + [step.instance.label for step in trace.steps[1:] if step.instance is not None]
    data = json.dumps({"states": states, "labels": labels}).replace("<", "\\u003c")
    diagram = svg.render(build(trace), loop=trace.loop, stutters=trace.stutters, facts=list(s.facts),
                         col=svg.NARROW if pair else svg.COL)
    return (
        f'<section class="trace" id="trace-{index}">'
        f"<h1>{escape(_title(s))} ({trace.length} steps)</h1>"
        f'<p class="settings">{escape(trace.model.title())}</p>{_banner(s)}'
        '<div class="bar"><button class="prev" title="previous step (↑, ←, k)">◀</button>'
        '<button class="next" title="next step (↓, →, j)">▶</button><span class="at"></span>'
        '<input class="filter" type="search" placeholder="filter fields (/)" aria-label="filter fields">'
        '<span class="keys">↑↓ j k Home End · / filter' + (" · Tab other trace" if pair else "") + "</span></div>"
        f'<div class="view"><div class="diagram">{diagram}</div>'
        '<aside class="state"><h2></h2><table class="state"><colgroup><col class="key"><col></colgroup>'
        "<tbody></tbody></table></aside></div>"
        f"{_steps(trace, states, labels)}"
        f'<script type="application/json" class="data">{data}</script></section>'
    )


def page(shown: list[Shown]) -> str:
    """One page for one trace, or for two side by side."""
    title = " | ".join(_title(s) for s in shown)
    sections = "".join(_section(s, i, len(shown) > 1) for i, s in enumerate(shown))
    pair = ' class="traces pair"' if len(shown) > 1 else ' class="traces"'
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>kmc: {escape(title)}</title><style>{_asset('trace.css')}</style></head><body>"
        f'<main{pair} style="--traces: {len(shown)}">{sections}</main>'
        f"<script>{_asset('trace.js')}</script></body></html>\n"
    )


def render(trace: Trace, doc: str = "", *, report: bool = False, facts: tuple[str, ...] = ()) -> str:
    """The page of one trace."""
    return page([Shown(trace, doc, report, facts)])
