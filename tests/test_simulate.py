"""`kmc simulate`: many random walks at once. Deterministic for a seed, exact distinct-state
counts, violations found and replayed, traces shortened by a bounded search."""

from __future__ import annotations

import os

import pytest

from kmc.engines.simulation.workers import simulate as in_workers
from kmc.engines.simulation.swarm import Swarm, Walks, simulate
from kmc.errors import RunFailed
from kmc.model.core import Backend, Bool, Effect, StateView, action
from kmc.registry import select
from kmc.traces.replay import replay
from tests.conftest import build, states_within


def three_replicas_first_try():
    model, invariants = build("replication", mode="kip320-first-try", replicas=3, max_leader_epoch=3)
    return model, select(invariants, ["strong-isr"])


def test_same_seed_same_run() -> None:
    model, invariants = build("replication", mode="kip320")
    runs = [simulate(model, invariants, Walks(walkers=500, depth=30, seed=s, walks=3000)) for s in (7, 7, 8)]
    figures = [(r.distinct_states, r.generated_states, r.engine_stats["walks"], r.engine_stats["deepest_walk"])
               for r in runs]
    assert figures[0] == figures[1] and figures[0] != figures[2]


def test_distinct_states_are_exact_and_reachable() -> None:
    """The states counted are the walked ones, each once: checked against a plain BFS of the
    whole two-replica graph (TLC's 5,973 states, tests/reference/tlc-replication.md)."""
    model, invariants = build("replication", mode="kip320")
    swarm = Swarm(model, [], Walks(walkers=2000, depth=40, seed=1, walks=40_000), None)
    result = swarm.run()
    reachable = states_within(model, 40)
    assert len(reachable) == 5973
    words = [swarm.seen.sort_key]  # one-word keys: the sort key is the key
    seen = {tuple(int(v) for v in row) for row in swarm.step.packing.unpack(words[0][None, :])}
    assert len(seen) == result.distinct_states and seen <= reachable
    assert result.distinct_states > 4000  # 40,000 walks see most of a 5,973-state graph


def test_walks_end_at_depth_or_where_nothing_is_enabled() -> None:
    # two-phase commit always has a step (receiving a message again changes nothing): walks
    # end at --depth, and 30,000 walks of 20 steps see all of its 288 states (TLC's count for
    # 3 RMs, tests/reference/tlc-two-phase.md)
    model, invariants = build("examples/two_phase_commit/model.py", rms=3)
    result = simulate(model, select(invariants, ["consistency"]), Walks(walkers=1000, depth=20, seed=0, walks=30_000))
    assert result.engine_stats["deepest_walk"] == 20 and result.distinct_states == 288
    assert result.invariants["consistency"].holds is None  # a simulation decides no invariant that holds
    # replication's two-replica graph has states with nothing enabled: no walk reaches depth 100
    model, invariants = build("replication", mode="kip320")
    result = simulate(model, [], Walks(walkers=1000, depth=100, seed=0, walks=5000))
    assert result.engine_stats["deepest_walk"] < 100


@pytest.mark.slow  # 24 to 66 s under load: the default suite finds and shortens hw's (test_cli, the workers' test)
def test_finds_strong_isr_and_shortens_it() -> None:
    model, invariants = three_replicas_first_try()
    result = simulate(model, invariants, Walks(walkers=10_000, seed=1, time_limit=60))
    verdict = result.invariants["strong-isr"]
    assert verdict.holds is False and result.stopped_by == "violation"
    assert result.engine_stats["traces"]["strong-isr"] == "shortest"
    assert verdict.trace is not None and verdict.trace.length == 12  # the vector engine's shortest (test_replication_verdicts)
    replay(verdict.trace, invariants[0])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 2, 3, 4, 5])
def test_finds_strong_isr_from_five_seeds_within_a_minute(seed: int) -> None:
    model, invariants = three_replicas_first_try()
    result = simulate(model, invariants, Walks(walkers=10_000, seed=seed, time_limit=60))
    assert result.invariants["strong-isr"].holds is False


