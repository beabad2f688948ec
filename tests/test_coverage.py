"""--coverage on check and simulate: per action family enabled, fired and new states, per
field the values reached; a family never enabled is flagged; a gate's `fires` key fails a
change that silently disables a rule."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from kmc import registry
from kmc.api import check as kmc_check
from kmc.api import Limits, SearchOptions
from kmc.engines.simulation.swarm import Walks, simulate
from kmc.semantics.scalar import ScalarModel
from tests.conftest import build, states_within

VACUOUS = str(Path(__file__).parent / "models" / "vacuous.py")


def test_check_coverage_equals_a_count_over_the_reachable_states() -> None:
    """Breadth-first search enables (and fires) each instance once per reachable state where its
    guard holds: counted again here over the whole graph by the scalar interpretation."""
    model, invariants = build("replication", mode="kip320")
    result = kmc_check(model, invariants, limits=Limits(), search=SearchOptions(keep_going=True, coverage=True))
    reachable = states_within(model, 18)
    assert len(reachable) == result.distinct_states == 5973  # TLC's count (tests/reference/tlc-replication.md)
    sm = ScalarModel(model)
    instances = model.instances()
    enabled: Counter[str] = Counter(instances[iid].action.name for s in reachable for iid, _ in sm.successors(s))
    coverage = result.coverage
    assert coverage is not None
    assert {name: c["enabled"] for name, c in coverage["actions"].items()} == dict(enabled)
    assert all(c["fired"] == c["enabled"] for c in coverage["actions"].values())
    assert sum(c["new_states"] for c in coverage["actions"].values()) == 5973 - len(model.initial_states())
    for f in model.schema.fields:
        start = model.schema.offset[f.name]
        values = [s[start + k] for s in reachable for k in range(f.size)]
        assert coverage["fields"][f.name] == {"declared": [f.lo, f.hi], "reached": [min(values), max(values)]}
    assert coverage["never_enabled"] == []


def test_simulation_coverage_adds_up() -> None:
    model, invariants = build("replication", mode="kip320")
    result = simulate(model, invariants, Walks(walkers=300, depth=30, seed=2, walks=2000, coverage=True))
    coverage = result.coverage
    assert coverage is not None
    actions = coverage["actions"].values()
    assert sum(c["fired"] for c in actions) == result.engine_stats["walker_steps"]
    assert sum(c["new_states"] for c in actions) == result.distinct_states - len(model.initial_states())
    assert all(c["enabled"] >= c["fired"] for c in actions)


def test_a_rule_never_enabled_is_flagged(run_kmc) -> None:
    rc, out, err = run_kmc("check", VACUOUS, "--coverage", "--json", "-q")
    data = json.loads(out)
    assert rc == 0 and data["coverage"]["never_enabled"] == ["reset"]
    assert data["coverage"]["fields"]["x"] == {"declared": [-1, 5], "reached": [-1, 3]}
    assert "kmc: warning: action reset was never enabled" in err
    rc, out, err = run_kmc("check", VACUOUS, "--coverage", "-q")
    assert "reset" in out and "never enabled" in out and "narrower than declared" in out


def test_coverage_needs_the_vector_engine(run_kmc) -> None:
    rc, out, err = run_kmc("check", "replication", "--coverage", "--engine", "scalar", "-q")
    assert rc == 2 and "--coverage is collected by the vector engine" in err and len(err.strip().splitlines()) == 1


def _baseline(tmp_path: Path, fires: str) -> Path:
    path = tmp_path / "baseline.toml"
    path.write_text(f'[[check]]\nmodel = "{VACUOUS}"\nfires = {fires}\n[check.settings]\nmode = "plain"\n'
                    '[check.expect]\nat-most-3 = "holds"\n')
    return path


def test_gate_requires_named_actions_to_fire(run_kmc, tmp_path: Path) -> None:
    rc, out, err = run_kmc("gate", str(_baseline(tmp_path, '["bump"]')))
    assert rc == 0, out + err
    rc, out, err = run_kmc("gate", str(_baseline(tmp_path, '["bump", "reset"]')))
    assert rc == 12 and "action reset: the baseline requires it to fire, it never fired" in out + err
    rc, out, err = run_kmc("gate", str(_baseline(tmp_path, '["jump"]')))
    assert rc == 2 and "unknown action 'jump' in 'fires'" in err and len(err.strip().splitlines()) == 1


def test_simulation_coverage_counts_the_initial_states_values() -> None:
    model, invariants = build("replication", mode="kip320")
    result = simulate(model, [], Walks(walkers=10, depth=1, seed=0, walks=10, coverage=True))
    assert result.coverage is not None
    assert result.coverage["fields"]["next_leader_epoch"]["reached"][0] == 0  # the initial state's


STUCK_ISR = Path(__file__).parent / "models" / "stuck_isr.py"


def test_gate_fails_when_a_protocol_change_disables_a_rule(run_kmc, tmp_path: Path) -> None:
    """replication kip320 with the ISR expansion's guard made unsatisfiable (tests/models/stuck_isr.py):
    every invariant still holds, and only `fires` catches it; the unchanged model passes."""
    baseline = ('[[check]]\nmodel = "{model}"\nfires = ["leader_expand_isr", "leader_shrink_isr"]\n'
                '[check.settings]\nmode = "kip320"\n[check.expect]\nstrong-isr = "holds"\nweak-isr = "holds"\n')
    path = tmp_path / "baseline.toml"
    path.write_text(baseline.format(model="replication"))
    rc, out, err = run_kmc("gate", str(path))
    assert rc == 0, out + err
    path.write_text(baseline.format(model=STUCK_ISR.as_posix()))
    rc, out, err = run_kmc("gate", str(path))
    assert rc == 12, out + err
    assert "action leader_expand_isr: the baseline requires it to fire, it never fired" in out
    assert "leader_shrink_isr" not in out and "VIOLATED" not in out
