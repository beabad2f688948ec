"""CPU seconds of the Spark engine's own work, without Spark: the two tasks of every level
(kmc/engines/spark/tasks.py: expand, own) run in this process over P partitions, with the
serialization Spark does around them (each shuffled record pickled and unpickled, each owner
partition pickled once when persisted and unpickled for each of the three reads of a level),
against the vector engine's CPU seconds on the same configuration. CPU time
(`time.process_time`) does not depend on what else runs on the machine, unlike wall time.

    python benchmarks/spark_task_cpu.py two-phase-commit-8 [--partitions 2]

The configuration is a name from benchmarks/configs.toml; every invariant is evaluated, as
`kmc bench` does. Prints one JSON object: states, levels, the vector engine's CPU seconds,
the tasks' CPU seconds by part, shuffle bytes per state.
"""

from __future__ import annotations

import argparse
import json
import pickle
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

import numpy as np

import kmc.bench as bench
from kmc import registry
from kmc.api import check
from kmc.api import Limits, SearchOptions
from kmc.engines.spark.wire import Packed
from kmc.engines.spark import ranks, tasks
from kmc.engines.spark.factory import ModelFactory
from kmc.engines.vector.keyset import first_occurrences
from kmc.engines.vector.levelstep import LevelStep
from kmc.engines.symmetry import lexmin

CONFIGS = Path(__file__).resolve().parent / "configs.toml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config")
    ap.add_argument("--partitions", type=int, default=2)
    args = ap.parse_args()
    cfg = next(c for c in bench.load(CONFIGS) if c.name == args.config)
    model, invariants = registry.build(cfg.model, cfg.base, **cfg.settings)
    began = time.process_time()
    vector = check(model, invariants, engine="vector", limits=Limits(max_states=None), search=SearchOptions(keep_going=True, symmetry=cfg.symmetry))
    vector_cpu = time.process_time() - began

    P = args.partitions
    step = LevelStep(model, invariants, cfg.symmetry)
    initial = model.initial_states()
    b0, b = max(1, (len(initial) - 1).bit_length()), max(1, (step.count - 1).bit_length())
    job = tasks.Job(ModelFactory.of(model, invariants), cfg.symmetry, P, b0, b)
    cpu: dict[str, float] = defaultdict(float)
    shuffled = 0

    def timed(part: str, f: Callable[..., Any], *a: Any) -> Any:
        t = time.process_time()
        out = f(*a)
        cpu[part] += time.process_time() - t
        return out

    block = step.block(np.array(initial, dtype=np.int64))
    s, e = step.fmt.split(lexmin(block.keys))
    s, e, first = first_occurrences(s, e, np.arange(len(initial), dtype=np.int64))
    level = Packed(s, e, ranks.initial(len(first), 1), None if step.symmetry is None else block.keys[first, 0, :])
    owner = tasks.owner_of(level.sort_key, P)
    parts = [level.take(np.flatnonzero(owner == i)) for i in range(P)]
    stored = [pickle.dumps(tasks.seed(job, 0, [(p, p)])[0], 5) for p in parts]
    depth, distinct = 1, len(first)
    pending = tuple(range(len(invariants)))
    while True:
        received: dict[int, list[Any]] = defaultdict(list)
        for i in range(P):
            held = timed("unpickle owned", pickle.loads, stored[i])
            for o, record in timed("expand", lambda: list(tasks.expand(job, depth - 1, i, [held]))):
                data = timed("pickle shuffled", pickle.dumps, record, 5)
                shuffled += len(data)
                received[o].append(timed("unpickle shuffled", pickle.loads, data))
        new = 0
        for i in range(P):
            held = timed("unpickle owned", pickle.loads, stored[i])
            owned = timed("own", tasks.own, job, None, depth, pending, i, [(held, received[i])])[0]
            stored[i] = timed("pickle owned", pickle.dumps, owned, 5)
            timed("unpickle owned", pickle.loads, stored[i])  # the figures job reads it again
            new += owned.figures.size
        distinct += new
        if not new:
            break
        depth += 1
    total = sum(cpu.values())
    print(json.dumps({"config": cfg.name, "states": distinct, "vector_states": vector.distinct_states,
                      "levels": depth, "vector_cpu": round(vector_cpu, 2), "tasks_cpu": round(total, 2),
                      "parts": {k: round(v, 3) for k, v in cpu.items()},
                      "shuffle_bytes_per_state": round(shuffled / distinct, 1),
                      "vector_over_tasks_on_P_cores": round(vector_cpu / (total / P), 3)}))


if __name__ == "__main__":
    main()
