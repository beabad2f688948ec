"""Two-phase commit, kmc against TLC, in one sitting: whole process to whole process.

For each number of resource managers, this runs TLC on Lamport's TwoPhase specification
(tlaplus/Examples, specifications/transaction_commit) and `kmc check` on
examples/two_phase_commit/model.py, both checking the same two invariants (TPTypeOK and
TCConsistent: kmc's type-ok and consistency) over the whole state graph, one after the other,
and prints a table: distinct states (which must be equal), seconds, the ratio, and kmc's peak
resident memory per distinct state. The seconds are wall-clock times of each whole process,
start-up and parsing included, as `time` would show them.

Nothing of TLC or the specification is in this repository: fetch them first, as
tests/reference/tlc-two-phase.md says, then

    python benchmarks/two_phase_vs_tlc.py --tlc-jar /tmp/tlc/tla2tools.jar \\
        --spec-dir /tmp/tlc --rms 7,8,9,10 --workers 2

TLC's scratch files (its configurations, its states/ folder) go to a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "examples" / "two_phase_commit" / "model.py"

# TLC cannot name TC!TCConsistent in a configuration: this module gives it a plain name
WRAPPER = """---- MODULE TwoPhaseMC ----
EXTENDS TwoPhase
TCConsistent == TC!TCConsistent
====
"""


@dataclass
class Run:
    distinct: int
    depth: int
    seconds: float
    peak_bytes: int | None = None  # kmc only: its peak resident memory


def run_tlc(jar: Path, spec_dir: Path, rms: int, workers: int, scratch: Path, log: Path | None) -> Run:
    for name in ("TwoPhase.tla", "TCommit.tla"):
        shutil.copy(spec_dir / name, scratch / name)
    (scratch / "TwoPhaseMC.tla").write_text(WRAPPER)
    rm_set = ", ".join(f"r{i}" for i in range(1, rms + 1))
    cfg = scratch / f"TwoPhase-{rms}.cfg"
    cfg.write_text(f"CONSTANT RM = {{{rm_set}}}\nINIT TPInit\nNEXT TPNext\n"
                   "INVARIANT TPTypeOK\nINVARIANT TCConsistent\n")
    command = ["java", "-XX:+UseParallelGC", "-cp", str(jar), "tlc2.TLC", "-workers", str(workers),
               "-config", cfg.name, "TwoPhaseMC.tla"]
    started = time.perf_counter()
    out = subprocess.run(command, cwd=scratch, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if log is not None:
        log.write_text(f"$ {' '.join(command)}\n{cfg.read_text()}\n{out.stdout}{out.stderr}")
    found = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found", out.stdout)
    depth = re.search(r"depth of the complete state graph search is (\d+)", out.stdout)
    if out.returncode != 0 or not found or not depth or "No error has been found" not in out.stdout:
        sys.exit(f"TLC failed on {rms} RMs (exit {out.returncode}):\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return Run(int(found.group(2).replace(",", "")), int(depth.group(1)), seconds)


def run_kmc(rms: int, symmetry: bool) -> Run:
    command = [str(Path(sys.executable).parent / "kmc"), "check", str(MODEL), "--rms", str(rms), "--invariant", "type-ok",
               "--invariant", "consistency", "--json", "--quiet"] + (["--symmetry"] if symmetry else [])
    started = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if out.returncode != 0:
        sys.exit(f"kmc failed on {rms} RMs (exit {out.returncode}):\n{out.stderr[-2000:]}")
    result = json.loads(out.stdout)
    return Run(result["distinct_states"], result["depth"], seconds, result["peak_memory_bytes"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tlc-jar", type=Path, required=True)
    parser.add_argument("--spec-dir", type=Path, required=True, help="holds TwoPhase.tla and TCommit.tla")
    parser.add_argument("--rms", default="7,8,9,10", help="comma-separated numbers of RMs")
    parser.add_argument("--workers", type=int, default=2, help="TLC's -workers")
    parser.add_argument("--log-dir", type=Path, help="keep each TLC run's configuration and output here")
    parser.add_argument("--skip-tlc", default="", help="RMs to run with kmc only (comma-separated)")
    args = parser.parse_args()
    skip = {int(x) for x in args.skip_tlc.split(",") if x}
    print("| RMs | distinct states | depth | kmc s | TLC s | TLC / kmc | kmc peak bytes/state |")
    print("|----:|----------------:|------:|------:|------:|----------:|---------------------:|")
    if args.log_dir is not None:
        args.log_dir.mkdir(parents=True, exist_ok=True)  # before the first run: a missing folder would lose a TLC run
    loads = []
    for rms in [int(x) for x in args.rms.split(",")]:
        load = [os.getloadavg()[0]]  # the machine may be shared: the 1-minute load around each run
        kmc = run_kmc(rms, symmetry=False)
        load.append(os.getloadavg()[0])
        tlc_s, ratio = "not run", ""
        if rms not in skip:
            with tempfile.TemporaryDirectory(prefix="kmc-tlc-") as scratch:
                log = None if args.log_dir is None else args.log_dir / f"tlc-{rms}.txt"
                tlc = run_tlc(args.tlc_jar, args.spec_dir, rms, args.workers, Path(scratch), log)
            if (tlc.distinct, tlc.depth) != (kmc.distinct, kmc.depth):
                sys.exit(f"{rms} RMs: TLC found {tlc.distinct:,} states, depth {tlc.depth}; "
                         f"kmc {kmc.distinct:,}, depth {kmc.depth}")
            tlc_s, ratio = f"{tlc.seconds:.1f}", f"{tlc.seconds / kmc.seconds:.1f}x"
            load.append(os.getloadavg()[0])
        per_state = (kmc.peak_bytes or 0) / kmc.distinct
        print(f"| {rms} | {kmc.distinct:,} | {kmc.depth} | {kmc.seconds:.1f} | {tlc_s} | {ratio} | {per_state:.1f} |",
              flush=True)
        loads.append(f"{rms} RMs: load average {load[0]:.1f} before kmc, {load[1]:.1f} after kmc"
                     + (f", {load[2]:.1f} after TLC" if len(load) > 2 else ""))
        print(f"<!-- {loads[-1]} -->", file=sys.stderr, flush=True)
    print("\n" + "\n".join(loads))


if __name__ == "__main__":
    main()
