"""A Spark sender's candidates (kmc/engines/spark/tasks.py:candidates) do not depend on how its
states are chunked: the keys found by several chunks keep their smallest path rank, and the
batch is sent in rank order. No Spark session: the function runs on the driver's step."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest

from conftest import build
from kmc.engines.spark import ranks as ranks_
from kmc.engines.spark import tasks
from kmc.engines.spark.factory import ModelFactory
from kmc.engines.spark.wire import Packed
from kmc.engines.symmetry import lexmin
from kmc.engines.vector.keyset import first_occurrences
from kmc.engines.vector.levelstep import LevelStep

KRAFT = {"mode": "v3.5", "brokers": 2, "replication_factor": 2, "init_isr_size": 2, "min_insync_replicas": 2,
         "fence_broker_limit": 1, "unclean_shutdown_limit": 1}
NATIVE = importlib.util.find_spec("llvmlite") is not None


def _initial(step: LevelStep, initial: list[Any]) -> Packed:
    """Level 1 as the driver hands it over (kmc/engines/spark/engine.py: _initial)."""
    block = step.block(np.array(initial, dtype=np.int64))
    s, e = step.fmt.split(lexmin(block.keys))
    s, e, first = first_occurrences(s, e, np.arange(len(initial), dtype=np.int64))
    order = np.argsort(first)
    words = None if step.symmetry is None else block.keys[first[order], 0, :]
    return Packed(s[order], [x[order] for x in e], ranks_.initial(len(order), 1), words)


def _same(a: Packed, b: Packed) -> None:
    np.testing.assert_array_equal(a.sort_key, b.sort_key)
    for x, y in zip(a.extras, b.extras, strict=True):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(a.ranks, b.ranks)
    assert (a.words is None) == (b.words is None)
    if a.words is not None:
        np.testing.assert_array_equal(a.words, b.words)


@pytest.mark.parametrize("name,settings,symmetry,compiled", [
    ("replication", {"mode": "kip320"}, True, False),
    ("replication", {"mode": "kip320"}, False, False),
    pytest.param("kraft", KRAFT, False, True, marks=pytest.mark.skipif(not NATIVE, reason="needs llvmlite")),
])
def test_candidates_do_not_depend_on_the_chunks(monkeypatch: pytest.MonkeyPatch, name: str,
                                                settings: dict[str, Any], symmetry: bool, compiled: bool) -> None:
    model, invariants = build(name, **settings)
    if compiled:
        from kmc.engines.compiled.step import CompiledStep

        step: LevelStep = CompiledStep(model, invariants, False)
    else:
        step = LevelStep(model, invariants, symmetry)
    initial = model.initial_states()
    b0, b = max(1, (len(initial) - 1).bit_length()), max(1, (step.count - 1).bit_length())
    job = tasks.Job(ModelFactory.of(model, invariants), symmetry, 2, b0, b)
    level = _initial(step, initial)
    for depth in range(6):
        monkeypatch.setattr(tasks, "expansion_chunk", lambda step: 1 << 20)
        whole, generated = tasks.candidates(job, step, level, depth)
        monkeypatch.setattr(tasks, "expansion_chunk", lambda step: 3)
        chunked, generated_chunked = tasks.candidates(job, step, level, depth)
        assert whole is not None and chunked is not None
        _same(chunked, whole)
        assert generated_chunked == generated
        assert np.array_equal(ranks_.lexorder(whole.ranks), np.arange(len(whole)))  # in rank order
        keys = step.fmt.join(whole.sort_key, whole.extras)
        assert len({tuple(k) for k in keys.T.tolist()}) == len(whole)  # each key once
        level = whole  # the next level's senders expand every candidate (no visited set here)
