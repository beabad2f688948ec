"""`kmc gate`: baselines that match (0), a protocol regression (12, with its trace), a stale
baseline (3), `--update`, JUnit XML checked against tests/junit.xsd, malformed baselines (2)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from kmc import registry
from kmc.engines.explicit import bfs
from kmc.invariants.fetch import invariants as fetch_invariants
from tests.gate_regression import UnfencedIsrFetch

ROOT = Path(__file__).resolve().parent.parent
DOGFOOD = ROOT / "baselines" / "kmc.toml"
XSD = Path(__file__).with_name("junit.xsd")

FENCED = """\
# epoch-fenced fetch: every safety invariant holds
[[check]]
model = "fetch"
[check.settings]
mode = "epoch-fenced"
[check.expect]
committed-never-lost = "holds"
no-log-divergence = "holds"
hw-le-leo = "holds"
"""


def validate_junit(path: Path) -> None:
    from lxml import etree

    schema = etree.XMLSchema(etree.parse(str(XSD)))
    doc = etree.parse(str(path))
    assert schema.validate(doc), schema.error_log


@pytest.fixture
def regression(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fetch model, as a protocol change would leave it: without the ISR write fence."""
    monkeypatch.setitem(registry.MODELS, "fetch", "tests.gate_regression:UnfencedIsrFetch")


def without_the_longest(tmp_path: Path) -> Path:
    """The dogfood baseline without its kraft checks (about 3 minutes), transactions with EndTxn
    in flight (40 s) and quorum's RemoveVoter run (50 s): `make gate` and the slow test below run
    them, and tests/test_end_txn_in_flight.py and tests/test_quorum.py check those runs' figures."""
    checks = DOGFOOD.read_text().split("[[check]]")
    kept = [checks[0]] + [c for c in checks[1:] if 'model = "kraft"' not in c
                          and "end_txn_in_flight = true" not in c and "max_remove_reconfigs = 1" not in c]
    path = tmp_path / "kmc.toml"
    path.write_text("[[check]]".join(kept))
    return path


def test_dogfood_baseline_matches(run_kmc, tmp_path: Path) -> None:
    junit = tmp_path / "gate.xml"
    rc, out, err = run_kmc("gate", str(without_the_longest(tmp_path)), "--quiet", "--junit", str(junit))
    assert rc == 0, out + err
    assert "15 of 15 checks match" in out  # every mode of every model but kraft's, less the longest
    validate_junit(junit)


@pytest.mark.slow
def test_dogfood_baseline_matches_with_kraft(run_kmc) -> None:
    rc, out, err = run_kmc("gate", str(DOGFOOD), "--quiet")
    assert rc == 0, out + err
    assert "22 of 22 checks match" in out  # the 17 checks of 81e0ee1, the two quorum modes, 2 RemoveVoters, an AddVoter


