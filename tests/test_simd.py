"""kmc/simd.py: numpy's AVX-512 dispatch is turned off on AMD Zen 4 only, and never over the user's choice."""

from __future__ import annotations

import os
import subprocess
import sys

from kmc.simd import DISABLED, zen4

FLAGS = "fpu sse2 avx avx2 avx512f avx512dq"


def cpuinfo(vendor: str, family: int, flags: str) -> str:
    return f"processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: 17\nflags\t\t: {flags}\n\nprocessor\t: 1\n"


def test_zen4_is_amd_family_25_with_avx512():
    assert zen4(cpuinfo("AuthenticAMD", 25, FLAGS))
    assert not zen4(cpuinfo("AuthenticAMD", 25, "fpu sse2 avx avx2"))  # Zen 3 is family 25 too, without AVX-512
    assert not zen4(cpuinfo("AuthenticAMD", 26, FLAGS))
    assert not zen4(cpuinfo("GenuineIntel", 6, FLAGS))
    assert not zen4("")


def run(env: dict[str, str]) -> str:
    code = "import os, kmc; print(os.environ.get('NPY_DISABLE_CPU_FEATURES', '-'))"
    clean = {k: v for k, v in os.environ.items() if k not in ("NPY_DISABLE_CPU_FEATURES", "KMC_NUMPY_AVX512")}
    return subprocess.run([sys.executable, "-c", code], env=clean | env, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_the_users_setting_wins():
    assert run({"NPY_DISABLE_CPU_FEATURES": "AVX2"}) == "AVX2"
    assert run({"KMC_NUMPY_AVX512": "1"}) == "-"


def test_set_on_this_machine_only_if_zen4():
    try:
        with open("/proc/cpuinfo") as f:
            expected = DISABLED if zen4(f.read()) else "-"
    except OSError:
        expected = "-"
    assert run({}) == expected
