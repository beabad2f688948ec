"""`kmc explore` in headless Chromium: the page loads, its buttons are clicked through a
counterexample of kraft (the last replica standing) and of two-phase commit, and the page
shows what the walk holds. The page's URL fragment clicks as a person would (kmc/explore/script.py);
the session's Chromium (tests/conftest.py, over its DevTools pipe) gives the page as it drew it.

Debian's chromium is needed (`make browser`); without it the tests skip, except under CI=true.
Expected labels and fields come from the traces and a second computation (Model.describe)."""

from __future__ import annotations

import html
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

import kmc
from chromium_pipe import Browser
from kmc import registry
from kmc.cli.explore import explorer
from kmc.explore.server import Explorer
from kmc.semantics.scalar import ScalarModel
from kmc.traces import itf

ROOT = Path(__file__).resolve().parents[1]
TPC = str(ROOT / "examples" / "two_phase_commit" / "model.py")
LRS = {"min_insync_replicas": 2, "fence_broker_limit": 1, "unclean_shutdown_limit": 1}


@pytest.fixture
def browser(chromium: Browser) -> Browser:
    """The session's Chromium (tests/conftest.py)."""
    return chromium


def saved_counterexample(folder: Path, spec: str, invariant: str, **settings: object) -> Path:
    """A counterexample as `kmc check ... --itf-dir` writes it."""
    model, invariants = registry.build(spec, **settings)
    trace = kmc.check(model, registry.select(invariants, [invariant])).invariants[invariant].trace
    assert trace is not None
    path = folder / f"{model.name}-{invariant}.itf.json"
    path.write_text(itf.dumps(trace))
    return path


def serving(server: Explorer) -> Iterator[str]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def page(browser: Browser, url: str, clicks: list[str], query: str | None = None) -> str:
    """The page after typing `query` in the search box and clicking `clicks` in order, as Chromium drew it."""
    fragment = "click=" + quote("|".join(clicks), safe="")
    if query is not None:
        fragment = "query=" + quote(query, safe="") + "&" + fragment
    browser.open("about:blank")  # a new document each time: the page reads its fragment once, on load
    browser.open(f"{url}#{fragment}")
    deadline = time.monotonic() + 60
    # the body's data-done once the clicks are done, or the error bar's text
    while not (ended := browser.eval("document.body.dataset.done || document.getElementById('error').textContent")):
        assert time.monotonic() < deadline, "the page did not finish its clicks in 60 s"
        time.sleep(0.05)
    assert ended == "yes", ended
    return browser.eval("document.documentElement.outerHTML")


def text_of(dom: str, element_id: str) -> str:
    found = re.search(f'id="{element_id}"[^>]*>(.*?)</', dom, re.S)
    assert found is not None, element_id
    return html.unescape(found.group(1))


def path_labels(dom: str) -> list[str]:
    return [html.unescape(m) for m in re.findall(r'<li id="step-\d+"[^>]*>\d+\. ([^<]*)', dom)]


def test_kraft_counterexample_clicked_through(browser: Browser, tmp_path: Path) -> None:
    trace_file = saved_counterexample(tmp_path, "kraft", "leader-completeness", **LRS)
    played = itf.loads(trace_file.read_text(), lambda _, s: registry.build("kraft", **s)[0])
    labels = ["init", *(s.instance.label for s in played.steps[1:] if s.instance is not None)]
    assert len(labels) == 8  # 7 steps: TLC's length (docs/kraft.md)
    for url in serving(explorer("kraft", port=0, trace_path=trace_file, **LRS)):
        dom = page(browser, url, ["forward"] * 3)
        assert text_of(dom, "where") == f"step 3 of 7 (loaded {trace_file.name})"
        assert path_labels(dom) == labels
        assert 'class="failed"' not in dom  # every invariant holds at step 3
        before, after = (played.model.describe(played.steps[k].state) for k in (2, 3))
        changed = re.findall(r'<tr class="changed field" data-key="([^"]*)"', dom)
        assert [html.unescape(k) for k in changed] == [k for k in after if before.get(k) != after[k]]
        other = next(label for label in _choices(dom) if label != labels[4])
        # on to the end by the forward button: the violation
        dom = page(browser, url, ["forward"] * 4)
        assert text_of(dom, "where") == f"step 7 of 7 (loaded {trace_file.name})"
        assert re.search(r'id="inv-leader-completeness" class="failed"', dom)
        # back to step 3 by the path's entry, then another way by an action's button: the path ends there
        dom = page(browser, url, ["step-3", f"label:{other}"])
        assert path_labels(dom) == [*labels[:4], other]
        assert text_of(dom, "where") == f"step 4 of 4 (loaded {trace_file.name})"


def _choices(dom: str) -> list[str]:
    return [html.unescape(m) for m in re.findall(r'<button id="choice-\d+" data-label="([^"]*)"', dom)]


def test_two_phase_commit_walked_by_its_buttons(browser: Browser) -> None:
    for url in serving(explorer(TPC, port=0)):
        dom = page(browser, url, ["choice-0", "label:tm_abort()", "label:rm_prepare(rm=r1)"])
        assert text_of(dom, "where") == "step 2 of 2"
        # TwoPhase.tla: the working RMs may prepare or abort, and with Abort sent every RM may receive it
        assert _choices(dom) == ["rm_prepare(rm=r2)", "rm_prepare(rm=r3)", "rm_choose_to_abort(rm=r2)",
                                 "rm_choose_to_abort(rm=r3)", "rm_rcv_abort_msg(rm=r1)", "rm_rcv_abort_msg(rm=r2)",
                                 "rm_rcv_abort_msg(rm=r3)"]
        dom = page(browser, url, ["label:rm_rcv_abort_msg(rm=r1)"])
        assert path_labels(dom) == ["init", "tm_abort()", "rm_prepare(rm=r1)", "rm_rcv_abort_msg(rm=r1)"]
        assert re.search(r'id="inv-prepared-never-aborts" class="failed"', dom)
        assert re.search(r'id="inv-consistency" class="held"', dom)
        # the search box, typed and clicked: the state where r3 chose to abort, one step from the start
        dom = page(browser, url, ["search-go", "match-0"], query="rm_state[2] == 3")
        # a second computation: the states reached are those on the path and their successors
        model, _ = registry.build(TPC)
        sm = ScalarModel(model)
        on_path = [model.initial_states()[0]]
        for label in ("tm_abort()", "rm_prepare(rm=r1)", "rm_rcv_abort_msg(rm=r1)"):
            on_path.append(next(t for i, t in sm.successors(on_path[-1]) if model.instances()[i].label == label))
        reached = {*on_path, *(t for state in on_path for _, t in sm.successors(state))}
        match = [t for t in reached if t[2] == 3]  # rm_state[2], r3's state: 3 is aborted
        assert text_of(dom, "found") == f"{len(match)} of {len(reached)} reached states match"
        assert path_labels(dom) == ["init", "rm_choose_to_abort(rm=r3)"]


def test_two_phase_commit_counterexample_loaded(browser: Browser, tmp_path: Path) -> None:
    trace_file = saved_counterexample(tmp_path, TPC, "prepared-never-aborts")
    for url in serving(explorer(TPC, port=0, trace_path=trace_file)):
        dom = page(browser, url, [])
        assert text_of(dom, "where") == f"step 0 of 3 (loaded {trace_file.name})"
        assert "next on the path" in dom and 'class="failed"' not in dom
        dom = page(browser, url, ["step-3"])
        assert re.search(r'id="inv-prepared-never-aborts" class="failed"', dom)
        assert text_of(dom, "choices-heading").startswith("Enabled actions (")
