"""Symmetry reduction: states equal up to a renaming of replica ids count once.

A permutation p of the replica ids moves every element along the axes a field indexes by
replica (`Field.replica_axes`) and renames the values of fields that hold replica ids
(`Field.holds_replica`, -1 meaning none). The canonical form of a state is the smallest of
its permuted images as a tuple, which is also the smallest packed key (packing preserves
tuple order). Engines store a state's canonical form for deduplication but keep exploring
from the concrete state they found first, so traces stay concrete and replayable.

The reduction is sound when the model and the invariants treat replicas alike: renaming the
replicas of a state renames its successors (every action family ranges over all replicas)
and keeps every invariant's truth value. The initial states need not be closed under
renaming, since the engines explore concrete states reached from them. `for_model` checks
both conditions on the first reachable states and names the action or invariant that breaks
them; the replication model keeps them.
"""

from __future__ import annotations

import itertools
import math
from operator import itemgetter
from typing import Sequence

import numpy as np

from kmc.semantics.scalar import SCALAR
from kmc.engines.vector.packing import Layout, Packing
from kmc.semantics.scalar import ScalarModel
from kmc.errors import BadInput
from kmc.model.core import Invariant, Model, Schema, State

MAX_REPLICAS = 5  # 120 permutations; beyond that canonicalisation costs more than it saves
SAMPLE = 60  # reachable states on which for_model checks that the model is symmetric


def for_model(model: Model, invariants: Sequence[Invariant]) -> Symmetry:
    """The symmetry of a model's schema, once its actions and invariants have been seen to
    treat replicas alike on the first reachable states (BadInput naming the first that does not)."""
    sym = Symmetry(model.schema)
    sm = ScalarModel(model)
    families: dict[str, list] = {}
    for inst in sm.instances:
        families.setdefault(inst.action.name, []).append(inst)
    sample = list(dict.fromkeys(model.initial_states()))
    for state in sample:
        if len(sample) >= SAMPLE:
            break
        sample.extend(n for _, n in sm.successors(state) if n not in sample)
    for state in sample[:SAMPLE]:
        view = model.schema.view(state)
        for k in sym.generators():
            image = sym.permute(state, k)
            image_view = model.schema.view(image)
            for inv in invariants:
                if bool(inv.predicate(view, SCALAR)) != bool(inv.predicate(image_view, SCALAR)):
                    raise BadInput(f"--symmetry: invariant {inv.name} does not treat replicas alike "
                                   f"(it differs on a state and on its renaming {sym.describe(k)})")
            for name, insts in families.items():
                after = {x for i in insts if (x := sm.step(state, i)) is not None}
                renamed = {sym.permute(x, k) for x in after}
                if renamed != {x for i in insts if (x := sm.step(image, i)) is not None}:
                    raise BadInput(f"--symmetry: action {name} does not treat replicas alike "
                                   f"(renaming {sym.describe(k)} does not rename its successors)")
    return sym