def test_dogfood_baseline_agrees_with_the_verdict_tests() -> None:
    checks = tomllib.loads(DOGFOOD.read_text())["check"]
    by = {(c["model"], c["settings"]["mode"]): c for c in checks
          if not c["settings"].get("end_txn_in_flight") and not c["settings"].get("max_remove_reconfigs")
          and not c["settings"].get("max_add_reconfigs")}
    # every mode of every model, transactions with EndTxn in flight, quorum with reconfigurations
    assert len(by) == 17 and len(checks) == 22
    # tests/test_quorum.py (TLC on the KRaft quorum specs, tests/reference/tlc-quorum.md, runs
    # q853-a and q996-a): every invariant holds
    assert [by["quorum", m]["states"] for m in ("kip853", "kip996")] == [2660, 20]
    for mode in ("kip853", "kip996"):
        assert set(by["quorum", mode]["expect"].values()) == {"holds"}
    # runs q853-j and q996-g (RemoveVoter): 61,178 and 163 states, q996-k (a new server added): 147,
    # every invariant holds (tests/reference/tlc-quorum.md)
    reconfig = [c for c in checks if c["model"] == "quorum"
                and c["settings"]["max_remove_reconfigs"] + c["settings"]["max_add_reconfigs"]]
    assert [(c["settings"]["mode"], c["states"]) for c in reconfig] == [("kip853", 61178), ("kip996", 147),
                                                                        ("kip996", 163)]
    assert all(set(c["expect"].values()) == {"holds"} for c in reconfig)
    # tests/test_replication_verdicts.py (TLC on the published spec, tests/reference/tlc-replication.md
    # table B): strong-isr 9 steps in hw, 11 in kip101
    assert by["replication", "hw"]["expect"]["strong-isr"] == "violated 9"
    assert by["replication", "kip101"]["expect"]["strong-isr"] == "violated 11"
    for mode in ("kip279", "kip320-first-try", "kip320"):
        assert set(by["replication", mode]["expect"].values()) == {"holds"}
    # TLC's state counts of hw, kip279 and kip320 (tests/reference/tlc-replication.md, table A)
    assert [by["replication", m]["states"] for m in ("hw", "kip279", "kip320")] == [10131, 9027, 5973]
    # tests/test_fetch_anomalies.py: hw mode loses committed data and diverges, epoch modes do neither
    assert by["fetch", "hw"]["expect"]["committed-never-lost"].startswith("violated")
    assert by["fetch", "hw"]["expect"]["no-log-divergence"].startswith("violated")
    for mode in ("epoch", "epoch-fenced"):
        assert by["fetch", mode]["expect"]["committed-never-lost"] == "holds"
        assert by["fetch", mode]["expect"]["no-log-divergence"] == "holds"
    # tests/test_idempotence.py and tests/test_transactions.py: duplicates and reordering without
    # idempotence, KIP-890's anomalies in kip98; the lengths are regression pins (kmc's own output,
    # as of commit c4ec5e9) that a plain BFS in those tests confirms shortest
    assert by["idempotence", "no-idempotence"]["expect"]["no-duplicates"] == "violated 4"
    assert set(by["idempotence", "idempotence"]["expect"].values()) == {"holds"}
    assert by["transactions", "kip98"]["expect"]["no-hanging-transaction"] == "violated 9"
    assert by["transactions", "kip98"]["expect"]["own-transaction"] == "violated 13"
    assert set(by["transactions", "kip890"]["expect"].values()) == {"holds"}
    # tests/test_end_txn_in_flight.py (test_default_bounds): KAFKA-17754's lost write, torn transaction
    # and aborted read in kip98, none in kip890 (regression pins, scalar and vector agreeing on small bounds)
    in_flight = {c["settings"]["mode"]: c["expect"] for c in checks if c["settings"].get("end_txn_in_flight")}
    assert [in_flight["kip98"][n] for n in ("no-lost-writes", "atomic-commit", "no-aborted-reads")] == [
        "violated 16", "violated 16", "violated 23"]
    assert set(in_flight["kip890"].values()) == {"holds"}
    # tests/test_kraft.py (TLC on the KRaft spec, tests/reference/tlc-kraft.md): the last replica standing
    # in v3.5 at TLC's lengths; AvoidLastReplicaStanding and KIP-966 hold on the same bounds
    assert by["kraft", "v3.5"]["expect"]["leader-completeness"] == "violated 7"
    assert by["kraft", "v3.5"]["expect"]["no-committed-record-lost-globally"] == "violated 16"
    for mode in ("v3.5-avoid-lrs", "kip966"):
        assert set(by["kraft", mode]["expect"].values()) == {"holds"}


def test_regression_fails_with_12_and_a_trace(run_kmc, tmp_path: Path, regression: None) -> None:
    base = tmp_path / "base.toml"
    base.write_text(FENCED)
    junit = tmp_path / "gate.xml"
    rc, out, _ = run_kmc("gate", str(base), "--quiet", "--junit", str(junit))
    assert rc == 12
    # the shortest counterexample, as the reference engine finds it on the same variant
    model = UnfencedIsrFetch(mode="epoch-fenced")
    invs = registry.select(fetch_invariants(model), ["committed-never-lost"])
    steps = bfs.check(model, invs).invariants["committed-never-lost"].trace.length  # type: ignore[union-attr]
    assert f"committed-never-lost: expected to hold, VIOLATED ({steps} steps)" in out
    assert "Invariant committed-never-lost is violated" in out and f"Counterexample ({steps} steps)" in out
    assert "Step 1: " in out
    validate_junit(junit)
    text = junit.read_text()
    assert 'failures="1"' in text and 'type="regression"' in text and "Counterexample" in text


