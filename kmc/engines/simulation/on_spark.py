"""`kmc simulate --engine spark`: the swarm spread over Spark partitions.

Each partition runs a swarm of its own (kmc/engines/simulation/swarm.py) with its share of the
walkers and of the walks (`Walks.shares`: every walk keeps its own random stream), so a cluster
simulates more and a run with `--walks` sees the same states for any number of partitions. The executors rebuild the model from a
`ModelFactory` (kmc/engines/spark/factory.py), as the Spark search does. The driver merges what
they found: the union of the states they saw (exactly, through the key set), their figures,
and per invariant the violation of the lowest partition, which it replays and tries to shorten.
"""

from __future__ import annotations

from typing import Sequence

from kmc.engines.result import CheckResult
from kmc.engines.simulation.swarm import Findings, Swarm, Walks
from kmc.engines.spark.engine import SparkOptions
from kmc.engines.spark.factory import ModelFactory
from kmc.engines.spark.session import start
from kmc.model.core import Invariant, Model


def simulate(model: Model, invariants: Sequence[Invariant], walks: Walks, options: SparkOptions) -> CheckResult:
    factory = ModelFactory.of(model, invariants)
    driver = Swarm(model, invariants, walks, None)  # checks the plan (weights, an end) before Spark starts
    begun = start(options.master, options.partitions, dict(options.conf))
    sc = begun.session.sparkContext
    partitions = options.partitions or max(sc.defaultParallelism, 1)
    factory.ship(sc)
    plans = walks.shares(partitions)
    outcomes = sc.parallelize(list(enumerate(plans)), partitions).map(lambda job: run_share(factory, job)).collect()
    driver.merge([o for _, o in sorted(outcomes, key=lambda x: x[0])])
    return driver.result("spark-simulate", {"master": options.master, "partitions": partitions,
                                            "session_start_seconds": round(begun.seconds, 2)})


def run_share(factory: ModelFactory, job: tuple[int, Walks]) -> tuple[int, Findings]:
    """On an executor: one partition's swarm."""
    p, walks = job
    model, invariants = factory.build()
    factory.check_rebuilt(model, invariants)
    swarm = Swarm(model, invariants, walks, None)
    swarm.walk()
    return p, swarm.outcome()
