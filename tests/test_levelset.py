"""A level's one-word keys in a native hash table (kmc/engines/vector/levelset.py,
kmc/semantics/compiled/hashset.py): each chunk finds exactly the keys earlier chunks added,
through the table's growth, with the keys 0 and 2**64 - 1 (the free slot's value) among them,
and the level's end gives every key once, sorted (`insert`, which finds and adds at once, too); on a model of one-word keys the compiled
engine's counts are TLC's and the scalar engine's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kmc.engines.vector.keyset import KeyFormat
from kmc.engines.vector.levelset import EMPTY, LevelSet

hashset = pytest.importorskip("kmc.semantics.compiled.hashset")  # llvmlite: the compiled extra
KERNELS = hashset.HashKernels()
EDGES = [0, 1, int(EMPTY) - 1, int(EMPTY)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.one_of(st.sampled_from(EDGES), st.integers(0, 2**64 - 1), st.integers(0, 50)),
                         max_size=600), max_size=12))
def test_each_chunk_finds_exactly_what_earlier_chunks_added(chunks: list[list[int]]) -> None:
    level = LevelSet(KeyFormat([64]), KERNELS)
    held: set[int] = set()
    for chunk in chunks:
        keys = np.unique(np.array(chunk, dtype=np.uint64))
        assert level.find(keys, []).tolist() == [int(k) in held for k in keys]
        new = keys[~level.find(keys, [])]
        level.add(new, [])
        held |= {int(k) for k in new}
        assert len(level) == len(held) and 2 * len(held) <= max(len(level.table), 1)
    assert level.merged().sort_key.tolist() == sorted(held)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.one_of(st.sampled_from(EDGES), st.integers(0, 2**64 - 1), st.integers(0, 50)),
                         max_size=600), max_size=12), st.integers(0, 3000))
def test_insert_finds_and_adds_in_one_probe_as_find_then_add(chunks: list[list[int]], expected: int) -> None:
    level = LevelSet(KeyFormat([64]), KERNELS, expected)
    held: set[int] = set()
    for chunk in chunks:
        keys = np.unique(np.array(chunk, dtype=np.uint64))
        assert level.insert(keys).tolist() == [int(k) in held for k in keys]
        held |= {int(k) for k in keys}
        assert len(level) == len(held) and 2 * len(held) <= len(level.table)
        assert level.find(keys, []).all()
    assert level.merged().sort_key.tolist() == sorted(held)


def test_the_table_grows_past_its_first_size() -> None:
    rng = np.random.default_rng(7)
    level = LevelSet(KeyFormat([64]), KERNELS)
    first = len(level.table)
    keys = np.unique(rng.integers(0, 2**63, 5 * first, dtype=np.uint64))
    for part in np.array_split(keys, 9):
        level.add(part, [])
    assert len(level.table) >= 2 * len(keys) > 8 * first
    assert level.find(keys, []).all()
    assert not level.find(keys + np.uint64(2**63), []).any()


def test_the_compiled_engine_counts_two_phase_commit_as_the_scalar_engine() -> None:
    from kmc import api, registry

    model, invariants = registry.build(str(Path(__file__).resolve().parents[1] / "examples/two_phase_commit/model.py"), rms=6)
    invariants = registry.select(invariants, ["type-ok", "consistency"])
    compiled = api.check(model, invariants, engine="compiled", workers=2)
    scalar = api.check(model, invariants, engine="scalar")
    # TLC's figures for the TLA+ spec at 6 RMs (tests/reference/tlc-two-phase.md)
    assert compiled.complete and (compiled.distinct_states, compiled.generated_states, compiled.depth) == (50_816, 402_306, 20)
    assert (compiled.distinct_states, compiled.generated_states, compiled.depth) == \
        (scalar.distinct_states, scalar.generated_states, scalar.depth)