class Symmetry:
    """The permutations of a schema's replica ids, acting on flat states."""

    def __init__(self, schema: Schema):
        sizes = {f.shape[a] for f in schema.fields for a in f.replica_axes}
        holders = [f for f in schema.fields if f.holds_replica]
        if not sizes and not holders:
            raise BadInput("--symmetry: the model declares no replica axes or replica-valued fields")
        if len(sizes) > 1:
            raise BadInput(f"--symmetry: the model's replica axes have different sizes {sorted(sizes)}")
        n = sizes.pop() if sizes else max(f.hi for f in holders) + 1
        for f in holders:
            if f.lo < -1 or f.hi > n - 1:
                raise BadInput(f"--symmetry: field {f.name} holds replica ids but ranges over [{f.lo}, {f.hi}], "
                               f"not within [-1, {n - 1}]")
        if n > MAX_REPLICAS:
            raise BadInput(f"--symmetry supports at most {MAX_REPLICAS} replicas ({math.factorial(MAX_REPLICAS)} "
                           f"permutations); this model has {n}")
        self.schema = schema
        self.replicas = n
        self.perms: list[tuple[int, ...]] = list(itertools.permutations(range(n)))  # identity first
        width = schema.width
        self.holds = np.array([pos for f in holders for pos, _ in schema.positions(f.name)], dtype=np.int64)
        dest = np.empty((len(self.perms), width), dtype=np.int64)
        tables = np.empty((len(self.perms), n + 1), dtype=np.int64)  # value v at index v + 1
        for k, p in enumerate(self.perms):
            tables[k] = [-1, *p]
            for f in schema.fields:
                base = schema.offset[f.name]
                strides = [math.prod(f.shape[a + 1:]) for a in range(len(f.shape))]
                for pos, idx in schema.positions(f.name):
                    moved = [p[i] if a in f.replica_axes else i for a, i in enumerate(idx)]
                    dest[k, pos] = base + sum(i * s for i, s in zip(moved, strides))
        self.dest = dest  # position j of a state goes to position dest[p, j] of its image under p
        self.tables = tables
        source = np.empty_like(dest)
        for k in range(len(self.perms)):
            source[k, dest[k]] = np.arange(width)
        self._getters = [itemgetter(*row.tolist()) for row in source]
        self._holds = self.holds.tolist()
        self._maps = [row.tolist() for row in tables]

    def generators(self) -> list[int]:
        """Permutation numbers of a swap and a rotation of all replicas: every renaming is a
        composition of these two, so a property kept by both is kept by all."""
        n = self.replicas
        swap = (1, 0, *range(2, n)) if n > 1 else (0,)
        rotation = (*range(1, n), 0)
        return sorted({self.perms.index(swap), self.perms.index(rotation)} - {0})

    def describe(self, k: int) -> str:
        """Permutation number k, as the replicas it renames: r1->r2, r2->r1."""
        moved = [f"r{i + 1}->r{j + 1}" for i, j in enumerate(self.perms[k]) if i != j]
        return ", ".join(moved) or "identity"

    # -- one state at a time (the scalar engines) ---------------------------------------

    def permute(self, state: Sequence[int], k: int) -> State:
        """The image of a state under permutation number k."""
        image = list(self._getters[k](state))
        table = self._maps[k]
        for pos in self._holds:
            image[pos] = table[image[pos] + 1]
        return tuple(image)

    def canonical(self, state: Sequence[int]) -> State:
        """The smallest image of the state: equal for exactly the states of one orbit."""
        return min(self.permute(state, k) for k in range(len(self.perms)))

    # -- batches (the vector engine) ------------------------------------------------------

    def layouts(self, packing: Packing) -> list[Layout]:
        """One packing layout per permutation: packing a state under layout k gives the
        words of its image under permutation k."""
        out = []
        for k in range(len(self.perms)):
            d = self.dest[k]
            out.append(Layout(packing.lo, packing.word[d], packing.mult[d], packing.words,
                              self.holds, self.tables[k], -1))
        return out


def lexmin(keys: np.ndarray) -> np.ndarray:
    """The lexicographically smallest words of each state over its layouts:
    (states x layouts x words) -> (words x states)."""
    n, layouts, words = keys.shape
    if layouts == 1:
        return keys[:, 0, :].T
    per_word = [np.ascontiguousarray(keys[:, :, w].T) for w in range(words)]  # layouts x states
    out = np.empty((words, n), dtype=np.uint64)
    out[0] = per_word[0].min(axis=0)
    if words > 1:
        same = per_word[0] == out[0]  # layouts still tied for smallest
        for w in range(1, words):
            others = (~same).astype(np.uint64) * np.uint64(2**64 - 1)  # all ones where not tied
            out[w] = (per_word[w] | others).min(axis=0)
            if w + 1 < words:
                same &= per_word[w] == out[w]
    return out
