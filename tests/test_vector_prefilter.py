"""kmc/engines/vector/prefilter.py: the bit filter never says "certainly not" of a key it holds,
while it fills beyond its size and through its rebuilds, and says it of most keys it does not
hold."""

from __future__ import annotations

import numpy as np

from kmc.engines.vector.prefilter import BITS_PER_KEY, KeyFilter


def test_no_false_negatives_across_growth() -> None:
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 2**63, 300_000, dtype=np.uint64)
    f = KeyFilter()
    added = np.zeros(0, dtype=np.uint64)
    for part in np.array_split(keys, 13):  # 13 additions: the filter grows several times
        added = np.concatenate([added, part])
        f.add(part)  # added chunk by chunk, as a level's keys are
        assert f.maybe(added).all()
        f.fit([added])  # rebuilt at the level's end when too full
        assert f.maybe(added).all()
    assert (1 << f.bits) >= BITS_PER_KEY * len(keys)
    others = rng.integers(0, 2**63, 100_000, dtype=np.uint64)
    # at most one bit in 8 set: about 1 in 8 keys not held pass (plus the odd shared key)
    assert f.maybe(others).mean() < 0.16


def test_native_marks_are_the_filter_s_bits() -> None:
    """With the compiled key kernels' marks (each key's byte fetched ahead), the filter's table
    is the numpy filter's, bit for bit, after every addition and rebuild, and so are its answers."""
    import pytest

    pytest.importorskip("llvmlite")
    from kmc.semantics.compiled.keys import KeyKernels

    rng = np.random.default_rng(3)
    keys = rng.integers(0, 2**64 - 1, 200_000, dtype=np.uint64, endpoint=True)
    plain, native = KeyFilter(), KeyFilter(KeyKernels(1))
    added = np.zeros(0, dtype=np.uint64)
    for part in np.array_split(keys, 7):
        added = np.concatenate([added, part])
        for f in (plain, native):
            f.add(part)
        assert np.array_equal(plain.table, native.table)
        for f in (plain, native):
            f.fit([added])
        assert native.bits == plain.bits and np.array_equal(plain.table, native.table)
    others = rng.integers(0, 2**64 - 1, 50_000, dtype=np.uint64, endpoint=True)
    assert np.array_equal(plain.maybe(others), native.maybe(others)) and native.maybe(added).all()
    # fewer keys than the kernels fetch ahead: none, one, a few
    for part in (keys[:0], keys[:1], keys[1:5]):
        for f in (plain, native):
            f.add(part)
        assert np.array_equal(plain.table, native.table)
        assert np.array_equal(plain.maybe(part), native.maybe(part)) and native.maybe(part).all()


def test_a_run_s_own_filter_holds_its_keys_alone() -> None:
    """KeyFilter.of, a level's filter on disk: every key of its run passes, 8 to 16 bits a key,
    most other keys do not (second computation: the keys themselves)."""
    rng = np.random.default_rng(11)
    for n in (0, 5, 8_000, 100_000):
        keys = rng.integers(0, 2**63, n, dtype=np.uint64)
        f = KeyFilter.of(keys)
        assert f.maybe(keys).all() and f.n == n
        assert (1 << f.bits) >= BITS_PER_KEY * n and (n < 8_192 or (1 << f.bits) < 2 * BITS_PER_KEY * n)
        others = rng.integers(0, 2**63, 50_000, dtype=np.uint64)
        assert f.maybe(others).mean() < 0.16
