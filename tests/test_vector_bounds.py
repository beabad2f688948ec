"""The sparse index of a run on disk (kmc/engines/vector/bounds.py) gives numpy's searchsorted:
the second computation is np.searchsorted itself, over runs of every size around the index's
spacing, with long stretches of one repeated value, keys at both ends of uint64 and keys below
and above every stored one; with numpy's halvings and with the native kernels."""

from __future__ import annotations

from typing import Iterator

import numpy as np
from kmc.engines.vector.bounds import EVERY, PAGE, Index, lower_bounds, lower_bounds_from

SIZES = [0, 1, 2, EVERY - 1, EVERY, EVERY + 1, 2 * EVERY, 2 * EVERY + 1, 3 * EVERY - 5, 50_000]


def runs() -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(sorted sort keys, keys searched) for each size: a quarter of the run one repeated value
    (crossing sampled positions), the keys half stored ones, half random, both ends of uint64."""
    rng = np.random.default_rng(29)
    for size in SIZES:
        stored = np.concatenate([rng.integers(0, 2**64 - 1, size - size // 4, dtype=np.uint64, endpoint=True),
                                 np.repeat(rng.integers(0, 2**64 - 1, 1, dtype=np.uint64), size // 4)])
        ascending = np.sort(stored)
        keys = np.concatenate([rng.integers(0, 2**64 - 1, 700, dtype=np.uint64, endpoint=True),
                               ascending[rng.integers(0, size, 700)] if size else np.zeros(0, np.uint64),
                               np.array([0, 2**64 - 1], dtype=np.uint64)])
        yield ascending, np.sort(keys)


def test_numpy_halvings_count_the_keys_below_in_each_range() -> None:
    rng = np.random.default_rng(3)
    ascending = np.sort(rng.integers(0, 1000, 5000, dtype=np.uint64))
    keys = rng.integers(0, 1001, 3000, dtype=np.uint64)
    for span in (1, 2, 7, EVERY - 1):
        start = rng.integers(0, len(ascending) - span + 1, len(keys))
        expect = start + np.array([np.count_nonzero(ascending[s:s + span] < k) for s, k in zip(start, keys)])
        assert np.array_equal(lower_bounds_from(ascending, keys, start, span), expect), span


def test_indexed_lower_bounds_are_searchsorted() -> None:
    """Runs starting anywhere in a page (the index's first sampled key at a page's start)."""
    for stored, keys in runs():
        for shift in (0, 1, 17, EVERY - 1):
            room = np.zeros(len(stored) + EVERY + shift, dtype=np.uint64)
            at = (-room.ctypes.data % PAGE) // 8 + shift
            ascending = room[at:at + len(stored)]
            ascending[:] = stored
            index = Index(ascending)
            assert index.first == (EVERY - shift) % EVERY or not len(ascending)
            assert np.array_equal(index.keys, ascending[index.first::EVERY])
            got = index.lower_bounds(ascending, keys, lower_bounds, lower_bounds_from)
            assert np.array_equal(got, np.searchsorted(ascending, keys)), (len(ascending), shift)


def test_native_indexed_lower_bounds_are_searchsorted() -> None:
    """The compiled engine's kernels (kmc/semantics/compiled/keys.py) in place of numpy's."""
    from kmc.semantics.compiled.keys import KeyKernels

    native = KeyKernels(3)
    for ascending, keys in runs():
        got = Index(ascending).lower_bounds(ascending, keys, native.lower_bounds, native.lower_bounds_from)
        assert np.array_equal(got, np.searchsorted(ascending, keys)), len(ascending)
