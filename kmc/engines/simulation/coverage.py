"""Coverage: which rules a run exercised, and which values its states took.

Per action family: how many times an instance of it was enabled (in a state the run
expanded), how many times one fired (breadth-first search fires every enabled instance; a
simulation fires the one each walker picks), and how many new states it produced (the first
occurrence of a state is credited to the step that found it). A family never enabled is a
rule the run never exercised: usually a guard that cannot hold, a vacuous rule, a model bug.

Per field: the smallest and largest value its states reached, against the declared range. A
range wider than what is reached costs key bits (kmc/engines/vector/packing.py) for nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kmc.model.core import Model


class Coverage:
    def __init__(self, model: Model):
        self.model = model
        instances = model.instances()
        self.families = list(dict.fromkeys(inst.action.name for inst in instances))
        self.family_of = np.array([self.families.index(inst.action.name) for inst in instances], dtype=np.int64)
        n = len(instances)
        self.enabled = np.zeros(n, dtype=np.int64)
        self.fired = np.zeros(n, dtype=np.int64)
        self.new_states = np.zeros(n, dtype=np.int64)
        width = model.schema.width
        self.lo = np.full(width, np.iinfo(np.int64).max, dtype=np.int64)
        self.hi = np.full(width, np.iinfo(np.int64).min, dtype=np.int64)

    def reached(self, cols: np.ndarray) -> None:
        """Fold states given as columns (positions x states) into the fields' reached ranges."""
        if cols.shape[1]:
            np.minimum(self.lo, cols.min(axis=1), out=self.lo)
            np.maximum(self.hi, cols.max(axis=1), out=self.hi)

    def credit(self, iids: np.ndarray) -> None:
        """New states, found by steps of these instances."""
        self.new_states += np.bincount(iids.astype(np.int64), minlength=len(self.new_states))

    def never_enabled(self) -> list[str]:
        per_family = np.bincount(self.family_of, weights=self.enabled, minlength=len(self.families))
        return [name for name, count in zip(self.families, per_family) if count == 0]

    def to_json(self) -> dict[str, Any]:
        def per_family(counts: np.ndarray) -> list[int]:
            return [int(x) for x in np.bincount(self.family_of, weights=counts, minlength=len(self.families))]

        enabled, fired, new = per_family(self.enabled), per_family(self.fired), per_family(self.new_states)
        actions = {name: {"enabled": enabled[k], "fired": fired[k], "new_states": new[k]}
                   for k, name in enumerate(self.families)}
        schema = self.model.schema
        fields = {}
        for f in schema.fields:
            start = schema.offset[f.name]
            lo, hi = int(self.lo[start:start + f.size].min()), int(self.hi[start:start + f.size].max())
            fields[f.name] = {"declared": [f.lo, f.hi], "reached": None if lo > hi else [lo, hi]}
        return {"actions": actions, "never_enabled": self.never_enabled(), "fields": fields}


def render(coverage: dict[str, Any]) -> str:
    """The coverage of a run as a table for people."""
    actions = coverage["actions"]
    width = max(len(name) for name in actions)
    lines = ["Coverage by action family:", f"  {'action':<{width}}  {'enabled':>12}  {'fired':>12}  {'new states':>12}"]
    for name, c in actions.items():
        flag = "  never enabled" if c["enabled"] == 0 else ""
        lines.append(f"  {name:<{width}}  {c['enabled']:>12,}  {c['fired']:>12,}  {c['new_states']:>12,}{flag}")
    lines.append("Values reached by field (declared range):")
    width = max(len(name) for name in coverage["fields"])
    for name, f in coverage["fields"].items():
        lo, hi = f["declared"]
        reached = "never reached" if f["reached"] is None else f"{f['reached'][0]}..{f['reached'][1]}"
        wide = "" if f["reached"] is None or f["reached"] == [lo, hi] else "  (narrower than declared)"
        lines.append(f"  {name:<{width}}  {reached} of {lo}..{hi}{wide}")
    return "\n".join(lines)
