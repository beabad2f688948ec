"""A walk through a model, chosen step by step: the path from an initial state, the cursor on
it (back and forward move it; choosing a step other than the next one replaces the rest of
the path), and every state reached so far with a path to it, for the search.

States are stepped by the scalar interpretation (`ScalarModel`), as traces are replayed, so a
walk is a run of the model and saves as an ITF trace that `kmc trace` reads back.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from kmc.errors import BadInput
from kmc.explore import query
from kmc.model.core import Invariant, Model, State
from kmc.semantics.scalar import ScalarModel
from kmc.traces import itf
from kmc.traces.trace import Step, Trace

Loader = Callable[[str, str], Trace]  # (text, name) -> a trace of the walk's model, replayed and checked
MATCHES_SHOWN = 50


class Walk:
    def __init__(self, model: Model, invariants: list[Invariant], load: Loader):
        self.model = model
        self.invariants = invariants
        self._sm = ScalarModel(model)
        self._instances = model.instances()
        self._names = model.schema.element_names()
        self._load = load
        self.path: list[Step] = []
        self.cursor = -1  # -1: no state chosen yet, the initial states are the choices
        self.loaded = ""  # the name of the last trace loaded
        self._reached: dict[State, tuple[Step, ...]] = {}  # every state seen, with a path to it

    # -- moving ---------------------------------------------------------------------------

    def choose_initial(self, index: int) -> None:
        initial = self.model.initial_states()
        if not 0 <= index < len(initial):
            raise BadInput(f"no initial state {index}; the model has {len(initial)} (0 to {len(initial) - 1})")
        self._go(Step(None, initial[index]), at=0)

    def choose(self, instance_id: int) -> None:
        """Take the step of instance `instance_id` from the current state."""
        if self.cursor < 0:
            raise BadInput("choose an initial state first")
        if not 0 <= instance_id < len(self._instances):
            raise BadInput(f"no action instance {instance_id}; the model has {len(self._instances)}")
        instance = self._instances[instance_id]
        after = self._sm.step(self.path[self.cursor].state, instance)
        if after is None:
            raise BadInput(f"{instance.label} is not enabled in the current state")
        self._go(Step(instance, after), at=self.cursor + 1)

    def _go(self, step: Step, at: int) -> None:
        ahead = self.path[at] if at < len(self.path) else None
        if ahead != step:  # another step than the one ahead: the rest of the path goes
            self.path = [*self.path[:at], step]
        self.cursor = at
        self._reached.setdefault(step.state, tuple(self.path[:at + 1]))

    def goto(self, index: int) -> None:
        if not -1 <= index < len(self.path):
            raise BadInput(f"no step {index} on the path; it has steps 0 to {len(self.path) - 1}")
        self.cursor = index

    def back(self) -> None:
        self.goto(max(self.cursor - 1, -1))

    def forward(self) -> None:
        self.goto(min(self.cursor + 1, len(self.path) - 1))

    def load(self, trace: Trace, name: str) -> None:
        """A trace of this model (a counterexample, from file `name`) as the path, the cursor on its first state."""
        if trace.model.title() != self.model.title():
            raise BadInput(f"{name}: the trace is of {trace.model.title()}; this explorer walks {self.model.title()} "
                           f"(start kmc explore with the trace's options)")
        # the steps on this walk's own instances (the trace's model is another object of the same settings)
        self.path = [Step(None if s.instance is None else self._instances[s.instance.id], s.state) for s in trace.steps]
        self.cursor = 0
        self.loaded = os.path.basename(name)  # the page names the file, not its folder
        for k, step in enumerate(self.path):
            self._reached.setdefault(step.state, tuple(self.path[:k + 1]))

    def load_text(self, text: str, name: str) -> None:
        self.load(self._load(text, name), name)

    # -- search ---------------------------------------------------------------------------

    def search(self, text: str) -> dict[str, Any]:
        """The states reached so far that match `text` (kmc/explore/query.py), shortest path first."""
        q = query.parse(text, self._names)
        found = sorted((len(p), k) for k, (s, p) in enumerate(self._reached.items()) if q.matches(s))
        paths = list(self._reached.values())
        shown = [{"match": k, "steps": n - 1, "last": _label(paths[k][-1])} for n, k in found[:MATCHES_SHOWN]]
        return {"total": len(found), "matches": shown, "reached": len(self._reached)}

    def jump(self, match: int) -> None:
        """To a state found by `search`, along the path it was first reached by."""
        paths = list(self._reached.values())
        if not 0 <= match < len(paths):
            raise BadInput(f"no reached state {match}; {len(paths)} reached so far")
        self.path = list(paths[match])
        self.cursor = len(self.path) - 1

    # -- what the page shows --------------------------------------------------------------

    def view(self) -> dict[str, Any]:
        model = self.model
        out: dict[str, Any] = {
            "title": model.title(),
            "invariants": [{"name": i.name, "doc": i.doc, "report": i.report} for i in self.invariants],
            "path": [{"index": k, "label": _label(s), "fails": self._fails(s.state)} for k, s in enumerate(self.path)],
            "cursor": self.cursor,
            "loaded": self.loaded,
        }
        if self.cursor < 0:
            out["state"] = None
            out["choices"] = [self._initial(k, s) for k, s in enumerate(model.initial_states())]
            out["reached"] = len(self._reached)
            return out
        here = self.path[self.cursor]
        before = model.describe(self.path[self.cursor - 1].state) if self.cursor > 0 else {}
        described = model.describe(here.state)
        ahead = self.path[self.cursor + 1] if self.cursor + 1 < len(self.path) else None
        out["state"] = {
            "fields": [{"key": k, "value": v, "changed": self.cursor > 0 and before.get(k) != v}
                       for k, v in described.items()],
            "raw": [[n, v] for n, v in zip(self._names, here.state)],
            "fails": self._fails(here.state),
        }
        out["choices"] = [self._successor(described, iid, s, ahead) for iid, s in self._sm.successors(here.state)]
        out["reached"] = len(self._reached)  # the choices shown are reached too
        return out

    def _initial(self, k: int, state: State) -> dict[str, Any]:
        self._reached.setdefault(state, (Step(None, state),))
        return {"init": k, "label": f"initial state {k}", "action": "init", "params": {},
                "changes": [{"key": key, "old": "", "new": v} for key, v in self.model.describe(state).items()],
                "fails": self._fails(state), "ahead": bool(self.path) and self.path[0].state == state}

    def _successor(self, described: dict[str, str], iid: int, state: State, ahead: Step | None) -> dict[str, Any]:
        instance = self._instances[iid]
        self._reached.setdefault(state, (*self.path[:self.cursor + 1], Step(instance, state)))
        after = self.model.describe(state)
        changes = [{"key": k, "old": described.get(k, "-"), "new": after.get(k, "-")}
                   for k in dict.fromkeys([*described, *after]) if described.get(k) != after.get(k)]
        return {"instance": iid, "label": instance.label, "action": instance.action.name,
                "params": {p.name: p.show(a) for p, a in zip(instance.action.params, instance.args)},
                "changes": changes, "fails": self._fails(state),
                "ahead": ahead is not None and ahead.instance == instance}

    def _fails(self, state: State) -> list[str]:
        return [self.invariants[k].name for k in self._sm.violated(state, self.invariants)]

    # -- saving ---------------------------------------------------------------------------

    def trace(self) -> Trace:
        """The walk as a trace: the whole path, claiming the first invariant its last state violates."""
        if not self.path:
            raise BadInput("the walk has no state yet: choose an initial state first")
        last = self.path[-1].state
        claims = [self.invariants[k] for k in self._sm.violated(last, self.invariants)]
        claims = [i for i in claims if not i.report]
        return Trace(self.model, list(self.path), claims[0].name if claims else None)

    def itf(self) -> str:
        return itf.dumps(self.trace()) + "\n"


def _label(step: Step) -> str:
    return "init" if step.instance is None else step.instance.label
