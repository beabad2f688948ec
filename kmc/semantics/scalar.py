"""The scalar interpretation: fields are Python ints, one concrete state at a time.

`Scalar` is the backend `X` over Python ints and bools; `ScalarModel` steps a model one
concrete state at a time (successors, invariants). The reference engines (bfs, dfs) and
trace replay use them: they are the definition the faster interpretations must agree with.
An index outside an array gives its nearest element (`at`) or changes nothing (`set_at`).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

from kmc.model.core import Instance, Invariant, Model, State

T = TypeVar("T")


class Scalar:
    """Fields as Python ints and bools."""

    name = "scalar"

    @staticmethod
    def ite(c: Any, a: Any, b: Any) -> Any:
        return a if c else b

    @staticmethod
    def and_(*xs: Any) -> bool:
        return all(xs)

    @staticmethod
    def or_(*xs: Any) -> bool:
        return any(xs)

    @staticmethod
    def not_(x: Any) -> bool:
        return not x

    @staticmethod
    def implies(a: Any, b: Any) -> bool:
        return (not a) or bool(b)

    @staticmethod
    def min_(*xs: Any) -> Any:
        return min(xs)

    @staticmethod
    def max_(*xs: Any) -> Any:
        return max(xs)

    @staticmethod
    def at(array: Sequence[Any], index: Any) -> Any:
        return array[min(max(index, 0), len(array) - 1)]

    @staticmethod
    def set_at(array: Sequence[Any], index: Any, value: Any) -> list[Any]:
        out = list(array)
        if 0 <= index < len(out):
            out[index] = value
        return out

    @staticmethod
    def all(xs: Iterable[Any]) -> bool:
        return all(xs)

    @staticmethod
    def any(xs: Iterable[Any]) -> bool:
        return any(xs)

    @staticmethod
    def iff(a: Any, b: Any) -> bool:
        return bool(a) == bool(b)

    @staticmethod
    def forall(xs: Iterable[T], fn: Callable[[T], Any]) -> bool:
        return all(fn(x) for x in xs)

    @staticmethod
    def exists(xs: Iterable[T], fn: Callable[[T], Any]) -> bool:
        return any(fn(x) for x in xs)

    @staticmethod
    def count(xs: Iterable[Any]) -> int:
        return sum(1 for x in xs if x)


SCALAR = Scalar()


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
