"""Three replicas, acks=all, min.insync.replicas=2, clean election (PROTOCOL.md section 2,
restated in tests/reference/protocol.md):
epoch-fenced must hold; epoch lets a stale follower's fetch count towards the HW."""

from __future__ import annotations

import pytest

from kmc.engines.vector import engine as vector
from kmc.api import Limits, SearchOptions
from kmc.invariants.fetch import invariants as fetch_invariants
from kmc.model.fetch import Fetch
from kmc.registry import select
from kmc.traces.replay import replay

SAFETY = ["committed-never-lost", "no-log-divergence", "hw-le-leo", "consumed-never-changes"]


def three_replicas(mode: str) -> Fetch:
    return Fetch(mode=mode, replicas=3, acks="all", min_insync_replicas=2, max_leader_epoch=2)


@pytest.mark.slow
def test_epoch_fenced_holds() -> None:
    model = three_replicas("epoch-fenced")
    result = vector.check(model, select(fetch_invariants(model), SAFETY), Limits(), SearchOptions(keep_going=True))
    assert result.complete and result.violated == []


@pytest.mark.slow
def test_epoch_lets_a_stale_fetch_diverge() -> None:
    model = three_replicas("epoch")
    [inv] = select(fetch_invariants(model), ["no-log-divergence"])
    verdict = vector.check(model, [inv]).invariants["no-log-divergence"]
    assert verdict.holds is False and verdict.trace is not None
    replay(verdict.trace, inv)
    last = model.describe(verdict.trace.last)
    assert last["r2"] == "follows r1, epoch 0" and last["r1"] == "leader, epoch 2"
