"""`kmc bench`: both engines on each configuration, their ratio, and whether they agree."""

from __future__ import annotations

import json
from pathlib import Path

from kmc.bench import DEFAULT_CONFIGS, load

SMALL = """
[[config]]
name = "small"
model = "replication"
settings = { mode = "kip320" }

[[config]]
name = "small-symmetry"
model = "replication"
settings = { mode = "hw" }
symmetry = true
"""


def test_the_shipped_configurations_load() -> None:
    names = [c.name for c in load(DEFAULT_CONFIGS)]
    assert "replication-3r-kip320" in names and "replication-3r-kip320-symmetry" in names
    assert sum(n.startswith("replication-2r-") for n in names) == 5


def test_bench_runs_both_engines_and_compares(run_kmc, tmp_path: Path) -> None:
    path = tmp_path / "configs.toml"
    path.write_text(SMALL)
    rc, out, _ = run_kmc("bench", "--configs", str(path), "--json", "--quiet")
    assert rc == 0
    rows = json.loads(out)["configs"]
    assert [r["name"] for r in rows] == ["small", "small-symmetry"]
    # 5,973: TLC's count for kip320 (tests/reference/tlc-replication.md, table A); 5,066: regression
    # pin, kmc's own symmetry-reduced count for hw (first pinned in commit afda1f9), which the bench's
    # own scalar run must agree with ("agree" below)
    assert rows[0]["vector"]["distinct_states"] == rows[0]["scalar"]["distinct_states"] == 5973
    assert rows[1]["vector"]["distinct_states"] == 5066 and rows[1]["symmetry"] is True
    assert all(r["agree"] == "yes" and r["ratio"] > 0 for r in rows)


def test_bench_caps_the_scalar_engine_and_still_checks_agreement(run_kmc, tmp_path: Path) -> None:
    path = tmp_path / "configs.toml"
    path.write_text(SMALL)
    rc, out, _ = run_kmc("bench", "--configs", str(path), "--only", "small", "--scalar-max-states", "1000", "--quiet")
    assert rc == 0
    assert "small" in out and "5,973" in out and "1,000" in out and "yes (first 1,000 states)" in out


def test_bench_bad_configurations_exit_2(run_kmc, tmp_path: Path) -> None:
    path = tmp_path / "configs.toml"
    path.write_text('[[config]]\nname = "x"\nmodel = "replication"\nsettings = { replicas = 0 }\n')
    rc, _, err = run_kmc("bench", "--configs", str(path))
    assert rc == 2 and "--replicas must be from 1 to 8" in err
    path.write_text('[[config]]\nname = "x"\n')
    rc, _, err = run_kmc("bench", "--configs", str(path))
    assert rc == 2 and "needs name and model" in err
    rc, _, err = run_kmc("bench", "--configs", str(tmp_path / "missing.toml"))
    assert rc == 2 and "no benchmark configurations" in err


def test_bench_runs_the_spark_engine_where_marked(spark_session, run_kmc, tmp_path: Path) -> None:
    """spark = true adds a Spark run (on the test session, local[2]); its outcome must equal the
    vector engine's, and the ratio and per-level figures are reported."""
    path = tmp_path / "configs.toml"
    path.write_text(SMALL.replace('settings = { mode = "kip320" }', 'settings = { mode = "kip320" }\nspark = true'))
    rc, out, _ = run_kmc("bench", "--configs", str(path), "--scalar-max-states", "-1", "--json", "--quiet")
    assert rc == 0
    small, symmetric = json.loads(out)["configs"]
    assert symmetric["spark"] is None
    spark = small["spark"]
    assert spark["distinct_states"] == small["vector"]["distinct_states"] == 5973 and spark["agree"] == "yes"
    # 18 levels: TLC's depth for kip320 (tests/reference/tlc-replication.md, table A)
    assert spark["partitions"] == 2 and spark["levels"] == 18 and spark["median_level_seconds"] > 0
    assert spark["ratio_to_vector"] > 0 and spark["shuffle_bytes"] > 0
    rc, out, _ = run_kmc("bench", "--configs", str(path), "--only", "small", "--scalar-max-states", "-1", "--quiet")
    assert rc == 0 and "the Spark engine against the vector engine" in out and "local[2" in out
    rc, out, _ = run_kmc("bench", "--configs", str(path), "--only", "small", "--no-spark", "--json", "--quiet")
    assert rc == 0 and json.loads(out)["configs"][0]["spark"] is None
