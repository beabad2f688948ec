"""Transactions: KIP-890's anomalies found in kip98 as shortest traces and absent in kip890
for the same bounds; atomic-commit, no-aborted-reads and zombie-fenced in both; the stories
scripted step by step; invariants shown not to be vacuous by breaking the model."""

from __future__ import annotations

import json

import pytest

from kmc.engines.explicit import bfs
from kmc.engines.vector import engine as vector
from kmc.semantics.scalar import ScalarModel
from kmc.api import Limits, SearchOptions
from kmc.invariants.transactions import invariants as transaction_invariants
from kmc.model.core import Backend, Bool, Effect, StateView
from kmc.model.transactions import Transactions
from kmc.registry import select
from kmc.traces.replay import replay
from kmc.traces.scenario import run_scenario
from tests.conftest import build, violated_lengths_replayed

# shortest counterexample lengths in kip98 with the default bounds: regression pins, kmc's own
# output (first pinned in commits a4cce37 and 7ae23ac, unchanged at c4ec5e9); scalar and vector agree
# on them (tests/test_exactly_once_parity.py), and the plain BFS below confirms each is shortest
KIP98_VIOLATED = {"no-hanging-transaction": 9, "own-transaction": 13, "exactly-once": 16}
BOTH_HOLD = ["atomic-commit", "no-aborted-reads", "zombie-fenced", "type-ok"]

LATE_WRITE = [  # KIP-890's story: a produce request outlives its transaction
    "init_producer_id(p1)", "begin_transaction(p1)", "add_partition(p1, out-0)", "send(p1, out-0)",
    "request_timeout(p1, out-0)", "end_txn(p1, commit=abort)", "write_marker(out-0)",
    "partition_append(p1, out-0)", "complete_txn",
]


def states_within(model: Transactions, steps: int) -> set[tuple[int, ...]]:
    """Every state reachable in at most `steps` steps, by a plain BFS independent of the engines
    (tests/conftest.py has one too, whose frontier keeps duplicates: too slow for this model)."""
    sm = ScalarModel(model)
    seen = set(model.initial_states())
    frontier = set(seen)
    for _ in range(steps):
        frontier = {n for s in frontier for _, n in sm.successors(s)} - seen
        seen |= frontier
    return seen


def failing(model: Transactions, state: tuple[int, ...]) -> list[str]:
    invs = transaction_invariants(model)
    return [invs[k].name for k in ScalarModel(model).violated(state, invs)]


@pytest.mark.parametrize("mode", ["kip98", "kip890"])
def test_verdicts_per_mode(mode: str) -> None:
    model, invariants = build("transactions", mode=mode)
    result = vector.check(model, invariants, Limits(), SearchOptions(keep_going=True))
    assert result.complete
    assert violated_lengths_replayed(result, invariants) == (KIP98_VIOLATED if mode == "kip98" else {})
    assert all(result.invariants[n].holds for n in BOTH_HOLD)


@pytest.mark.parametrize("invariant", [
    "no-hanging-transaction", "own-transaction",
    pytest.param("exactly-once", marks=pytest.mark.slow),  # the plain BFS to 15 steps takes ~7 s
])
def test_kip98_anomalies_are_shortest(invariant: str) -> None:
    model, invariants = build("transactions", mode="kip98")
    [inv] = select(invariants, [invariant])
    verdict = bfs.check(model, [inv]).invariants[invariant]
    assert verdict.holds is False and verdict.trace is not None
    assert verdict.trace.length == KIP98_VIOLATED[invariant]
    replay(verdict.trace, inv)
    sm = ScalarModel(model)
    assert not any(sm.violated(s, [inv]) for s in states_within(model, verdict.trace.length - 1))
    # every one of them is a produce request landing after the producer gave up on it
    steps = [s.instance.label for s in verdict.trace.steps[1:]]
    assert steps.index("request_timeout(producer=p1, partition=out-0)") < steps.index(
        "partition_append(producer=p1, partition=out-0)")


def test_late_write_hangs_in_kip98() -> None:
    model = Transactions(mode="kip98")
    trace = run_scenario(model, LATE_WRITE)
    last = model.describe(trace.last)
    assert last["out-0.log"] == "[ABORT@e0/T1 in0@e0/T1]"
    assert last["coordinator"] == "CompleteAbort T1, epoch 0, partitions {}"
    assert failing(model, trace.last) == ["no-hanging-transaction"]
    # the last stable offset stays at the late record: the consumer can pass the marker only
    assert ScalarModel(model).step(trace.last, next(i for i in model.instances() if i.label ==
                                                    "consume(partition=out-0)")) is not None
    after = run_scenario(model, LATE_WRITE + ["consume(out-0)"])
    with pytest.raises(Exception, match="not enabled"):
        run_scenario(model, LATE_WRITE + ["consume(out-0)", "consume(out-0)"])
    assert model.describe(after.last)["out-0.read_committed"] == "position 1, returned []"


