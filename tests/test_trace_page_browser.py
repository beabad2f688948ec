"""The HTML trace page in a real browser (headless Chromium over its DevTools pipe,
tests/chromium_pipe.py): kraft's last-replica-standing counterexample, the 2PC example's, a
lasso, and two traces side by side, stepped through with the keyboard and the mouse; what the
page then shows is read back and compared with the trace computed again in Python."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chromium_pipe import Browser
from kmc.cli.main import main
from kmc.model.core import Model
from kmc.traces import itf
from kmc.traces.sequence import changed as compact
from kmc import registry

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "two_phase_commit" / "model.py"
KRAFT = ["--unclean-shutdown-limit", "1", "--fence-broker-limit", "1", "--clean-shutdown-limit", "0"]


def saved(out: Path, *args: str) -> Path:
    """The counterexample `kmc check ARGS` finds, saved as ITF."""
    assert main(["check", *args, "--quiet", "--itf-dir", str(out)]) == 12
    (found,) = out.glob("*.itf.json")
    return found


def page(out: Path, *traces: Path, model: str | None = None) -> Path:
    html = out / "page.html"
    assert main(["trace", *map(str, traces), *(["--model", model] if model else []), "--format", "html",
                 "-o", str(html)]) == 0
    return html


@pytest.fixture
def browser(chromium: Browser) -> Browser:
    """The session's Chromium (tests/conftest.py)."""
    return chromium


@pytest.fixture(scope="module")
def lrs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kraft v3.5's last-replica-standing counterexample (docs/kraft.md)."""
    return saved(tmp_path_factory.mktemp("lrs"), "kraft", "--min-insync-replicas", "2", "--fence-broker-limit", "1",
                 "--unclean-shutdown-limit", "1", "--invariant", "leader-completeness")


def described(trace_file: Path, model: str | None = None) -> list[dict[str, str]]:
    """The trace's states as its model describes them: the second computation the page is checked against."""
    def build(name: str, settings: dict[str, Any]) -> Model:
        return registry.build(model or name, **settings)[0]

    played = itf.loads(trace_file.read_text(), build)
    return [played.model.describe(s.state) for s in played.steps]


def changed(states: list[dict[str, str]], k: int) -> list[str]:
    before, after = states[k - 1], states[k]
    return [key for key in dict.fromkeys([*before, *after]) if before.get(key, "-") != after.get(key, "-")]


STEP = "document.querySelector('section.trace').dataset.step"
CHANGED = "[...document.querySelectorAll('table.state tr.chg td:first-child')].map(td => td.textContent)"
VISIBLE = "[...document.querySelectorAll('table.state tr:not(.hidden) td:first-child')].map(td => td.textContent)"
LANES = "[...document.querySelectorAll('svg text.actor')].map(t => t.textContent)"
ARROWS = ("[...document.querySelectorAll('g.msg')].map(g => [g.querySelector('text').textContent, "
          "g.dataset.sent, g.dataset.received])")
EVENT_LANES = "Object.fromEntries([...document.querySelectorAll('g.event')].map(g => [g.dataset.step, g.dataset.lane]))"
# every line of every note inside its box, and no page wider than the window
CUT_OFF = """[...document.querySelectorAll('g.n')].flatMap(g => {
  const r = g.querySelector('rect').getBBox();
  return [...g.querySelectorAll('text')].filter(t => { const b = t.getBBox(); return b.x + b.width > r.x + r.width + 0.5; })
    .map(t => t.textContent); })"""
WIDE = "document.documentElement.scrollWidth > window.innerWidth"


def test_kraft_lrs_has_a_controller_lane_and_arrows_only_for_messages(browser: Browser, lrs: Path,
                                                                       tmp_path: Path) -> None:
    browser.open(page(tmp_path, lrs).as_uri())
    assert browser.eval(LANES) == ["controller", "b1", "b2"]
    # fence_broker is the controller's event, unclean_shutdown a local event of its broker
    lanes = browser.eval(EVENT_LANES)
    assert lanes["2"] == "controller" and lanes["4"] == "b1"
    # the arrows: the metadata record b1 applies, b1's registration and its response (step, step)
    assert browser.eval(ARROWS) == [["MetadataRecord", "", "3"], ["BrokerRegistration", "5", "6"],
                                    ["BrokerRegistrationResponse", "6", "7"]]
    assert browser.eval(CUT_OFF) == [] and browser.eval(WIDE) is False
    assert "…" not in browser.eval("document.body.innerText")
    assert browser.eval("document.body.dataset.rendered") == "7 events, 8 rows"


