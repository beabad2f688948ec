"""The replication model against TLC on the published TLA+ specification.

Independent source: TLC on the specification (breadth-first, no invariant, deadlock not
checked) for replicas {r1, r2}, log size 2, 2 records, max leader epoch 2: the runs, commands
and printed figures are in tests/reference/tlc-replication.md, table A (PROTOCOL.md section 1
quotes the same figures).
"""

from __future__ import annotations

import pytest

from kmc.engines.explicit import bfs
from kmc.engines.explicit import dfs
from tests.conftest import build

TLC = {
    "hw": (10131, 20),
    "kip101": (9045, 18),
    "kip279": (9027, 18),
    "kip320-first-try": (8429, 18),
    "kip320": (5973, 18),
}


@pytest.mark.parametrize("mode", list(TLC))
def test_complete_state_graph_matches_tlc(mode: str) -> None:
    model, _ = build("replication", mode=mode)
    result = bfs.check(model, [])
    assert (result.distinct_states, result.depth) == TLC[mode]
    assert result.complete


@pytest.mark.parametrize("mode", ["hw", "kip320"])
def test_dfs_reaches_the_same_states(mode: str) -> None:
    model, _ = build("replication", mode=mode)
    assert dfs.check(model, []).distinct_states == TLC[mode][0]