def test_weight_zero_never_fires_a_family() -> None:
    """With the leader's writes weighted 0 no walk ever appends a record: no record id is used."""
    model, invariants = build("replication", mode="kip320")
    swarm = Swarm(model, [], Walks(walkers=500, depth=30, seed=3, walks=2000, weights={"leader_write": 0}), None)
    swarm.run()
    states = swarm.step.packing.unpack(swarm.seen.sort_key[None, :])
    [position] = [j for j, name in enumerate(model.schema.element_names()) if name == "next_record_id"]
    assert set(states[:, position].tolist()) == {0}


def test_cli(run_kmc) -> None:
    rc, out, err = run_kmc("simulate", "replication", "--mode", "kip320", "--walkers", "200", "--walks", "1000",
                           "--seed", "4", "-q")
    assert rc == 0 and "steps/s" in out and "not violated" in out
    # two replicas, hw: strong-isr broken, shortest in 9 steps (TLC, tests/reference/tlc-replication.md,
    # table B); test_finds_strong_isr_and_shortens_it (slow) has three replicas, in-process
    rc, out, err = run_kmc("simulate", "replication", "--mode", "hw", "--invariant", "strong-isr", "--walkers", "10000",
                           "--seed", "1", "--time-limit", "60", "-q")
    assert rc == 12 and "strong-isr  VIOLATED (9 steps, shortest:" in out


@pytest.mark.parametrize("argv,message", [
    (["--weight", "no_such_action=2"], "--weight: no action 'no_such_action'"),
    (["--weight", "leader_write"], "write ACTION=W"),
    (["--weight", "leader_write=-1"], "a weight is a finite number from 0 (never) to 1,000,000"),
    (["--workers", "2", "--engine", "spark"], "--workers is for the vector engine"),
])
def test_bad_weights_exit_2_in_one_line(run_kmc, argv: list[str], message: str) -> None:
    rc, out, err = run_kmc("simulate", "replication", "--walks", "10", *argv)
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1


def union_of_shares(model, invariants, plan: Walks, parts: int) -> tuple[set[int], int]:
    """The states seen and steps taken by each share of `plan`, walked again in this process."""
    union: set[int] = set()
    steps = 0
    for share in plan.shares(parts):
        swarm = Swarm(model, invariants, share, None)
        swarm.walk()
        union |= set(swarm.seen.sort_key.tolist())  # one-word keys: the sort key is the key
        steps += swarm.walker_steps
    return union, steps


def test_spark_spreads_the_walkers_over_partitions(spark_session) -> None:
    """Each partition walks its share of the walks; the driver's count of distinct states is the
    union of theirs, computed again here by running each share in this process."""
    from kmc.engines.spark.engine import SparkOptions
    from kmc.engines.simulation.on_spark import simulate as spark_simulate

    model, invariants = build("replication", mode="kip320")
    plan = Walks(walkers=400, depth=30, seed=5, walks=2000)
    runs = [spark_simulate(model, invariants, plan, SparkOptions(partitions=2)) for _ in range(2)]
    assert runs[0].distinct_states == runs[1].distinct_states
    assert runs[0].engine_stats["partitions"] == 2 and runs[0].engine_stats["walks"] >= 2000
    union, steps = union_of_shares(model, invariants, plan, 2)
    assert runs[0].distinct_states == len(union) and runs[0].generated_states == steps


def test_workers_spread_the_walkers_over_cores() -> None:
    """As with Spark's partitions: each worker walks its share of the walks, and the merged
    count is the union of theirs, walked again here in this process."""
    model, invariants = build("replication", mode="kip320")
    plan = Walks(walkers=400, depth=30, seed=5, walks=2000)
    runs = [in_workers(model, invariants, plan, 2) for _ in range(2)]
    assert runs[0].distinct_states == runs[1].distinct_states
    assert runs[0].engine_stats["workers"] == 2 and len(runs[0].engine_stats["worker_peak_bytes"]) == 2
    union, steps = union_of_shares(model, invariants, plan, 2)
    assert runs[0].distinct_states == len(union) and runs[0].generated_states == steps


