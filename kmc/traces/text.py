"""A trace for people: the initial state, then per step `action(params)` and only the fields
that changed, old -> new, in the model's own terms (Model.describe)."""

from __future__ import annotations

from kmc.traces.trace import Trace


def render(trace: Trace, doc: str = "", *, report: bool = False, heading: list[str] | None = None,
           notes: list[str] | None = None) -> str:
    """`heading` replaces the first lines (what the trace shows), as for a counterexample to
    induction, whose first state is not an initial state. A lasso (`trace.loop` set) is shown
    as its prefix, then its cycle, whose closing step says "(back to step j)"; `notes` (the
    cycle's fairness facts) follow it."""
    model = trace.model
    lines: list[str] = []
    if trace.loop is not None and heading is None:
        cycle = "stuttering for ever" if trace.stutters else f"a cycle of {trace.length - trace.loop} steps"
        lines.append(f"Property {trace.invariant} is violated" + (f": {doc}" if doc else ""))
        lines.append(f"Counterexample (a lasso: {trace.loop} steps to step {trace.loop}, then {cycle}) "
                     f"for {model.title()}")
    elif heading is not None:
        lines.extend(heading)
    elif trace.invariant and report:
        lines.append(f"Availability report {trace.invariant} fails" + (f": {doc}" if doc else ""))
    elif trace.invariant:
        lines.append(f"Invariant {trace.invariant} is violated" + (f": {doc}" if doc else ""))
    if heading is None and trace.loop is None:
        lines.append(f"{'Example' if report else 'Counterexample'} ({trace.length} steps) for {model.title()}")
    described = [model.describe(step.state) for step in trace.steps]
    width = max((len(key) for d in described for key in d), default=0)
    before = described[0]
    lines.append("")
    lines.append("State 0" if heading is not None else "State 0: initial")
    for key, value in before.items():
        lines.append(f"    {key:<{width}}  {value}")
    for k, step in enumerate(trace.steps[1:], start=1):
        assert step.instance is not None
        after = described[k]
        lines.append("")
        back = f" (back to step {trace.loop})" if trace.loop is not None and k == trace.length and not trace.stutters else ""
        lines.append(f"Step {k}: {step.instance.label}{back}")
        keys = list(dict.fromkeys([*before, *after]))
        for key in keys:
            old, new = before.get(key, "-"), after.get(key, "-")
            if old != new:
                lines.append(f"    {key:<{width}}  {old} -> {new}")
        before = after
    if trace.stutters:
        lines.append("")
        lines.append(f"Step {trace.length + 1}: stuttering for ever (back to step {trace.loop})")
    if notes:
        lines.append("")
        lines.append("Fairness on the cycle:")
        lines.extend(f"    {n}" for n in notes)
    return "\n".join(lines)
