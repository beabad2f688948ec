"""`--workers N`: the vector and compiled engines' search on N threads gives the same run for
every N.

Second computation: the same engine on one worker (every chunk expanded and checked in turn,
in this thread), itself held to the scalar reference by tests/test_vector_parity.py and
tests/test_compiled.py. Levels are cut into chunks of a few states here, so that every level
of these small models is spread over the workers, chunks finish out of order, and a violation
or --max-states stops a level with chunks still in flight.
"""

from __future__ import annotations

from typing import Any

import pytest

from kmc.api import Limits, SearchOptions, check
from kmc.engines.vector import engine as vector
from tests.conftest import build
from tests.test_vector_parity import outcome

TWO_PC = "examples/two_phase_commit/model.py"
RUNS = [
    ("replication", dict(mode="hw"), Limits(), SearchOptions()),  # stops at the first violation
    ("replication", dict(mode="hw"), Limits(), SearchOptions(keep_going=True)),
    ("replication", dict(mode="kip320"), Limits(max_states=3_000), SearchOptions()),
    ("transactions", dict(mode="kip98"), Limits(), SearchOptions(keep_going=True)),
    ("kraft", dict(mode="v3.5", brokers=2, replication_factor=2, init_isr_size=2, unclean_shutdown_limit=1),
     Limits(), SearchOptions(keep_going=True)),
    (TWO_PC, dict(rms=3), Limits(), SearchOptions()),
]


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vector, "_SMALLEST_SHARE", 7)
    monkeypatch.setattr(vector, "_SHARES", 3)


@pytest.mark.parametrize("engine", ["vector", "compiled"])
@pytest.mark.parametrize("name, settings, limits, search", RUNS,
                         ids=[f"{n.split('/')[-2] if '/' in n else n}-{s['mode'] if 'mode' in s else 'rms'}-{i}"
                              for i, (n, s, _, _) in enumerate(RUNS)])
def test_every_number_of_workers_gives_the_same_run(small_chunks: None, engine: str, name: str,
                                                    settings: dict[str, Any], limits: Limits,
                                                    search: SearchOptions) -> None:
    model, invariants = build(name, **settings)
    want = outcome(check(model, invariants, engine=engine, limits=limits, search=search, workers=1))
    for workers in (2, 3):
        assert outcome(check(model, invariants, engine=engine, limits=limits, search=search,
                             workers=workers)) == want


def test_the_default_is_every_core() -> None:
    model, invariants = build("replication", mode="kip320")
    assert outcome(check(model, invariants)) == outcome(check(model, invariants, workers=1))


@pytest.mark.parametrize("args, message", [
    (["--workers", "0"], "Invalid value for '--workers': 0 is not in the range 1<=x<=512"),
    (["--engine", "scalar", "--workers", "2"],
     "kmc: error: --workers 2: the scalar engine runs on one thread; the vector and compiled engines take --workers"),
])
def test_bad_workers_is_one_line_and_exit_2(run_kmc: Any, args: list[str], message: str) -> None:
    rc, out, err = run_kmc("check", "replication", "--mode", "kip320", "-q", *args)
    assert rc == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) <= 3  # click adds its usage lines


def test_one_thread_engines_run_without_the_flag(run_kmc: Any) -> None:
    rc, out, err = run_kmc("check", "replication", "--mode", "kip320", "--engine", "scalar", "-q")
    assert rc == 0, err
