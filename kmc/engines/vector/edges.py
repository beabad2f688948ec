"""The vector engine's state graph, for liveness: every state numbered in breadth-first order
(the order the engine found them) and every step between them as arrays (src, dst, instance).

When properties are checked, the engine keeps each level's packed words and, for each chunk
it expands, its candidate successors as they come out of the level step, before any
deduplication (`Steps.record`: parent number, successor key, instance). After the search,
every successor key is looked up among all states' keys, sorted once, and becomes a number:
an edge then costs two int64 and an instance id. (Expanding the levels a second time instead
would hold no keys but cost the level step again: about as long as the search itself.)
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from kmc.engines.liveness.graph import Graph
from kmc.engines.vector.keyset import first_occurrences
from kmc.engines.vector.levelstep import Candidates, LevelStep
from kmc.model.core import State
from kmc.model.temporal import Property

CHUNK = 1 << 16


class Steps:
    """The steps the search expanded, chunk by chunk: parent numbers, successor keys (words x
    steps), instance ids."""

    def __init__(self) -> None:
        self.parents: list[np.ndarray] = []
        self.keys: list[np.ndarray] = []
        self.iids: list[np.ndarray] = []

    def record(self, step: LevelStep, found: Candidates, first: int) -> None:
        """The candidates of a chunk whose first state is number `first`."""
        self.parents.append((found.rank // step.count + first).astype(np.int32))  # as the engine's parent links
        self.keys.append(found.canonical)
        self.iids.append((found.rank % step.count).astype(step.iid_dtype))


class LivenessGraphBuilder:
    """Every state's packed words (words x states, in id order) and the graph between them."""

    def __init__(self, step: LevelStep, words: np.ndarray, initial: int, steps: Steps,
                 properties: Sequence[Property] = ()):
        self.step = step
        self.words = words
        self.properties = list(properties)
        self._values: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
        n = words.shape[1]
        fmt = step.fmt
        sort_key, extras = fmt.split(words)
        self.sort_key, self.extras, self.id_at = first_occurrences(sort_key, extras, np.arange(n, dtype=np.int64))
        keys = (np.concatenate(steps.keys, axis=1) if steps.keys
                else np.zeros((step.packing.words, 0), dtype=np.uint64))
        steps.keys.clear()
        dsts = [self.ids(keys)]
        del keys
        srcs, iids = steps.parents, steps.iids
        cat = (lambda xs, dt: np.concatenate(xs) if xs else np.zeros(0, dtype=dt))
        self.graph = Graph.of(n, np.arange(initial), cat(srcs, np.int64), cat(dsts, np.int64),
                              cat(iids, step.iid_dtype))

    def ids(self, keys: np.ndarray) -> np.ndarray:
        """The number of each state given by its key (words x states): every one is known.
        The keys are looked up in sorted order (several times faster than in any order: each
        search starts where the last one ended, in memory already cached)."""
        sort_key, extras = self.step.fmt.split(keys)
        order = np.argsort(sort_key)
        sort_key, extras = sort_key[order], [e[order] for e in extras]
        pos = np.searchsorted(self.sort_key, sort_key)
        at = np.minimum(pos, len(self.sort_key) - 1)
        same = self.sort_key[at] == sort_key
        for mine, theirs in zip(self.extras, extras):
            same &= mine[at] == theirs
        for k in np.flatnonzero(~same).tolist():  # another key shares this sort key: look further
            j = int(pos[k])
            while not all(mine[j] == theirs[k] for mine, theirs in zip(self.extras, extras)):
                j += 1
                if j >= len(self.sort_key) or self.sort_key[j] != sort_key[k]:
                    raise AssertionError("a successor's key is not among the explored states")
            at[k] = j
        out = np.empty(len(order), dtype=np.int64)
        out[order] = self.id_at[at]
        return out

    def evaluate(self, prop: Property) -> tuple[np.ndarray, np.ndarray | None]:
        """P (and Q) on every state, by the vector interpretation: the first call evaluates
        every property given at construction, unpacking each chunk once (columns only)."""
        if prop.name not in self._values:
            self._evaluate_all([prop, *(p for p in self.properties if p.name not in self._values)])
        return self._values[prop.name]

    def _evaluate_all(self, props: list[Property]) -> None:
        n = self.words.shape[1]
        out = {p.name: (np.zeros(n, dtype=bool), np.zeros(n, dtype=bool) if p.form == "leads_to" else None)
               for p in props}
        step = self.step
        for start in range(0, n, CHUNK):
            cols = step.packing.unpack_columns(self.words[:, start:start + CHUNK], step.dtype)
            size = cols.shape[1]
            view = step.schema.view(list(cols))
            for prop in props:
                a, b = prop.parts(view, step.X)
                p, q = out[prop.name]
                p[start:start + size] = np.broadcast_to(np.asarray(a) != 0, size)
                if q is not None:
                    q[start:start + size] = np.broadcast_to(np.asarray(b) != 0, size)
        self._values.update(out)

    def state(self, i: int) -> State:
        return tuple(int(v) for v in self.step.unpack(self.words[:, i:i + 1]).rows[0])
