"""A model interpreted one state at a time over Python ints: successors and invariants.

The reference engines (bfs, dfs) and trace replay use these; they are the definition the
faster engines must agree with.
"""

from __future__ import annotations

from typing import Iterator, Sequence

from kmc.checker.backends import SCALAR
from kmc.model.core import Instance, Invariant, Model, State


class ScalarModel:
    """A model's instances and schema, bound once, for stepping concrete states."""

    def __init__(self, model: Model):
        self.model = model
        self.schema = model.schema
        self.instances: list[Instance] = model.instances()
        self._steps = [(i.id, i.action.guard, i.action.effect, i.args) for i in self.instances]

    def successors(self, state: State) -> Iterator[tuple[int, State]]:
        """(instance id, next state) for every enabled instance, in instance order."""
        view = self.schema.view(state)
        updates = self.schema.updates
        for iid, guard, effect, args in self._steps:
            if guard(view, SCALAR, *args):
                nxt = list(state)
                for pos, value in updates(effect(view, SCALAR, *args)):
                    nxt[pos] = int(value)
                yield iid, tuple(nxt)

    def step(self, state: State, instance: Instance) -> State | None:
        """The successor of `state` by one instance, or None when it is not enabled."""
        view = self.schema.view(state)
        action = instance.action
        if not action.guard(view, SCALAR, *instance.args):
            return None
        nxt = list(state)
        for pos, value in self.schema.updates(action.effect(view, SCALAR, *instance.args)):
            nxt[pos] = int(value)
        return tuple(nxt)

    def violated(self, state: State, invariants: Sequence[Invariant]) -> list[int]:
        """Indices of the invariants that `state` violates."""
        view = self.schema.view(state)
        return [k for k, inv in enumerate(invariants) if not inv.predicate(view, SCALAR)]
