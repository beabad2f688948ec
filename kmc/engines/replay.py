"""A violating state's recorded path, replayed forward through the scalar interpretation.

The engines that keep parent links as instance ids (vector, compiled, Spark, the simulation's
swarm) turn them into a trace here: each step is taken again by the scalar backend, so every
link of a counterexample is a real step of the model, whichever engine found it.
"""

from __future__ import annotations

from kmc.errors import ReplayError
from kmc.model.core import Model, State
from kmc.semantics.scalar import ScalarModel


def replay_paths(model: Model, paths: dict[State, tuple[State, list[int]]], engine: str
                 ) -> dict[State, tuple[State, int] | None]:
    """Parent links along recorded paths (violating state -> (initial state, instance ids)),
    replayed forward through the scalar backend: every link is a real step."""
    links: dict[State, tuple[State, int] | None] = {}
    sm = ScalarModel(model)
    instances = model.instances()
    for state, (current, path) in paths.items():
        links.setdefault(current, None)
        for iid in path:
            nxt = sm.step(current, instances[iid])
            if nxt is None:
                raise ReplayError(f"{engine} engine: {instances[iid].label} is not enabled on its recorded parent")
            links.setdefault(nxt, (current, iid))
            current = nxt
        if current != state:
            raise ReplayError(f"{engine} engine: replaying the recorded path does not reach the violating state")
    return links
