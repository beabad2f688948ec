"""Path ranks' order (kmc/engines/spark/ranks.py): rows of 64-bit words sorted as big-endian
byte strings give numpy's lexicographic order over the words, ties in their input order."""

from __future__ import annotations

import numpy as np
import pytest

from kmc.engines.spark import ranks


@pytest.mark.parametrize("words", [1, 2, 3])
def test_lexorder_is_the_order_of_the_words(words: int) -> None:
    rng = np.random.default_rng(words)
    for _ in range(200):
        n = int(rng.integers(1, 300))
        # few distinct values, many zero bytes and zero words (a big-endian string ends in NULs)
        rows = rng.integers(0, 4, (n, words)).astype(np.uint64) << rng.integers(0, 64, (n, words)).astype(np.uint64)
        rows[rng.random((n, words)) < 0.4] = 0
        assert np.array_equal(ranks.lexorder(rows), np.lexsort(rows.T[::-1]))  # np.lexsort is stable too


def test_sorted_runs_merge_into_one_order() -> None:
    """What an owner receives: one run per sender, each already in rank order."""
    rng = np.random.default_rng(7)
    runs = [rng.integers(0, 2**64, (1000, 3), dtype=np.uint64) for _ in range(3)]
    runs = [r[np.lexsort(r.T[::-1])] for r in runs]
    rows = np.concatenate(runs)
    merged = rows[ranks.lexorder(rows)]
    assert [ranks.to_int(r) for r in merged] == sorted(ranks.to_int(r) for r in rows)
