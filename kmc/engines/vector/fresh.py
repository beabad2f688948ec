"""A chunk of a level on a worker: its states unpacked and checked, expanded, and those of its
candidates' distinct keys that no earlier level holds (the engine's level loop,
kmc/engines/vector/engine.py, then drops what an earlier chunk of the same level found).

A worker reads the visited set, the runs on disk, the key filter and the key codes while the main
thread only adds to them: each store's docstring says how a reader stays right meanwhile.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from kmc.engines.simulation.coverage import Coverage
from kmc.engines.vector.disk import Spill
from kmc.engines.vector.keyset import Distinct, Rows, Visited
from kmc.engines.vector.levels import Level
from kmc.engines.vector.levelstep import Block, Candidates, LevelStep
from kmc.engines.vector.prefilter import KeyFilter
from kmc.engines.vector.treecodes import TreeCodes
from kmc.engines.vector.verdicts import steps_per_state
from kmc.engines.vector.wordcodes import WordCodes


class Search(Protocol):
    """What a worker reads of the search (kmc/engines/vector/engine.py:Search)."""

    @property
    def step(self) -> LevelStep: ...
    @property
    def coverage(self) -> Coverage | None: ...
    @property
    def coded_levels(self) -> bool: ...
    @property
    def tree(self) -> TreeCodes | None: ...
    @property
    def codes(self) -> WordCodes | None: ...
    @property
    def keep_decoded(self) -> bool: ...
    @property
    def seen(self) -> KeyFilter: ...
    @property
    def visited(self) -> Visited: ...
    @property
    def spill(self) -> Spill | None: ...

    def violating(self, block: Block) -> dict[int, np.ndarray]: ...


@dataclass
class Fresh:
    """A chunk's distinct candidates that no earlier level holds, as a worker found them:
    their keys in sort-key order (other words coded), smallest ranks, the order of their
    ranks, and their states (`block`) or packed words (`words`) in that order where the run
    keeps them. Keys with a word the dictionaries did not know yet (`late`, positions) keep
    their raw words for the main thread to code. Tree codes (`fresh_codes`) come sorted, with
    no other words; a late key's code means nothing until the main thread codes it from `raw`,
    [its words, the numbers the worker found]."""

    sort_key: np.ndarray
    extras: list[np.ndarray]
    first: np.ndarray
    order: np.ndarray
    block: Block | None
    words: np.ndarray | None
    late: np.ndarray
    raw: list[np.ndarray]


@dataclass
class Checked:
    """A chunk of a level as a worker expanded it: per invariant still pending, its states that
    break it (ascending); its states; and each one's steps (kmc/engines/vector/verdicts.py)."""

    bad: dict[int, np.ndarray]
    rows: np.ndarray
    steps: np.ndarray
    seconds: float  # to unpack the chunk and check it


def expand(search: Search, level: Level, start: int, stop: int) -> tuple[Candidates | None, Fresh | None, Checked]:
    """The candidates of the states of `level` from `start` to `stop`, those of their distinct
    keys that no earlier level holds, and the states checked (on a worker thread, with N workers)."""
    step = search.step
    began = time.perf_counter()
    block = step.unpack(level.words(start, stop))
    bad = search.violating(block)
    seconds = time.perf_counter() - began
    candidates = step.expand(block, drop_stutter=True)
    checked = Checked(bad, block.rows, steps_per_state(candidates, block.size, step.count), seconds)
    if candidates is None:
        return None, None, checked
    build = candidates.build if search.coverage is not None else None  # new states unpacked for coverage only
    words = None if search.coded_levels or search.tree is not None else candidates.words
    return candidates, fresh_of(search, candidates.canonical, candidates.rank, build, words), checked


def fresh_of(search: Search, canonical: np.ndarray, rank: np.ndarray, build: Callable[[np.ndarray], Block] | None,
             words: Callable[[np.ndarray], np.ndarray] | None) -> Fresh:
    """The distinct keys of candidates (canonical keys, words x candidates; `rank`: their order
    in the scalar engine) that no earlier level holds (`fresh_keys`, `fresh_codes`)."""
    if search.tree is not None:
        return fresh_codes(search, *search.step.distinct_words(canonical, rank), build)
    return fresh_keys(search, search.step.distinct(canonical, rank), build, words)


