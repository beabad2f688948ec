"""Model code as straight-line programs, from the terms the tracing interpretation builds.

Each instance's guard and effect, and each invariant, run once under `TRACING` on a view whose
fields are leaf terms (kmc/semantics/tracing.py). The terms they return form a graph (shared
where model code reuses a value); walking it from the outputs gives a *program*: operations in
an order where every operand comes first. A state position read or a constant is not an
operation but a *slot* of the operation that uses it, each use its own slot.

Two instances of one action family usually run the same code on other positions and other
constants: their programs have the same *shape* (operations, operand kinds, slot order) and
differ in their slots' values. The instances of a family with one shape are a `Template`: one
kernel over a table with a row per binding (kmc/semantics/compiled/emit.py) instead of a
kernel per instance. A family whose code branches on its parameters (a Python `if` on a
concrete value) has a template per shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral
from typing import Any, Container, Sequence

from kmc.model.core import Instance, Invariant, Model, Schema
from kmc.semantics.tracing import OPERATORS, TRACING, Term


class Uncompilable(ValueError):
    """Model code built a term the code generator has no native form for."""


# An operand: ("n", node) an earlier operation's value; ("r", slot) the state position a slot
# holds; ("c", slot) an integer constant; ("t", slot) a truth constant (0 or 1).
Ref = tuple[str, int]

TRUTH_OPS = frozenset(("<", "<=", ">", ">=", "==", "!=", "and", "or", "not", "implies", "iff",
                       "all", "any", "forall", "exists"))


@dataclass(frozen=True)
class Op:
    """One operation: `op` (a term's op, or "read_at": a contiguous run of `size` positions
    from the one in `start`'s slot, indexed by operand 0), its operands, and whether its value
    is a truth value ("t", 0 or 1) or an integer ("i")."""

    op: str
    refs: tuple[Ref, ...]
    kind: str
    start: int = -1  # read_at: the slot of the first position
    size: int = 0  # read_at: the number of positions


@dataclass
class Program:
    """The operations of an instance's guard and effect (or of an invariant), its slots'
    values, and its outputs: the guard (or the predicate), the writes (position slot, value)."""

    ops: list[Op] = field(default_factory=list)
    slots: list[int] = field(default_factory=list)
    guard_ops: int = 0  # the first ops compute the guard; the rest, the effect
    guard: Ref = ("t", -1)
    writes: list[tuple[int, Ref]] = field(default_factory=list)

    def shape(self) -> tuple[Any, ...]:
        return (tuple(self.ops), self.guard_ops, self.guard, tuple(self.writes))

    def needed(self, ref: Ref, done: Container[int]) -> list[int]:
        """The operations not in `done` that `ref`'s value needs, each after its operands."""
        out: set[int] = set()
        todo = [ref[1]] if ref[0] == "n" else []
        while todo:
            k = todo.pop()
            if k in out or k in done:
                continue
            out.add(k)
            todo.extend(r[1] for r in self.ops[k].refs if r[0] == "n")
        return sorted(out)


class _Builder:
    """Walks terms into a program, numbering each operation once (by object)."""

    def __init__(self, positions: dict[int, int]):
        self.positions = positions  # id(leaf term) -> its flat position
        self.program = Program()
        self.done: dict[int, int] = {}  # id(term) -> its operation's number
        self.alive: list[Term] = []  # the terms numbered, kept alive so that no other takes an id in `done`
        self.kinds: list[str] = []

    def slot(self, value: int) -> int:
        self.program.slots.append(value)
        return len(self.program.slots) - 1

    def operand(self, value: Any) -> Ref:
        if isinstance(value, Term):
            if value.args is None:
                return ("r", self.slot(self.positions[id(value)]))
            return ("n", self.node(value))
        if isinstance(value, bool):
            return ("t", self.slot(int(value)))
        if isinstance(value, Integral):
            return ("c", self.slot(int(value)))
        raise Uncompilable(f"a {type(value).__name__} where a state value or an integer was expected")

    def kind(self, ref: Ref) -> str:
        return self.kinds[ref[1]] if ref[0] == "n" else "t" if ref[0] == "t" else "i"

    def node(self, root: Term) -> int:
        """The number of `root`'s operation, after every operation it needs (an explicit
        stack: nested `ite` chains go deeper than Python's recursion)."""
        stack: list[tuple[Term, bool]] = [(root, False)]
        while stack:
            term, ready = stack.pop()
            if id(term) in self.done:
                continue
            inner = [a for a in _flat(term) if isinstance(a, Term) and a.args is not None and id(a) not in self.done]
            if inner and not ready:
                stack.append((term, True))
                stack.extend((a, False) for a in reversed(inner))
                continue
            self.done[id(term)] = self._emit(term)
            self.alive.append(term)
        return self.done[id(root)]

    def _emit(self, term: Term) -> int:
        args = term.args or ()
        if term.op == "at":
            array, index = args
            if any(isinstance(a, list) for a in array):
                raise Uncompilable("X.at over an array of arrays")
            op = self._read_at(array, index) or Op("at", tuple(self.operand(a) for a in (index, *array)), "i")
            if op.op == "at" and all(self.kind(r) == "t" for r in op.refs[1:]):
                op = Op("at", op.refs, "t")
        else:
            if any(isinstance(a, list) for a in args):
                raise Uncompilable(f"X.{term.op} over arrays")
            refs = tuple(self.operand(a) for a in args)
            kind = "t" if term.op in TRUTH_OPS else "i"
            if term.op == "ite" and self.kind(refs[1]) == "t" and self.kind(refs[2]) == "t":
                kind = "t"
            if term.op not in OPERATORS and term.op not in _CALLS:
                raise Uncompilable(f"an operation {term.op!r}")
            op = Op(term.op, refs, kind)
        self.program.ops.append(op)
        self.kinds.append(op.kind)
        return len(self.program.ops) - 1

    def _read_at(self, array: Sequence[Any], index: Any) -> Op | None:
        """X.at over a row of one field's positions: a read at a computed position."""
        if not all(isinstance(a, Term) and a.args is None for a in array):
            return None
        at = [self.positions[id(a)] for a in array]
        if any(b != a + 1 for a, b in zip(at, at[1:])):
            return None
        ref = self.operand(index)
        return Op("read_at", (ref,), "i", self.slot(at[0]), len(at))


_CALLS = frozenset(("neg", "ite", "and", "or", "not", "implies", "iff", "min", "max", "all", "any",
                    "forall", "exists", "count"))


def _flat(term: Term) -> list[Any]:
    out: list[Any] = []
    for a in term.args or ():
        out.extend(a if isinstance(a, list) else [a])
    return out


class Tracer:
    """A model's state as leaf terms, to trace its code into programs."""

    def __init__(self, schema: Schema):
        self.schema = schema
        self.leaves = [Term(name) for name in schema.element_names()]
        self.positions = {id(t): j for j, t in enumerate(self.leaves)}
        self.view = schema.view(self.leaves)

    def instance(self, inst: Instance) -> Program:
        b = _Builder(self.positions)
        action = inst.action
        b.program.guard = b.operand(action.guard(self.view, TRACING, *inst.args))
        b.program.guard_ops = len(b.program.ops)
        effect = dict(self.schema.updates(action.effect(self.view, TRACING, *inst.args)))  # the last write wins
        b.program.writes = [(b.slot(pos), b.operand(value)) for pos, value in effect.items()]
        return b.program

    def invariant(self, inv: Invariant) -> Program:
        b = _Builder(self.positions)
        b.program.guard = b.operand(inv.predicate(self.view, TRACING))
        b.program.guard_ops = len(b.program.ops)
        return b.program


@dataclass
class Template:
    """The instances of one family whose programs share a shape: the shape (the first one's
    program), and per slot either the one value every instance gives it or its column in
    `table` (a row per instance, the instance id in column 0)."""

    family: str
    program: Program
    iids: list[int]
    columns: dict[int, int]  # slot -> its column of the table, for slots whose values differ
    table: list[list[int]]  # per instance: [iid, values of the varying slots]


def templates(model: Model) -> list[Template]:
    """Every instance's program, grouped by family and shape, in instance order."""
    tracer = Tracer(model.schema)
    out: list[Template] = []
    groups: dict[tuple[str, Any], list[tuple[int, Program]]] = {}
    order: list[tuple[str, Any]] = []
    for inst in model.instances():
        program = tracer.instance(inst)
        key = (inst.action.name, program.shape())
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append((inst.id, program))
    for key in order:
        members = groups[key]
        first = members[0][1]
        varying = [k for k in range(len(first.slots)) if len({p.slots[k] for _, p in members}) > 1]
        columns = {k: c + 1 for c, k in enumerate(varying)}
        table = [[iid, *(p.slots[k] for k in varying)] for iid, p in members]
        out.append(Template(key[0], first, [iid for iid, _ in members], columns, table))
    return out


def invariant_programs(model: Model, invariants: Sequence[Invariant]) -> list[Program]:
    tracer = Tracer(model.schema)
    return [tracer.invariant(inv) for inv in invariants]
