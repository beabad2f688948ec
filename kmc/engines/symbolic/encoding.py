"""A model as z3 formulas: states as vectors of bit-vector constants, the initial states, the
transition relation, invariants; and decoding z3 models back into concrete states.

The transition relation from state `s` to state `t` is the disjunction, over
`Model.instances()`, of guard(s) ∧ effect(s, t) ∧ frame(s, t), written with one selector
integer per step: `sel = k` says instance k fired. It is encoded functionally, position by
position: t[p] is the value the selected instance writes to p, or s[p] when it writes
nothing there, which is the same relation with far fewer clauses than one frame per
instance. The guards and effects are the model's own code, run once per state over the
`Symbolic` backend (kmc/semantics/symbolic.py).

States reached from an initial state are determined by the selectors, so bounded model
checking needs no range constraints (and finds a field leaving its range as a violation of
`type-ok`); k-induction starts from arbitrary states and constrains each to the schema's
ranges (`in_range`), which it then proves as an implicit lemma.
"""

from __future__ import annotations

from typing import Any, Sequence

import z3

from kmc.semantics.tracing import DataDependentBranch
from kmc.contract.traced import contract_problems
from kmc.semantics.scalar import ScalarModel
from kmc.semantics.symbolic import Symbolic, as_int, is_term, schema_width, to_z3_bool
from kmc.errors import BadInput, ReplayError
from kmc.model.core import Instance, Invariant, Model, State
from kmc.traces.trace import Step, Trace

SEED = 0  # z3's random seeds: the same run gives the same model, hence the same trace


def new_solver(timeout_ms: int | None = None) -> z3.Solver:
    """A solver with fixed seeds (deterministic models) and an optional timeout."""
    z3.set_param("smt.random_seed", SEED)
    z3.set_param("sat.random_seed", SEED)
    solver = z3.SolverFor("QF_FD")
    solver.set("random_seed", SEED)
    if timeout_ms is not None:
        solver.set("timeout", max(1, int(timeout_ms)))
    return solver


class SymbolicModel:
    """A model bound to z3: fresh state vectors, and the formulas over them."""

    def __init__(self, model: Model, invariants: Sequence[Invariant] = ()):
        problems = contract_problems(model, list(invariants))
        if problems:  # z3 would answer some of these silently (structural ==): refuse them all
            raise DataDependentBranch("model breaks the contract of kmc/model/core.py: " + "; ".join(problems))
        self.width = schema_width(model.schema)
        self.X = Symbolic(self.width)
        self.model = model
        self.schema = model.schema
        self.instances: list[Instance] = model.instances()
        self.names = self.schema.element_names()
        self.scalar = ScalarModel(model)

    # -- states --------------------------------------------------------------------------

    def state(self, tag: str) -> list[z3.BitVecRef]:
        """A fresh state: one bit-vector constant per flat position, named `tag.field[i][j]`."""
        return [z3.BitVec(f"{tag}.{n}", self.width) for n in self.names]

    def selector(self, name: str) -> z3.BitVecRef:
        """A step's instance number, wide enough for every instance (compared unsigned)."""
        return z3.BitVec(name, max(1, len(self.instances).bit_length()))

    def in_range(self, s: Sequence[Any]) -> z3.BoolRef:
        return z3.And([z3.And(lo <= v, v <= hi) for v, lo, hi in zip(s, self.schema.lo, self.schema.hi)])

    def initial(self, s: Sequence[Any]) -> z3.BoolRef:
        return z3.Or([z3.And([v == c for v, c in zip(s, init)]) for init in self.model.initial_states()])

    def holds(self, invariant: Invariant, s: Sequence[Any]) -> z3.BoolRef:
        return to_z3_bool(invariant.predicate(self.schema.view(self.X.wrap(list(s))), self.X))

    def distinct(self, a: Sequence[Any], b: Sequence[Any]) -> z3.BoolRef:
        return z3.Or([x != y for x, y in zip(a, b)])

    # -- transitions ---------------------------------------------------------------------

    def transition(self, s: Sequence[Any], t: Sequence[Any], sel: z3.BitVecRef) -> z3.BoolRef:
        """t is a successor of s by the instance numbered `sel`."""
        view = self.schema.view(self.X.wrap(list(s)))  # Syms: model operators coerce sorts
        enabled: list[Any] = []
        writes: dict[int, list[tuple[int, Any]]] = {}  # position -> [(instance id, value)]
        for inst in self.instances:
            guard = to_z3_bool(inst.action.guard(view, self.X, *inst.args))
            enabled.append(guard)
            if z3.is_false(guard):
                continue
            for pos, value in self.schema.updates(inst.action.effect(view, self.X, *inst.args)):
                value = as_int(value, self.width)
                if is_term(value) and value.eq(s[pos]):
                    continue  # writes the old value: the frame already says so
                writes.setdefault(pos, []).append((inst.id, value))
        live = [k for k, g in enumerate(enabled) if not z3.is_false(g)]
        parts: list[Any] = [z3.Or([sel == k for k in live]) if live else z3.BoolVal(False)]
        parts += [z3.Implies(sel == k, enabled[k]) for k in live if not z3.is_true(enabled[k])]
        for pos, old in enumerate(s):
            written: Any = old
            for iid, new in reversed(writes.get(pos, [])):
                written = z3.If(sel == iid, new, written)
            parts.append(t[pos] == written)
        return z3.And(parts)

    # -- decoding ------------------------------------------------------------------------

    def decode(self, zmodel: z3.ModelRef, s: Sequence[z3.BitVecRef]) -> State:
        return tuple(zmodel.eval(v, model_completion=True).as_signed_long() for v in s)

    def step_instance(self, before: State, after: State) -> Instance:
        """The first instance (in engine order) that takes `before` to `after`, found by the
        scalar backend: labels come from replaying, never from the solver's choice."""
        for inst in self.instances:
            if self.scalar.step(before, inst) == after:
                return inst
        raise ReplayError("a z3 step is not a step of the scalar model: the symbolic encoding disagrees")

    def path(self, states: Sequence[State]) -> list[Step]:
        """Steps for consecutive states: the first has no instance, each next one the
        instance that leads to it."""
        steps = [Step(None, states[0])]
        for before, after in zip(states, states[1:]):
            steps.append(Step(self.step_instance(before, after), after))
        return steps

    def trace(self, states: Sequence[State], invariant: str | None) -> Trace:
        return Trace(self.model, self.path(states), invariant)
