"""Wide keys coded as one word each, exactly, by tree compression.

A key of W words (kmc/engines/vector/packing.py; 47 for 3-broker kraft) is the leaves of a
fixed binary tree: each word is numbered in its own table of the values it has taken
(`Interned`), and each inner node, the pair (left child's number << 32 | right child's
number), is numbered in one table shared by all the inner nodes. The root is not numbered:
the pair of its children's numbers is the key's *code*, one uint64. Each table numbers its
values one-to-one (in the order they are first met), so two keys have the same code exactly
when they are equal, and a code gives its key back (`decode`): no fingerprints.

Kraft's states share most of their subtrees: on the first 5.3 million states of its shipped
configuration the tree's inner nodes took 0.71 numbers a state, and fewer the more states
(1.1 at 0.8 million), so a state costs its code (8 bytes) and a fraction of a table entry,
where its coded words took 41 bytes (kmc/engines/vector/wordcodes.py).

Workers number keys while the main thread adds to the tables: `find` reads only the numbers
given before the tables were last `settle`d (a level's end, while no worker runs), and says
which keys it could not number; `code`, on one thread, numbers keys and adds what is new.
A key `find` cannot number has a leaf or an inner node first met since: no key settled holds it.
"""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from kmc.errors import RunFailed

U64 = np.uint64
FREE = np.uint32(0xFFFFFFFF)  # an empty slot; from `find`, a key it could not number (the kernels' FREE)
_FIRST_SLOTS = 1 << 10
_LOAD = 0.5  # the most of its slots a table fills: 0.75 took 11.1 bytes a state where this takes 15.6, and found 10-30 % slower (kraft v3.5's first 7.5 million states)


class InternKernels(Protocol):
    """The native kernels of the tables (kmc/semantics/compiled/intern.py)."""

    def intern(self, slots: np.ndarray, values: np.ndarray, count: np.ndarray, keys: np.ndarray) -> np.ndarray: ...

    def find(self, slots: np.ndarray, values: np.ndarray, limit: int, keys: np.ndarray) -> np.ndarray: ...

    def tree_decode(self, codes: np.ndarray, left: np.ndarray, right: np.ndarray, root: tuple[int, int],
                    tables: Sequence[tuple[np.ndarray, int]], out: np.ndarray) -> int: ...

    def tree(self, coding: bool, keys: np.ndarray, left: np.ndarray, right: np.ndarray,
             tables: Sequence[tuple[np.ndarray, np.ndarray, int | np.ndarray]], numbers: np.ndarray) -> None: ...


