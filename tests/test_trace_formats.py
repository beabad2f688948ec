"""`kmc trace FILE.itf.json --format ...`: a saved trace read back and rendered as text, ITF
JSON, Mermaid, DOT and a self-contained HTML page; the page opened in headless Chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kmc import registry
from kmc.engines.explicit import bfs
from kmc.api import Limits, SearchOptions
from kmc.api import check as kmc_check
from kmc.traces import itf, mermaid, sequence


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fetch model's data-loss counterexample (kmc check fetch --mode hw), saved as ITF."""
    from kmc.cli.main import main

    out = tmp_path_factory.mktemp("itf")
    assert main(["check", "fetch", "--mode", "hw", "--invariant", "committed-never-lost", "--quiet",
                 "--itf-dir", str(out)]) == 12
    return out / "fetch-hw-committed-never-lost.itf.json"


def reference_trace():
    model, invs = registry.build("fetch", mode="hw")
    return bfs.check(model, registry.select(invs, ["committed-never-lost"])).invariants["committed-never-lost"].trace


def test_itf_reads_back_the_trace_it_wrote(saved: Path) -> None:
    trace = itf.loads(saved.read_text(), lambda n, s: registry.build(n, **s)[0])
    ref = reference_trace()  # the reference engine's shortest counterexample
    assert trace.invariant == "committed-never-lost"
    assert [s.state for s in trace.steps] == [s.state for s in ref.steps]
    assert [s.instance.label for s in trace.steps[1:]] == [s.instance.label for s in ref.steps[1:]]


def test_text_and_json_formats(run_kmc, saved: Path) -> None:
    rc, out, _ = run_kmc("trace", str(saved))
    assert rc == 0 and out.startswith("Invariant committed-never-lost is violated")
    assert f"Counterexample ({reference_trace().length} steps)" in out
    rc, out, _ = run_kmc("trace", str(saved), "--format", "json")
    assert rc == 0 and json.loads(out) == json.loads(saved.read_text())


def test_mermaid_has_a_lane_per_process_and_arrows_for_messages(run_kmc, saved: Path) -> None:
    rc, out, _ = run_kmc("trace", str(saved), "--format", "mermaid")
    assert rc == 0 and out.startswith("sequenceDiagram\n")
    names = re.findall(r"participant (p\d+) as (\S+)", out)
    # the fetch model's lanes (Fetch.lanes) that the trace does something on: no consumer
    assert [n for _, n in names] == ["controller", "r1", "r2", "producer"]
    ids = dict((n, i) for i, n in names)
    assert f"{ids['r2']}->>{ids['r1']}: Fetch\n    Note over {ids['r1']}: 2. fetch(" in out  # a follower's FETCH
    assert f"{ids['r1']}->>{ids['r2']}: FetchResponse (sent at 2)" in out  # received at step 3
    assert f"{ids['r1']}--){ids['r2']}: FetchResponse (in flight)" in out  # step 4's, lost in r2's crash
    assert f"{ids['controller']}->>{ids['r2']}: LeaderAndIsr (sent at 7)" in out  # the controller elects r2
    assert re.search(rf"Note over {ids['controller']}: 7\. elect\(replica=r2\)", out)  # a controller event
    assert re.search(rf"Note over {ids['r2']}: 5\. crash", out)  # crashes are notes on the replica
    assert re.search(rf"Note over {ids['r2']}: 6\. restart.*<br/>log \[m0@e0\] → \[\]", out)  # the truncation
    assert "HW 0 → 1" in out
    # only messages are arrows, counted by hand from the trace: Produce, 2 Fetch, 2 FetchResponse, LeaderAndIsr
    # to r1 and to r2, ProduceResponse (crash and restart are local)
    assert out.count("->>") + out.count("--)") == 8
    assert out.rstrip().endswith("committed-never-lost is violated")


def test_sequence_is_derived_for_every_model() -> None:
    for name in registry.MODELS:
        model, invs = registry.build(name, mode=registry.model_class(name).options[0].choices[0])
        # the vector engine: the scalar one took 15 to 55 s for the eight models under load
        result = kmc_check(model, invs, engine="vector", limits=Limits(max_states=200_000))
        traces = [v.trace for v in result.invariants.values() if v.trace is not None]
        if not traces:
            continue
        seq = sequence.build(traces[0])
        assert len(seq.events) == traces[0].length
        if name in ("replication", "fetch"):
            assert {"r1", "r2"} <= set(seq.participants)
        assert mermaid.render(traces[0]).count("\n") > traces[0].length


def test_dot_format(run_kmc, saved: Path) -> None:
    rc, out, _ = run_kmc("trace", str(saved), "--format", "dot")
    n = reference_trace().length
    assert rc == 0 and out.startswith("digraph trace {")
    assert out.count(" -> s") == n and f"s{n} [label=" in out and "color=red" in out


def test_html_is_self_contained(run_kmc, saved: Path, tmp_path: Path) -> None:
    page = tmp_path / "trace.html"
    rc, out, _ = run_kmc("trace", str(saved), "--format", "html", "--output", str(page))
    assert rc == 0 and out == ""
    html = page.read_text()
    # nothing to fetch: no src/href attributes, no URL but the SVG namespace name
    assert not re.search(r"\b(src|href)\s*=", html)
    assert set(re.findall(r"https?://[^\s\"'<>]+", html)) == {"http://www.w3.org/2000/svg"}
    assert '<svg class="diagram"' in html and '<table class="steps">' in html and 'class="bad"' in html


def test_bad_trace_files_exit_2(run_kmc, tmp_path: Path, saved: Path) -> None:
    bad = tmp_path / "bad.itf.json"
    bad.write_text("{not json")
    rc, _, err = run_kmc("trace", str(bad))
    assert rc == 2 and "not JSON" in err
    data = json.loads(saved.read_text())
    data["states"][3]["leo"] = [2, 2]  # not what the recorded step leads to
    bad.write_text(json.dumps(data))
    rc, _, err = run_kmc("trace", str(bad))
    assert rc == 2 and "does not replay" in err and err.count("\n") == 1
    rc, _, err = run_kmc("trace")
    assert rc == 2 and "give a trace file" in err


def test_html_renders_in_headless_chromium(run_kmc, chromium, saved: Path, tmp_path: Path) -> None:
    """The page in the session's Chromium (tests/conftest.py)."""
    page = tmp_path / "trace.html"
    assert run_kmc("trace", str(saved), "--format", "html", "--output", str(page))[0] == 0
    chromium.open(page.as_uri())
    dom = chromium.eval("document.documentElement.outerHTML")
    n = reference_trace().length
    # the inline script ran in the browser and counted what it found rendered
    assert f'data-rendered="{n} events, {n + 1} rows"' in dom
    assert dom.count('<g class="event"') == n and '<table class="steps">' in dom
    assert "Invariant committed-never-lost is violated" in dom
    shot = tmp_path / "trace.png"
    chromium.screenshot(shot)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a page with content, not a blank one


def test_docs_show_the_current_mermaid_source() -> None:
    docs = (Path(__file__).resolve().parent.parent / "docs" / "traces.md").read_text()
    block = docs.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert block == mermaid.render(reference_trace())