def test_kraft_lrs_stepped_through_with_keys_and_clicks(browser: Browser, lrs: Path, tmp_path: Path) -> None:
    states = described(lrs)
    browser.open(page(tmp_path, lrs).as_uri())
    assert browser.eval(STEP) == "0"
    browser.key("ArrowDown")
    browser.key("ArrowDown")
    assert browser.eval(STEP) == "2"
    assert browser.eval("document.querySelector('span.at').textContent") == \
        "step 2 of 7: fence_broker(broker=b2, leader=none)"
    assert browser.eval("document.querySelector('g.event.on').dataset.step") == "2"
    assert browser.eval("document.querySelector('tr.on').dataset.step") == "2"
    assert browser.eval(CHANGED) == changed(states, 2)  # the fields step 2 changed, highlighted
    assert len(browser.eval(VISIBLE)) == len(states[2])  # and the whole state beside them
    browser.key("j")
    assert browser.eval(STEP) == "3"
    browser.key("k")
    browser.key("ArrowUp")
    assert browser.eval(STEP) == "1"
    browser.key("End")
    assert browser.eval(STEP) == "7" and browser.eval(CHANGED) == changed(states, 7)
    assert browser.eval("document.querySelector('tr.on').classList.contains('bad')") is True
    browser.key("Home")
    assert browser.eval(STEP) == "0" and browser.eval(CHANGED) == []
    browser.click('g.event[data-step="5"] rect')
    assert browser.eval(STEP) == "5" and browser.eval(CHANGED) == changed(states, 5)
    browser.click('tr[data-step="4"]')
    assert browser.eval(STEP) == "4"
    # the filter: only the fields whose name or value holds "hwm", in the state and the step table
    browser.key("/")
    browser.type("hwm")
    want = [key for key, value in states[4].items() if "hwm" in f"{key}{value}".lower()]
    assert browser.eval(VISIBLE) == want and len(want) == 3  # b1.log, b2.log, true hwm
    shown = browser.eval("[...document.querySelectorAll('table.steps li:not(.hidden)')].map(li => li.dataset.key)")
    lines = {(key, f"{key}: {compact(states[k - 1].get(key, '-'), states[k].get(key, '-'))}")
             for k in range(1, len(states)) for key in changed(states, k)}
    assert set(shown) == {key for key, line in lines if "hwm" in line.lower()}
    browser.key("Escape")
    assert len(browser.eval(VISIBLE)) == len(states[4])
    browser.key("ArrowDown")  # the keys step again once the filter lets go of them
    assert browser.eval(STEP) == "5"


def test_two_phase_commit_example(browser: Browser, tmp_path: Path) -> None:
    trace = saved(tmp_path, str(EXAMPLE), "--invariant", "prepared-never-aborts")
    states = described(trace, str(EXAMPLE))
    browser.open(page(tmp_path, trace, model=str(EXAMPLE)).as_uri())
    assert browser.eval(LANES) == ["tm", "r1", "r2", "r3"]
    # the TM aborts (step 1) and broadcasts Abort; r1 prepares (2), its Prepared still in flight,
    # and takes the Abort (3); r2 and r3 never do within the trace
    assert sorted(browser.eval(ARROWS)) == [["Abort", "1", "3"], ["Abort (in flight)", "1", ""],
                                            ["Abort (in flight)", "1", ""], ["Prepared (in flight)", "2", ""]]
    assert browser.eval(EVENT_LANES) == {"1": "tm", "2": "r1", "3": "r1"}
    browser.key("End")
    assert browser.eval(STEP) == "3" and browser.eval(CHANGED) == changed(states, 3) == ["r1"]
    assert "Invariant prepared-never-aborts is violated" in browser.eval("document.body.innerText")
    assert browser.eval(CUT_OFF) == [] and browser.eval(WIDE) is False


def test_a_lasso_draws_its_cycle_and_fairness(browser: Browser, tmp_path: Path) -> None:
    trace = saved(tmp_path, "transactions", "--mode", "kip98", "--no-invariants", "--property", "lso-advances")
    browser.open(page(tmp_path, trace).as_uri())
    facts = browser.eval("document.querySelector('g.facts').textContent")
    assert "The cycle: the run stutters at step 12 for ever." in facts
    assert "21 fairness conditions: enabled nowhere on the cycle" in facts  # as kmc check prints them
    assert browser.eval("document.querySelectorAll('g.loop path').length") == 1
    assert browser.eval("document.querySelector('tr.loop-start').dataset.step") == "12"
    # the produce request that times out (step 7) and lands after the abort marker (10): KIP-890's hanging transaction
    assert ["Produce", "6", "10"] in browser.eval(ARROWS)


def test_two_traces_side_by_side(browser: Browser, tmp_path: Path) -> None:
    a = saved(tmp_path / "a", "kraft", "--mode", "v3.5", *KRAFT, "--invariant", "no-committed-record-lost-globally")
    b = saved(tmp_path / "b", "kraft", "--mode", "kip966", *KRAFT, "--invariant", "no-committed-record-lost-globally")
    browser.open(page(tmp_path, a, b).as_uri())
    steps = "[...document.querySelectorAll('section.trace')].map(s => s.dataset.step)"
    titles = "[...document.querySelectorAll('section.trace p.settings')].map(p => p.textContent.split(' ')[1])"
    assert browser.eval(titles) == ["--mode=v3.5", "--mode=kip966"]
    left = browser.eval("[...document.querySelectorAll('section.trace')].map(s => s.getBoundingClientRect().left)")
    assert left[0] < left[1]  # side by side
    browser.key("ArrowDown")
    assert browser.eval(steps) == ["1", "0"]  # the keys move the active trace
    browser.key("Tab")
    browser.key("End")
    assert browser.eval(steps) == ["1", "4"]
    browser.click('#trace-0 tr[data-step="3"]')
    browser.key("ArrowDown")
    assert browser.eval(steps) == ["4", "4"]
    assert browser.eval(WIDE) is False
    browser.open(page(tmp_path, a, b).as_uri() + "#step=2,3")  # a link to a step of each
    assert browser.eval(steps) == ["2", "3"]
