"""kmc's liveness check against its own safety-only run, in one run, and the SCC step alone.

Runs `kmc.check` with the vector engine on one configuration with the model's liveness
properties (no invariants) and prints, from that one run: the exploration's seconds (the
safety-only search), the seconds to build the edge arrays, the seconds to check the
properties (fair SCCs, lassos), the process's CPU seconds and peak resident memory after it
(wall-clock seconds on a shared machine depend on the other load; CPU seconds less), and for each call of the SCC step
(`kmc.engines.liveness.fair.components`) its seconds and its peak of traced allocations
(numpy and scipy allocate through Python's allocator hooks, so tracemalloc sees them; it is
started only around that call). Then the same configuration with `--no-properties` in the same
process, for the ratio.

    python benchmarks/liveness.py replication --mode kip320 --replicas 3 --max-leader-epoch 3
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from typing import Any

import numpy as np

from kmc import registry
from kmc.engines.liveness import fair
from kmc.api import check
from kmc.engines.result import peak_memory_bytes

CALLS: list[tuple[int, float, int]] = []  # (states in the mask, seconds, peak traced bytes)
_components = fair.components


def timed_components(graph: Any, mask: np.ndarray) -> np.ndarray:
    tracemalloc.start()
    started = time.perf_counter()
    out = _components(graph, mask)
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    CALLS.append((int(mask.sum()), seconds, peak))
    return out


def settings_of(argv: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for flag, value in zip(argv[::2], argv[1::2]):
        key = flag.lstrip("-").replace("-", "_")
        out[key] = int(value) if value.isdigit() else value
    return out


def main(argv: list[str]) -> None:
    name, settings = argv[0], settings_of(argv[1:])
    fair.components = timed_components  # type: ignore[assignment]
    model, _ = registry.build(name, **settings)
    props = registry.properties_of(model)
    cpu = time.process_time()
    result = check(model, [], properties=props)
    live_cpu = time.process_time() - cpu
    peak = peak_memory_bytes()
    stats = result.engine_stats["liveness"]
    print(model.title())
    print(f"distinct states {result.distinct_states:,}, edges {stats['edges']:,} "
          f"({stats['graph_bytes'] / 2**20:.0f} MiB of edge arrays)")
    for n, v in result.properties.items():
        print(f"  {n}: holds={v.holds}" + ("" if v.trace is None else f", lasso {v.trace.loop} + "
                                              f"{0 if v.trace.stutters else v.trace.length - v.trace.loop}"))
    print(f"exploration {stats['explore_seconds']:.1f} s, edge arrays {stats['graph_seconds']:.1f} s, "
          f"properties {stats['seconds']:.1f} s, total {result.seconds:.1f} s (wall); "
          f"CPU {live_cpu:.1f} s; peak resident memory {peak / 2**20:.0f} MiB")
    print(f"CPU seconds: {stats['cpu_seconds']}")
    for states, seconds, peak in CALLS:
        print(f"  SCC step: {states:,} states in the sub-graph, {seconds:.2f} s, peak {peak / 2**20:.0f} MiB traced")
    cpu = time.process_time()
    safety = check(model, [])
    safe_cpu = time.process_time() - cpu
    print(f"safety only (no properties), same process: {safety.seconds:.1f} s wall, CPU {safe_cpu:.1f} s; "
          f"with liveness / without: {result.seconds / safety.seconds:.2f}x wall, {live_cpu / safe_cpu:.2f}x CPU")


if __name__ == "__main__":
    main(sys.argv[1:])
