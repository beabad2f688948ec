"""Parent links kept as child counts (kmc/engines/vector/links.py): every state's parent read
back from the counts is the one the level recorded (second computation: the parents themselves)."""

from __future__ import annotations

import numpy as np
import pytest

from kmc.engines.vector.links import Parents


@pytest.mark.parametrize("before, instances, empty", [(1, 3, 0.0), (10_000, 5, 0.5), (9_000, 300, 0.9), (5, 2, 1.0)])
def test_each_state_has_the_parent_it_was_found_from(before: int, instances: int, empty: float) -> None:
    rng = np.random.default_rng(before)
    children = np.where(rng.random(before) < empty, 0, rng.integers(0, instances + 1, before))
    parents = np.repeat(np.arange(before), children).astype(np.int32)
    links = Parents.of(parents, before, instances)
    assert len(links) == before and links.children.dtype == np.min_scalar_type(instances)
    assert np.array_equal(links.indices(), parents)
    for index in [*range(min(len(parents), 50)), *rng.integers(0, max(len(parents), 1), 200)]:
        if index < len(parents):
            assert links[int(index)] == parents[index]
    assert links.nbytes == before * links.children.dtype.itemsize
