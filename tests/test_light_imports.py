"""Light by default: z3, pyspark and matplotlib are imported only by the code that uses them,
and a missing extra is one line naming the install command."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from typing import Any

import pytest

HEAVY = ("z3", "pyspark", "matplotlib", "pyarrow", "llvmlite")

RUN = """
import json, sys
import kmc
model, invariants = kmc.build("replication", mode="kip320")
result = kmc.check(model, invariants)
from kmc.cli.main import main
main(["check", "replication", "--mode", "kip101", "--quiet"])
main(["list"])
print(json.dumps([m for m in sys.modules if m.split(".")[0] in {heavy!r}]))
"""


def test_a_vector_engine_check_imports_no_heavy_package() -> None:
    p = subprocess.run([sys.executable, "-c", RUN.format(heavy=set(HEAVY))], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.splitlines()[-1]) == []


def test_spark_without_its_extra_is_one_line(run_kmc: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyspark" else found(name, *a))
    rc, out, err = run_kmc("check", "replication", "--engine", "spark", "--quiet")
    assert rc == 2 and out == ""
    assert err.strip() == ("kmc: error: --engine spark needs PySpark and PyArrow, which the spark extra installs: "
                           "pip install 'kmc[spark]' (and Java 17)")


def test_plot_without_its_extra_is_one_line(run_kmc: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else found(name, *a))
    rc, out, err = run_kmc("compare", "replication", "--modes", "hw", "--plot", str(tmp_path / "m.png"), "--quiet")
    assert rc == 2 and out == "" and not (tmp_path / "m.png").exists()
    assert err.strip() == "kmc: error: --plot needs matplotlib, which the plot extra installs: pip install 'kmc[plot]'"


def test_the_compiled_engine_without_its_extra_is_one_line(run_kmc: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llvmlite" else found(name, *a))
    rc, out, err = run_kmc("check", "replication", "--engine", "compiled", "--quiet")
    assert rc == 2 and out == ""
    assert err.strip() == ("kmc: error: --engine compiled needs llvmlite, which the compiled extra installs: "
                           "pip install 'kmc[compiled]'")


def test_a_command_imports_no_other_commands_module() -> None:
    """kmc's commands are imported when they run (kmc/cli/main.py:Commands): `kmc check` loads
    neither explore's web server, nor bench's tables, nor gate's TOML, nor the entry points' scan."""
    code = ("import json, sys\nfrom kmc.cli.main import main\n"
            "main(['check', 'replication', '--mode', 'kip101', '--quiet'])\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('kmc.cli.') or m in "
            "{'http.server', 'rich', 'tomlkit', 'importlib.metadata'})))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    loaded = json.loads(p.stdout.splitlines()[-1])
    assert not {"http.server", "rich", "tomlkit", "importlib.metadata"} & set(loaded), loaded
    assert "kmc.cli.check" in loaded and not {f"kmc.cli.{c}" for c in ("bench", "explore", "gate", "prove")} & set(loaded)
