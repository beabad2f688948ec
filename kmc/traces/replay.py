"""Replay a trace through the scalar interpretation: every step enabled, every state equal."""

from __future__ import annotations

from kmc.semantics.scalar import ScalarModel
from kmc.errors import ReplayError
from kmc.model.core import Invariant
from kmc.traces.trace import Trace


def replay(trace: Trace, invariant: Invariant | None = None) -> None:
    """Raise ReplayError unless the trace is a real run of its model (ending in a violation
    of `invariant`, when one is given)."""
    model = trace.model
    sm = ScalarModel(model)
    first = trace.steps[0]
    if first.instance is not None or first.state not in model.initial_states():
        raise ReplayError("trace does not start in an initial state")
    for k, (before, step) in enumerate(zip(trace.steps, trace.steps[1:]), start=1):
        assert step.instance is not None
        after = sm.step(before.state, step.instance)
        if after is None:
            raise ReplayError(f"step {k}: {step.instance.label} is not enabled")
        if after != step.state:
            raise ReplayError(f"step {k}: {step.instance.label} does not lead to the recorded state")
    if trace.loop is not None and not trace.stutters and trace.last != trace.steps[trace.loop].state:
        raise ReplayError(f"the closing step does not return to step {trace.loop}")
    if invariant is not None and not sm.violated(trace.last, [invariant]):
        raise ReplayError(f"trace ends in a state that satisfies {invariant.name}")