def test_workers_stop_at_the_first_violation() -> None:
    """One worker's violation ends the others' walks; the trace is replayed and shortened (two
    replicas, hw: the three-replica run of test_finds_strong_isr_and_shortens_it (slow) takes 5
    to 8 times as long in workers)."""
    model, invariants = build("replication", mode="hw")
    invariants = select(invariants, ["strong-isr"])
    result = in_workers(model, invariants, Walks(walkers=10_000, seed=1, time_limit=60), 2)
    verdict = result.invariants["strong-isr"]
    assert verdict.holds is False and result.stopped_by == "violation" and result.seconds < 60
    assert result.engine_stats["traces"]["strong-isr"] == "shortest"
    # TLC's shortest: 9 steps (tests/reference/tlc-replication.md, table B)
    assert verdict.trace is not None and verdict.trace.length == 9
    replay(verdict.trace, invariants[0])


def test_an_error_in_a_worker_reaches_the_caller() -> None:
    """A model writing outside a field's range fails in the child; the parent raises with the
    child's message."""
    from tests.models.vacuous import Vacuous

    class Overflow(Vacuous):
        @action()
        def bump(self, s: StateView, X: Backend) -> Bool:
            return s.x < 9  # x is declared up to 5

        @bump.effect
        def _(self, s: StateView, X: Backend) -> Effect:
            return {"x": s.x + 1}

    with pytest.raises(RuntimeError, match="outside its range"):
        in_workers(Overflow(), [], Walks(walkers=10, depth=20, walks=100), 2)


def test_a_worker_that_dies_is_one_line() -> None:
    """A child killed outside kmc's control (here it exits as its walks begin, as the kernel's
    OOM killer would end it; the parent builds the model's kernels before forking, so the exit
    is in the child's first call into the model) ends the run with RunFailed, which the CLI
    prints as one line."""
    from tests.models.vacuous import Vacuous

    parent = os.getpid()

    class Dying(Vacuous):
        def initial_states(self):
            if os.getpid() != parent:
                os._exit(3)
            return super().initial_states()

    with pytest.raises(RunFailed, match="a simulation worker died"):
        in_workers(Dying(), [], Walks(walkers=10, depth=20, walks=100), 2)


def kraft_last_replica_standing(**bounds: int):
    model, invariants = build("kraft", mode="v3.5", min_insync_replicas=2, fence_broker_limit=1,
                              unclean_shutdown_limit=1, **bounds)
    return model, select(invariants, ["leader-completeness"])


def test_finds_the_last_replica_standing_at_tlcs_length() -> None:
    model, invariants = kraft_last_replica_standing()
    result = simulate(model, invariants, Walks(walkers=10_000, seed=1, time_limit=60))
    verdict = result.invariants["leader-completeness"]
    assert verdict.holds is False and result.engine_stats["traces"]["leader-completeness"] == "shortest"
    # TLC's counterexample on the same bounds has 7 steps (run b2-LRS-v35, tests/reference/tlc-kraft.md)
    assert verdict.trace is not None and verdict.trace.length == 7
    replay(verdict.trace, invariants[0])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_finds_the_last_replica_standing_on_the_shipped_bounds_from_five_seeds(seed: int) -> None:
    # the specification's shipped cfg with AvoidLastReplicaStanding off: TLC's shortest is 7 steps
    # (run b3i2-LRS-v35, tests/reference/tlc-kraft.md)
    model, invariants = kraft_last_replica_standing(brokers=3, replication_factor=3, init_isr_size=2)
    result = simulate(model, invariants, Walks(walkers=10_000, seed=seed, time_limit=60))
    verdict = result.invariants["leader-completeness"]
    assert verdict.holds is False and verdict.trace is not None and verdict.trace.length == 7
