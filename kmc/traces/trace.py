"""A counterexample: the states from an initial state to a violation, and the steps between."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kmc.model.core import Instance, Model, State


@dataclass(frozen=True)
class Step:
    """A state and the instance that led to it (None for the initial state)."""

    instance: Instance | None
    state: State


@dataclass
class Trace:
    model: Model
    steps: list[Step]
    invariant: str | None = None  # the invariant (or liveness property) it violates
    # a lasso: the index of the step its cycle returns to. The last step's state equals that
    # step's state (the closing step), or, when loop is the last index, the run stutters there for ever.
    loop: int | None = None

    @property
    def stutters(self) -> bool:
        """A lasso whose cycle is stuttering in its last state for ever."""
        return self.loop is not None and self.loop == len(self.steps) - 1

    @property
    def length(self) -> int:
        """The number of transitions (a trace of just an initial state has length 0)."""
        return len(self.steps) - 1

    @property
    def last(self) -> State:
        return self.steps[-1].state


ParentOf = Callable[[State], "tuple[State, int] | None"]


def rebuild(model: Model, last: State, parent_of: ParentOf, invariant: str | None = None) -> Trace:
    """Follow parent pointers from `last` back to an initial state.

    `parent_of(state)` returns (parent state, instance id) or None for an initial state.
    """
    instances = model.instances()
    steps: list[Step] = []
    state = last
    while True:
        link = parent_of(state)
        if link is None:
            steps.append(Step(None, state))
            break
        parent, iid = link
        steps.append(Step(instances[iid], state))
        state = parent
    steps.reverse()
    return Trace(model, steps, invariant)