class Interned:
    """uint64 values numbered 0, 1, ... in the order first met: `values` (number -> value,
    with room to grow) and an open-addressed table of their numbers (`slots`, load at most
    1/2). One thread numbers (`intern`); any may `find` among the first `settled` numbers."""

    def __init__(self, kernels: InternKernels):
        self.kernels = kernels
        self.count = np.zeros(1, dtype=np.int64)
        self.values = np.zeros(_FIRST_SLOTS // 2, dtype=U64)
        self.slots = np.full(_FIRST_SLOTS, FREE, dtype=np.uint32)
        # what `find` reads, replaced as one tuple: (slots, values, settled)
        self.view: tuple[np.ndarray, np.ndarray, int] = (self.slots, self.values, 0)

    def __len__(self) -> int:
        return int(self.count[0])

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Each key's number among those settled, else FREE."""
        slots, values, settled = self.view
        return self.kernels.find(slots, values, settled, keys)

    def intern(self, keys: np.ndarray) -> np.ndarray:
        """Each key's number, new keys numbered next."""
        numbers = self.kernels.find(self.slots, self.values, len(self), keys)  # this thread's: all of them
        new = np.flatnonzero(numbers == FREE)
        if len(new):
            numbers[new] = self._add(keys[new])
        return numbers

    def _add(self, keys: np.ndarray) -> np.ndarray:
        """Numbers for keys not held (some may repeat), with room made for them first."""
        self.reserve(len(keys))
        return self.kernels.intern(self.slots, self.values, self.count, keys)

    def reserve(self, more: int) -> None:
        """Room for `more` new values (the old arrays stay as a `find` under way reads them)."""
        need = len(self) + more
        if need >= int(FREE):
            raise RunFailed("the tree codes' tables are full: more than 4,294,967,294 distinct subtrees of the "
                            "states' keys (32-bit numbers); the checkpoint holds the levels done")
        if need > len(self.values):  # a quarter more: the old array lives on while a `find` reads it
            values = np.empty(max(need, len(self.values) + len(self.values) // 4), dtype=U64)
            values[:len(self)] = self.values[:len(self)]
            self.values = values
        if need > _LOAD * len(self.slots):  # rehashed into a new table: the old one stays as `find` read it
            size = len(self.slots)
            while need > _LOAD * size:
                size *= 2
            slots = np.full(size, FREE, dtype=np.uint32)
            self.kernels.intern(slots, self.values, np.zeros(1, dtype=np.int64), self.values[:len(self)].copy())
            self.slots = slots
        self.view = (self.slots, self.values, self.view[2])

    def settle(self) -> None:
        """Let `find` read every number given so far (call while no thread finds)."""
        self.view = (self.slots, self.values, len(self))

    def settled(self) -> np.ndarray:
        """The values of the numbers settled, by number."""
        _, values, settled = self.view
        return values[:settled]

    def extend(self, values: np.ndarray) -> bool:
        """Number `values` next, in order, as a checkpoint kept them: False (and the table
        unusable) unless they are distinct and new."""
        first = len(self)
        numbers = self.intern(np.ascontiguousarray(values, dtype=U64))
        self.settle()
        return bool(np.array_equal(numbers, np.arange(first, first + len(values), dtype=np.uint32)))

    def nbytes(self) -> int:
        return self.values.nbytes + self.slots.nbytes


class TreeCodes:
    """The codes of keys of `words` words (see the module's docstring)."""

    def __init__(self, words: int, kernels: InternKernels):
        assert words >= 2
        self.words = words
        # inner nodes bottom-up, each (left child, right child): a child < words is that leaf,
        # else inner node child - words; the last one is the root
        self.nodes: list[tuple[int, int]] = []
        self._split(0, words)
        self.leaves = [Interned(kernels) for _ in range(words)]
        self.inner = Interned(kernels)
        self.kernels = kernels
        # each numbered inner node's children, as rows of the numbers (a leaf's row is its word)
        self.left = np.array([left for left, _ in self.nodes[:-1]], dtype=np.int64)
        self.right = np.array([right for _, right in self.nodes[:-1]], dtype=np.int64)
        self.kept = [0] * (words + 1)  # each table's values a checkpoint holds (`parts`)

    def _split(self, lo: int, hi: int) -> int:
        """The child that stands for leaves lo..hi-1."""
        if hi - lo == 1:
            return lo
        mid = (lo + hi) // 2
        left, right = self._split(lo, mid), self._split(mid, hi)
        self.nodes.append((left, right))
        return self.words + len(self.nodes) - 1

    def find(self, words: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(codes, missing, numbers) of keys given as words (W x N): `missing` where a key has a
        leaf or inner node not settled (its code then means nothing); `numbers`, each leaf's and
        inner node's (but the root's) number, FREE where not settled, for `code` to go on from.
        Reads only: any thread."""
        numbers = np.empty((self.words + len(self.nodes) - 1, words.shape[1]), dtype=np.uint32)
        views = [table.view for table in (*self.leaves, self.inner)]  # each as the last settle left it
        self.kernels.tree(False, words, self.left, self.right, [(a, v, settled) for a, v, settled in views], numbers)
        left, right = self.nodes[-1]  # a part not settled leaves its parent's pair unknown, up to the root
        return _pair(numbers[left], numbers[right]), (numbers[left] == FREE) | (numbers[right] == FREE), numbers

    def code(self, words: np.ndarray, numbers: np.ndarray | None = None) -> np.ndarray:
        """The codes of keys given as words (W x N), numbering what is new: one thread. Given
        `numbers` (`find`'s for these keys), only their FREE ones are looked up."""
        if numbers is None:
            numbers = np.full((self.words + len(self.nodes) - 1, words.shape[1]), FREE, dtype=np.uint32)
        numbers = np.ascontiguousarray(numbers)
        unknown = np.count_nonzero(numbers == FREE, axis=1)  # at most this many new values a table
        for w, leaf in enumerate(self.leaves):
            leaf.reserve(int(unknown[w]))
        self.inner.reserve(int(unknown[self.words:].sum()))
        tables = [(t.slots, t.values, t.count) for t in (*self.leaves, self.inner)]
        self.kernels.tree(True, words, self.left, self.right, tables, numbers)
        left, right = self.nodes[-1]
        return _pair(numbers[left], numbers[right])

    def settle(self) -> None:
        """Let `find` read every number given so far (a level's end: no worker runs)."""
        for table in (*self.leaves, self.inner):
            table.settle()

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """The words (W x N) of keys given as codes, read among the numbers settled: IndexError
        for a number not among them (a code no key settled has)."""
        words = np.empty((self.words, len(codes)), dtype=U64)
        views = [t.view for t in (*self.leaves, self.inner)]  # each read once: main may replace it
        tables = [(values, settled) for _, values, settled in views]
        if self.kernels.tree_decode(codes, self.left, self.right, self.nodes[-1], tables, words):
            raise IndexError("a code with a number its table has not settled")
        return words

    def bound(self) -> int:
        """One more than the largest number given in any table."""
        return max(len(t) for t in (*self.leaves, self.inner))

    def tables(self) -> dict[str, Interned]:
        """The tables by the names of the files a checkpoint keeps them in."""
        return {**{f"tree-leaf-{w}": leaf for w, leaf in enumerate(self.leaves)}, "tree-inner": self.inner}

    def parts(self) -> dict[str, np.ndarray]:
        """Each table's values numbered since the last call (the first: all of them): what a
        checkpoint keeps with a level."""
        out = {}
        for k, (name, table) in enumerate(self.tables().items()):
            out[name] = table.values[self.kept[k]:len(table)].copy()
            self.kept[k] = len(table)
        return out

    def nbytes(self) -> int:
        """The tables' memory."""
        return sum(t.nbytes() for t in (*self.leaves, self.inner))


def _pair(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    return (left.astype(U64) << U64(32)) | right.astype(U64)