def test_stale_baseline_gives_3_and_update_rewrites_it(run_kmc, tmp_path: Path) -> None:
    base = tmp_path / "base.toml"
    base.write_text(FENCED.replace('committed-never-lost = "holds"', 'committed-never-lost = "violated 9"')
                    .replace("[check.settings]", "states = 12\n[check.settings]"))
    rc, out, _ = run_kmc("gate", str(base), "--quiet")
    assert rc == 3
    assert "STALE" in out
    assert "committed-never-lost: expected violated 9, now holds" in out
    # 36,429: regression pin, kmc's own count for fetch epoch-fenced (baselines/kmc.toml; kmc's output
    # as of commit c4ec5e9)
    assert "distinct states: expected 12, now 36,429" in out
    rc, out, _ = run_kmc("gate", str(base), "--quiet", "--update")
    assert rc == 0 and "rewritten" in out
    rewritten = base.read_text()
    assert rewritten.startswith("# epoch-fenced fetch")  # the header comment is kept
    data = tomllib.loads(rewritten)["check"][0]
    assert data["states"] == 36429 and data["expect"]["committed-never-lost"] == "holds"
    assert data["settings"]["mode"] == "epoch-fenced" and data["settings"]["max_crashes"] == 2
    assert [p.name for p in tmp_path.iterdir()] == ["base.toml"]  # no temporary file left
    rc, out, _ = run_kmc("gate", str(base), "--quiet")
    assert rc == 0


def test_regression_beats_stale(run_kmc, tmp_path: Path, regression: None) -> None:
    base = tmp_path / "base.toml"
    stale = '[[check]]\nmodel = "replication"\n[check.settings]\nmode = "kip320"\n[check.expect]\nstrong-isr = "violated 3"\n'
    base.write_text(FENCED + "\n" + stale)
    rc, out, _ = run_kmc("gate", str(base), "--quiet")
    assert rc == 12 and "FAIL" in out and "STALE" in out


BAD_BASELINES = [
    ("[[check]]\nengine = 'vector'\n", ":1: a check needs the key 'model'"),
    ("[[check]]\nmodel = 'kafka'\n", ":2: unknown model 'kafka'; allowed: replication, fetch"),
    ("[[check]]\nmodel = 3\n", ":2: key 'model' must be a string (got an integer)"),
    ("[[check]]\nmodel = 'fetch'\nstates = 'many'\n", ":3: key 'states' must be an integer (got a string)"),
    ("[[check]]\nmodel = 'fetch'\ncolour = 1\n", ":3: unknown key 'colour' in a check"),
    ("[[check]]\nmodel = 'fetch'\n[check.settings]\nmode = 'hw'\nreplicas = 'two'\n",
     ":5: key 'replicas': --replicas takes an integer (got 'two')"),
    ("[[check]]\nmodel = 'fetch'\n[check.settings]\nmodee = 'hw'\n", ":4: unknown option 'modee' for model fetch"),
    ("[[check]]\nmodel = 'fetch'\n[check.expect]\nhw-le-leo = true\n",
     ":4: key 'hw-le-leo' must be a string, \"holds\" or \"violated N\" (got a boolean)"),
    ("[[check]]\nmodel = 'fetch'\n[check.expect]\nstrong-isr = 'holds'\n", ":4: unknown invariant 'strong-isr' for model fetch"),
    ("[[check]]\nmodel = 'fetch'\n\n[[check]]\nmodel = 'replication'\n[check.expect]\nweak-isr = 'sometimes'\n",
     ":7: key 'weak-isr': 'sometimes' is neither"),
    ("title = 'x'\n", ":1: unknown key 'title'; a baseline holds [[check]] tables only"),
    ("", ": no [[check]] table"),
    ("[[check]\n", ": malformed TOML"),
]


@pytest.mark.parametrize("text,message", BAD_BASELINES, ids=[m for _, m in BAD_BASELINES])
def test_malformed_baseline_exits_2_naming_file_line_and_key(run_kmc, tmp_path: Path, text: str, message: str) -> None:
    base = tmp_path / "base.toml"
    base.write_text(text)
    junit = tmp_path / "gate.xml"
    rc, out, err = run_kmc("gate", str(base), "--junit", str(junit))
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"kmc: error: {base}")
    assert message in err
    assert not junit.exists()


def test_missing_baseline(run_kmc, tmp_path: Path) -> None:
    rc, _, err = run_kmc("gate", str(tmp_path / "none.toml"))
    assert rc == 2 and "no such baseline" in err
