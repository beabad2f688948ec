"""numpy's sort on AMD Zen 4: keep numpy's runtime dispatch off its AVX-512 code.

The vector engine spends much of its time sorting uint64 keys (kmc/engines/vector/keyset.py).
numpy sorts them with x86-simd-sort, choosing at run time the widest instruction set the CPU
has. On AMD's Zen 4 (family 25, which has AVX-512) that choice is the slow one: its AVX-512
sort relies on compress-stores, which Zen 4 runs in microcode. Measured on this project's
2-core AMD EPYC (numpy 2.4, 700,000 random uint64 keys): `np.sort` 58 ns a key on the
AVX-512 path, 11 ns on the AVX2 path; `np.argsort` 106 ns against 32 ns. Two-phase commit at
9 RMs: 15.9 s -> 11.2 s (docs/engines.md).

numpy reads `NPY_DISABLE_CPU_FEATURES` once, when it is first imported, so this must run
before anything imports numpy: `kmc/__init__.py` calls it first. It does nothing when numpy
is already imported, when the variable is already set (the user's choice wins), when
`KMC_NUMPY_AVX512=1` asks to keep AVX-512, or on any other CPU. Child processes (Spark's
workers) inherit the variable. Names numpy does not know are ignored by it: AVX512_SKX is
the name numpy before 2.4 gives what 2.4 calls X86_V4.
"""

from __future__ import annotations

import os
import sys

DISABLED = "X86_V4 AVX512_SKX AVX512_ICL AVX512_SPR"


def zen4(cpuinfo: str) -> bool:
    """Whether /proc/cpuinfo's text describes an AMD family-25 CPU with AVX-512 (Zen 4)."""
    head = cpuinfo.split("\n\n", 1)[0]
    fields = dict((k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in head.splitlines()))
    return (fields.get("vendor_id") == "AuthenticAMD" and fields.get("cpu family") == "25"
            and "avx512f" in fields.get("flags", "").split())


def prefer_avx2_sort() -> None:
    """On Zen 4, before numpy is imported: have numpy dispatch to its AVX2 code."""
    if "numpy" in sys.modules or "NPY_DISABLE_CPU_FEATURES" in os.environ or os.environ.get("KMC_NUMPY_AVX512") == "1":
        return
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return
    if zen4(text):
        os.environ["NPY_DISABLE_CPU_FEATURES"] = DISABLED