def fresh_keys(search: Search, distinct: Distinct, build: Callable[[np.ndarray], Block] | None,
               words: Callable[[np.ndarray], np.ndarray] | None) -> Fresh:
    """The distinct keys no earlier level holds, and their states (`build`) or packed words
    (`words`) where the run keeps them. The visited set is read before the runs on disk, as a
    spill adds a run before it empties the set; the dictionaries are read as
    kmc/engines/vector/wordcodes.py:WordCodes.lookup says."""
    s, e, first = distinct
    # the stored keys are compared with these keys' own words, the stored codes decoded:
    # only the keys no earlier level holds are looked up in the dictionaries
    codes = search.codes
    decode = None if codes is None else codes.decode
    fresh = np.flatnonzero(~known(search, s, e, np.flatnonzero(search.seen.maybe(s)), decode))  # in sort-key order
    s, e, ranks = s[fresh], [x[fresh] for x in e], first[fresh]
    late = np.zeros(0, dtype=np.int64)
    raw: list[np.ndarray] = []  # the words of the keys with a word the dictionaries do not know yet
    if codes is not None:
        coded, unknown = codes.lookup(e, search.step.search)
        late = np.flatnonzero(unknown)
        e, raw = coded, [x[late] for x in e]
    order = argsort_unique(ranks)  # the same, in the scalar engine's order
    block = build(ranks[order]) if build is not None else None
    packed = words(ranks[order]) if words is not None else None
    return Fresh(s, e, ranks, order, block, packed, late, raw)


def fresh_codes(search: Search, wide: np.ndarray, first: np.ndarray,
                build: Callable[[np.ndarray], Block] | None) -> Fresh:
    """`fresh_keys` for distinct wide keys (words x keys; `first`: their smallest ranks) coded as
    one word each (kmc/engines/vector/treecodes.py): a key with a part the tree's settled
    tables lack is new, and keeps its words and the numbers found for the main thread to code."""
    assert search.tree is not None
    codes, missing, numbers = search.tree.find(wide)
    by_code = np.argsort(codes)  # searched in order
    codes, first, missing = codes[by_code], first[by_code], missing[by_code]
    fresh = np.flatnonzero(~known(search, codes, [], np.flatnonzero(search.seen.maybe(codes) & ~missing)))
    codes, ranks = codes[fresh], first[fresh]
    late = np.flatnonzero(missing[fresh])
    at = by_code[fresh[late]]
    order = argsort_unique(ranks)  # in the scalar engine's order
    block = build(ranks[order]) if build is not None else None
    words = np.ascontiguousarray(wide[:, by_code[fresh[order]]]) if search.keep_decoded else None  # a small level's
    return Fresh(codes, [], ranks, order, block, words, late, [np.ascontiguousarray(wide[:, at]), numbers[:, at]])


def known(search: Search, s: np.ndarray, e: Sequence[np.ndarray], maybe: np.ndarray, decode: Any = None) -> np.ndarray:
    """Whether each key (sort keys, other words) is in an earlier level: in the visited set, or
    a run on disk; only those at `maybe` can be (the others have no bit in the filter)."""
    found = np.zeros(len(s), dtype=bool)
    found[maybe] = search.visited.find(s[maybe], [Rows(x, maybe) for x in e], decode)[0]
    spill = search.spill
    if spill is not None:
        unsure = maybe[~found[maybe]]
        found[unsure] = spill.find(s[unsure], [Rows(x, unsure) for x in e], decode)
    return found


def argsort_unique(values: np.ndarray) -> np.ndarray:
    """argsort of distinct non-negative ints, by sorting value * 2**b + index when that fits
    in 63 bits (numpy sorts several times faster than it argsorts)."""
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    shift = max(n - 1, 1).bit_length()
    if int(values.max()) >= 1 << (63 - shift):
        return np.argsort(values)
    combined = (values.astype(np.int64) << shift) | np.arange(n, dtype=np.int64)
    combined.sort()
    return combined & ((1 << shift) - 1)
