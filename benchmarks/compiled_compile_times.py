"""Cold and cached compile times of the compiled interpretation (benchmarks/results/compiled.md).

Each model's kernels are built in a fresh cache directory (cold: traced, emitted as LLVM IR,
compiled), then again in a new process (cached: read by the model's fingerprint, nothing
traced). Run: PYTHONPATH=. python benchmarks/compiled_compile_times.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

CONFIGS = {
    "replication (kip320, defaults)": ("replication", {}),
    "2PC 9 RMs": ("examples/two_phase_commit/model.py", {"rms": 9}),
    "kraft kip966 b2 MinISR 2 U1 F1": ("kraft", dict(mode="kip966", brokers=2, replication_factor=2, init_isr_size=2,
                                                    min_insync_replicas=2, fence_broker_limit=1,
                                                    unclean_shutdown_limit=1)),
    "kraft v3.5 shipped (b3 RF3 ISR2 MinISR2 U1 F1)": ("kraft", dict(mode="v3.5-avoid-lrs", brokers=3,
                                                                    replication_factor=3, init_isr_size=2,
                                                                    min_insync_replicas=2, fence_broker_limit=1,
                                                                    unclean_shutdown_limit=1)),
}

ONE = """
import sys, time
from kmc import registry
name, settings = sys.argv[1], eval(sys.argv[2])
model, invariants = registry.build(name, **settings)
started = time.perf_counter()
from kmc.semantics.compiled.kernels import Kernels
k = Kernels(model, invariants)
print(f"{time.perf_counter() - started:.2f} {len(k.names)} {model.instances().__len__()} {k.compiled_now}")
"""


def main() -> None:
    for title, (name, settings) in CONFIGS.items():
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, XDG_CACHE_HOME=cache)
            times = []
            for _ in range(2):
                out = subprocess.run([sys.executable, "-c", ONE, name, repr(settings)], env=env, check=True,
                                     capture_output=True, text=True).stdout.split()
                times.append(out)
            (cold, kernels, instances, c1), (cached, _, _, c2) = times
            assert c1 == "True" and c2 == "False"
            print(f"| {title} | {instances} | {kernels} | {cold} s | {cached} s |", flush=True)


if __name__ == "__main__":
    main()