def test_late_write_is_refused_in_kip890() -> None:
    """KIP-890: the abort bumped the epoch and its marker carries it, so the partition fences the
    late request (and verification would refuse it as well: no Ongoing transaction)."""
    model = Transactions(mode="kip890")
    trace = run_scenario(model, LATE_WRITE)
    last = model.describe(trace.last)
    assert last["out-0.log"] == "[ABORT@e1/T1]"
    assert last["p1"] == "ready, epoch 1"
    assert failing(model, trace.last) == []


def test_late_write_joins_the_next_transaction_in_kip98() -> None:
    """The application retries input 0 in T2; T1's late record lands first and T2's commit
    marker commits it too: input 0 twice in the output."""
    model = Transactions(mode="kip98", producers=1)
    steps = LATE_WRITE + [
        "begin_transaction(p1)", "add_partition(p1, out-0)", "send(p1, out-0)", "partition_append(p1, out-0)",
        "send_offsets(p1)", "end_txn(p1, commit=commit)", "write_marker(out-0)", "write_offsets_marker",
        "complete_txn",
    ]
    trace = run_scenario(model, steps)
    last = model.describe(trace.last)
    assert last["out-0.log"] == "[ABORT@e0/T1 in0@e0/T1 in0@e0/T2 COMMIT@e0/T2]"
    assert last["group.offset"] == "1"
    assert failing(model, trace.last) == ["exactly-once", "own-transaction"]


def test_zombie_is_fenced_in_both_modes() -> None:
    """A second instance of the transactional id aborts the first one's transaction; the
    zombie's write in flight is refused by the partition, which has seen the newer epoch in
    the abort marker, and the zombie learns it is fenced from the answer."""
    steps = [
        "init_producer_id(p1)", "begin_transaction(p1)", "add_partition(p1, out-0)", "send(p1, out-0)",
        "init_producer_id(p2)", "write_marker(out-0)", "complete_txn", "partition_append(p1, out-0)",
        "init_producer_id(p2)",
    ]
    for mode in ("kip98", "kip890"):
        model = Transactions(mode=mode)
        trace = run_scenario(model, steps)
        last = model.describe(trace.last)
        assert last["out-0.log"] == "[ABORT@e1/T1]"
        assert (last["p1"], last["p2"]) == ("fenced, epoch 0", "ready, epoch 2")
        assert failing(model, trace.last) == []


class ReadsPastTheLSO(Transactions):
    """A broken consumer: reads up to the log end, as read_uncommitted does."""

    def _reads_to_log_end(self, s: StateView, X: Backend, p: int) -> Bool:
        return s.read_pos[p] < s.log_end[p]

    consume = Transactions.consume.replace(guard=_reads_to_log_end)


class NoEpochFencing(Transactions):
    """A broken partition: takes every write whatever its epoch and sequence."""

    def _appends_anything(self, s: StateView, X: Backend, i: int, p: int) -> Effect:
        effect = dict(super().partition_append.effect(s, X, i, p))
        e, end = s.request_epoch[i][p], s.log_end[p]
        at_end = [o == end for o in self.offsets]
        effect.update({
            "log_kind": {p: [X.ite(at_end[o], 0, s.log_kind[p][o]) for o in self.offsets]},
            "log_epoch": {p: [X.ite(at_end[o], e, s.log_epoch[p][o]) for o in self.offsets]},
            "log_txn": {p: [X.ite(at_end[o], s.request_txn[i][p], s.log_txn[p][o]) for o in self.offsets]},
            "log_input": {p: [X.ite(at_end[o], s.request_input[i][p], s.log_input[p][o]) for o in self.offsets]},
            "log_end": {p: end + 1},
            "part_epoch": {p: X.max_(e, s.part_epoch[p])},
        })
        return effect

    partition_append = Transactions.partition_append.replace(effect=_appends_anything)


@pytest.mark.parametrize("broken,invariant", [(ReadsPastTheLSO, "no-aborted-reads"), (NoEpochFencing, "zombie-fenced")])
def test_invariants_catch_a_broken_model(broken: type[Transactions], invariant: str) -> None:
    model = broken(mode="kip98")
    [inv] = select(transaction_invariants(model), [invariant])
    verdict = vector.check(model, [inv]).invariants[invariant]
    assert verdict.holds is False


def test_compare_prints_the_matrix(run_kmc) -> None:
    rc, out, _ = run_kmc("compare", "transactions", "--modes", "kip98,kip890", "--json", "--quiet")
    data = json.loads(out)
    assert rc == 12
    lengths = {m["column"]: {n: v["trace_length"] for n, v in m["invariants"].items()} for m in data["modes"]}
    assert {n: k for n, k in lengths["kip98"].items() if k is not None} == KIP98_VIOLATED
    assert all(k is None for k in lengths["kip890"].values())


def test_bad_bound_is_refused(run_kmc) -> None:
    rc, _, err = run_kmc("check", "transactions", "--producers", "4")
    assert rc == 2 and "--producers" in err
