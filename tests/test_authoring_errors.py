"""Writing a model: every mistake a new user makes is one line, exit 2, naming the user's file
and line and the fix (issue 27, item 6).

Each case writes a model file (a small counter with one mistake planted, marked by a comment
naming the case) into a fresh folder, runs `kmc check` on it, and checks: exit 2, exactly one
line on stderr, `FILE:LINE` of the marked line, and the fix. Also: the contract's messages
name the replacement and come once with the number of bindings, an effect that leaves its
range says so, sequence diagrams of a model without `describe()`, and options before the
model."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from kmc.cli.main import main

ROOT = Path(__file__).resolve().parents[1]

BASE = '''from __future__ import annotations

from typing import Sequence

from kmc.model.core import (
    Action, Backend, Bool, Domain, Effect, Field, Invariant, Model, Option, Schema, State, StateView, action,
    invariant,
)

STEP = Domain(lambda m: (1,))
TABLE = {0: 1, 1: 1, 2: 1, 3: 0}


class Counter(Model):  # mark: class
    name = "counter"
    summary = "x climbs to 3"
    modes = {"plain": "the one mode"}
    options = (Option("mode", "plain", "the one mode", choices=("plain",)),)

    def _build(self) -> None:  # mark: _build
        self.schema = Schema([Field("x", lo=0, hi=3)])

    def initial_states(self) -> list[State]:  # mark: initial_states
        return [self.schema.state(x=0)]

    def actions(self) -> Sequence[Action]:  # mark: actions
        return [self.bump]

    @action(k=STEP)  # mark: action
    def bump(self, s: StateView, X: Backend, k: int) -> Bool:
        return s.x < 3  # mark: guard

    @bump.effect  # mark: effect
    def _(self, s: StateView, X: Backend, k: int) -> Effect:
        return {"x": s.x + k}  # mark: effect body


@invariant("small")  # mark: invariant
def small(m: Counter, s: StateView, X: Backend) -> Bool:
    return s.x <= 3


def invariants(m: Counter) -> list[Invariant]:  # mark: invariants
    return [small(m)]  # mark: listed
'''


def planted(*edits: tuple[str, str]) -> str:
    text = BASE
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return text


RESET = '''    @action()  # mark: reset
    def reset(self, s: StateView, X: Backend) -> Bool:
        return s.x == 3

    @reset.effect
    def _(self, s: StateView, X: Backend) -> Effect:
        return {"x": 0}

    @bump.effect  # mark: effect'''

# (case, file text, the marked line the message names, what the message must say)
DECLARATIONS = [
    ("no _build", planted(("def _build(self)", "def build(self)")), "class",
     "model class Counter defines no _build() (it defines build: name it _build): add `def _build(self) -> None:"),
    ("no initial_states", planted(("def initial_states(self)", "def initial(self)")), "class",
     "model class Counter defines no initial_states(): add `def initial_states(self) -> list[State]: return "
     "[self.schema.state(...)]`"),
    ("no actions", planted(("def actions(self)", "def all_actions(self)")), "class",
     "model class Counter defines no actions() (it defines all_actions: name it actions): add "
     "`def actions(self) -> Sequence[Action]:"),
    ("no effect", planted(('''    @bump.effect  # mark: effect
    def _(self, s: StateView, X: Backend, k: int) -> Effect:
        return {"x": s.x + k}  # mark: effect body
''', "")), "action",
     "action bump declares no effect: add `@bump.effect` and `def _(self, s, X, k) -> Effect:` below it, returning "
     "the fields it changes"),
    ("a guard without its parameter", planted(("def bump(self, s: StateView, X: Backend, k: int)",
                                               "def bump(self, s: StateView, X: Backend)")), "action",
     "action bump: its guard takes 3 arguments; with parameters (k) it must take (self, s, X, k)"),
    ("an action actions() does not list", planted(("    @bump.effect  # mark: effect", RESET)), "reset",
     "action reset is declared but actions() does not list it (engines explore only what it lists): add "
     "self.reset to actions(), or delete it"),
    ("actions() lists the declaration", planted(("return [self.bump]", "return [Counter.bump]")), "actions",
     "actions() lists Counter.bump, the declaration: list the model's action, self.bump"),
    ("an invariant without @invariant", planted(('@invariant("small")  # mark: invariant\n', "")), "listed",
     "TypeError: small() missing 2 required positional arguments: 's' and 'X': an invariant is "
     "`@invariant(\"name\")` above `def f(m, s, X)`, listed as f(model)"),
    ("an invariant listed uncalled", planted(("return [small(m)]", "return [small]")), "invariants",
     "invariants(model) lists small, the declaration: call it, small(model)"),
    ("an invariant without the model", planted(("def small(m: Counter, s: StateView, X: Backend)",
                                                "def small(s: StateView, X: Backend)")), "invariant",
     "invariant small takes 2 arguments; an invariant takes (m, s, X): the model, the state, the backend"),
    ("an initial state missing a field", planted(("self.schema.state(x=0)", "self.schema.state()")),
     "initial_states body", "schema.state() misses field x: give every field its value, as schema.state(x=...)"),
    ("an initial state naming no field", planted(("self.schema.state(x=0)", "self.schema.state(x=0, y=1)")),
     "initial_states body", "schema.state() names no field 'y'; fields: x"),
    ("an initial state out of range", planted(("self.schema.state(x=0)", "self.schema.state(x=7)")),
     "initial_states", "initial_states() starts x at 7, outside its range [0, 3]: start it inside, or widen the "
     "range of field x"),
    ("one initial state, not a list", planted(("return [self.schema.state(x=0)]", "return self.schema.state(x=0)")),
     "initial_states", "initial_states() returns one state, not a list of states: return [self.schema.state(...)]"),
    ("an initial state of the wrong width", planted(("return [self.schema.state(x=0)]", "return [(0, 0)]")),
     "initial_states", "initial_states() gives (0, 0): a state is a tuple of 1 ints (x), as self.schema.state(...) "
     "builds"),
    ("no schema", planted(("self.schema = Schema(", "self.fields = Schema(")), "_build",
     "Counter._build() sets no self.schema: set self.schema = Schema([Field(\"x\", lo=0, hi=3), ...]) in it"),
    ("an empty range", planted(('Field("x", lo=0, hi=3)', 'Field("x", lo=3, hi=0)')), "_build body",
     "field x: empty range [3, 0]: lo must be at most hi"),
    ("no mode option", planted(('options = (Option("mode", "plain", "the one mode", choices=("plain",)),)',
                                "options = ()")), "class",
     "model class Counter: its options must start with the mode: options = (Option(\"mode\", \"default\""),
    ("a shape that is not a tuple", planted(('Field("x", lo=0, hi=3)', 'Field("x", lo=0, hi=3, shape=2)')),
     "_build body", "field x: shape=2: a shape is a tuple of sizes, as shape=(3,) or shape=(3, 2)"),
    ("a Domain of values", planted(("STEP = Domain(lambda m: (1,))", "STEP = Domain((1,))  # mark: domain")),
     "domain", "Domain((1,)) takes a function of the model, as Domain(lambda m: m.R, replica_name)"),
    ("a parameter that is not a Domain", planted(("@action(k=STEP)", "@action(k=(1,))")), "action",
     "action bump: its parameter k ranges over (1,), not a Domain: declare one, as REPLICA = "
     "Domain(lambda m: m.R, replica_name), and write k=REPLICA"),
    ("no invariants(model)", planted(("def invariants(m: Counter)", "def invariant_list(m: Counter)")), None,
     "no invariants: define invariants(model) in {stem}, or decorate it with @for_model(Counter) "
     "(kmc.invariants.pairing) in a module imported with the model"),
    ("a mode missing from modes", planted(('modes = {"plain": "the one mode"}', 'modes = {"simple": "one"}')),
     "class", "model class Counter: mode 'plain' of its mode option is not in modes (simple): give it a line in modes"),
]


def mark_line(text: str, mark: str) -> int:
    if mark.endswith(" body") and mark != "effect body":
        return mark_line(text, mark[: -len(" body")]) + 1
    for number, line in enumerate(text.splitlines(), 1):
        if line.endswith(f"# mark: {mark}"):
            return number
    raise AssertionError(f"no line marked {mark!r}")


def run(folder: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, list[str]]:
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err.splitlines()


def write(folder: Path, name: str, text: str) -> str:
    (folder / name).write_text(text)
    return name


def stem(case: str) -> str:
    return "m_" + re.sub(r"\W+", "_", case).strip("_")


@pytest.mark.parametrize("case,text,mark,fix", DECLARATIONS, ids=[d[0] for d in DECLARATIONS])
def test_a_declaration_mistake_is_one_line_with_file_line_and_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        case: str, text: str, mark: str | None, fix: str) -> None:
    monkeypatch.chdir(tmp_path)
    name = write(tmp_path, stem(case) + ".py", text)
    rc, out, err = run(tmp_path, ["check", name, "-q"], capsys)
    print("\n".join(err))
    assert rc == 2 and out == "" and len(err) == 1
    if mark is None:  # a module-level mistake: the module is named
        assert err[0] == f"kmc: error: model counter: {fix.format(stem=stem(case))}"
        return
    assert err[0].startswith(f"kmc: error: {name}:{mark_line(text, mark)}: ")
    assert fix in err[0]


# -- the contract: the replacement, once, with the number of bindings -------------------------

STEPS3 = ("STEP = Domain(lambda m: (1,))", "STEP = Domain(lambda m: (1, 2, 3))")

CONSTRUCTS = [
    ("if", planted(("return s.x < 3  # mark: guard", "return True if s.x < 3 else False  # mark: guard")),
     "guard", "use X.ite(c, a, b) for `a if c else b`"),
    ("if statement", planted(("        return s.x < 3  # mark: guard",
                              "        if s.x < 3:  # mark: guard\n            return True\n        return False")),
     "guard", "use X.ite(c, a, b) for `if` (compute both branches, choose with X.ite)"),
    ("and", planted(("return s.x < 3  # mark: guard", "return s.x >= 0 and s.x < 3  # mark: guard")),
     "guard", "use X.and_(a, b) for `and`"),
    ("or", planted(("return s.x < 3  # mark: guard", "return s.x < 0 or s.x < 3  # mark: guard")),
     "guard", "use X.or_(a, b) for `or`"),
    ("not", planted(("return s.x < 3  # mark: guard", "return not s.x >= 3  # mark: guard")),
     "guard", "use X.not_(a) for `not`"),
    ("chained comparison", planted(("return s.x < 3  # mark: guard", "return 0 <= s.x < 3  # mark: guard")),
     "guard", "use X.and_(a <= b, b < c) for a chained comparison"),
    ("in", planted(("return s.x < 3  # mark: guard", "return s.x in (0, 1, 2)  # mark: guard")),
     "guard", "use X.or_(x == a, x == b, ...) for `in`"),
    ("max", planted(('return {"x": s.x + k}  # mark: effect body', 'return {"x": max(s.x + k, 0)}  # mark: effect body')),
     "effect body", "use X.max_(a, b) for `max`"),
    ("list index", planted(('return {"x": s.x + k}  # mark: effect body',
                            'return {"x": [1, 2, 3, 3][s.x]}  # mark: effect body')),
     "effect body", "state-dependent term x used as an index (use X.at), at {FILE} (in _) `return "
     "{\"x\": [1, 2, 3, 3][s.x]} # mark: effect body`: use X.at(xs, i) for `xs[i]`"),
    ("dict", planted(("return s.x < 3  # mark: guard", "return TABLE[s.x] == 1  # mark: guard")),
     "guard", "state-dependent term x used as a dict key or set member, at {FILE} (in bump) `return TABLE[s.x] == 1 "
     "# mark: guard`: use X.at(a_list, i) or X.ite over the keys for a dict or set lookup"),
    ("a value for a whole array", planted(('Field("x", lo=0, hi=3)', 'Field("x", lo=0, hi=3, shape=(2,))'),
                                          ("self.schema.state(x=0)", "self.schema.state(x=[0, 0])"),
                                          ("return s.x < 3  # mark: guard", "return s.x[0] < 3  # mark: guard"),
                                          ('return {"x": s.x + k}  # mark: effect body', 'return {"x": s.x[0] + k}'),
                                          ("return s.x <= 3", "return s.x[0] <= 3")), "effect",
     "ValueError: effect sets field x: one value for an axis of size 2: give a list, or {index: value} for some "
     "elements"),
    ("a guard without return", planted(("return s.x < 3  # mark: guard", "s.x < 3  # mark: guard")),
     "action", "the guard returns None: return a truth value (a missing `return`?), at {FILE}"),
    ("an effect without return", planted(('return {"x": s.x + k}  # mark: effect body',
                                          '{"x": s.x + k}  # mark: effect body')),
     "effect", "the effect returns None, not a dict: return {\"field\": new value, ...} (a missing `return`?), "
     "at {FILE}"),
    ("dict get", planted(("return s.x < 3  # mark: guard", "return TABLE.get(s.x, 0) == 1  # mark: guard")),
     "guard", "use X.at(a_list, i) or X.ite over the keys for a dict or set lookup"),
]


@pytest.mark.parametrize("case,text,mark,fix", CONSTRUCTS, ids=[c[0] for c in CONSTRUCTS])
def test_a_data_dependent_construct_names_its_replacement_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        case: str, text: str, mark: str, fix: str) -> None:
    monkeypatch.chdir(tmp_path)
    text = text.replace(*STEPS3)  # three bindings: k = 1, 2, 3
    name = write(tmp_path, stem(case) + ".py", text)
    rc, out, err = run(tmp_path, ["check", name, "-q"], capsys)
    print("\n".join(err))
    assert rc == 2 and len(err) == 1
    part = "effect" if mark.startswith("effect") else "guard"
    at = f"{name}:{mark_line(text, mark)}"
    assert err[0].startswith(f"kmc: error: model counter breaks the contract of kmc/model/core.py: action bump(k=1) "
                             f"({part}, 3 bindings): ")
    assert fix.replace("{FILE}", at) in err[0] and re.search(rf"at {re.escape(at)}( |$)", err[0])
    assert err[0].count("action bump(") == 1  # once, not once per binding


def test_min_in_an_effect_of_three_bindings_is_one_problem_with_their_number(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    text = planted(STEPS3, ('return {"x": s.x + k}  # mark: effect body',
                            'return {"x": min(s.x + k, 3)}  # mark: effect body'))
    name = write(tmp_path, "m_min.py", text)
    rc, _, err = run(tmp_path, ["check", name, "-q"], capsys)
    assert rc == 2 and err == [
        "kmc: error: model counter breaks the contract of kmc/model/core.py: action bump(k=1) (effect, 3 bindings): "
        f"truth value of state-dependent term ((x + 1) > 3) asked for, at {name}:{mark_line(text, 'effect body')} "
        "(in _) `return {\"x\": min(s.x + k, 3)} # mark: effect body`: use X.min_(a, b) for `min`"]  # one line: spaces collapse


# -- ranges -----------------------------------------------------------------------------------


def test_an_effect_that_leaves_its_range_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """No upper guard: bump takes x from 3 to 4 (x reaches 3 in three steps from 0). Before,
    the random walks went on to x = 15 and the z3 interpretation wrapped around: "interpretations
    disagree (a Python `is`?)"."""
    monkeypatch.chdir(tmp_path)
    text = planted(("return s.x < 3  # mark: guard", "return True  # mark: guard"))
    name = write(tmp_path, "m_unguarded.py", text)
    rc, _, err = run(tmp_path, ["check", name, "-q"], capsys)
    assert rc == 2 and err == [
        "kmc: error: model counter breaks the contract of kmc/model/core.py: action bump(k=1) sets x to 4, outside "
        f"[0, 3], from the reachable state x=3 (effect at {name}:{mark_line(text, 'effect')}): guard it, or widen "
        "the range of x"]


def test_the_differential_check_draws_states_inside_the_declared_ranges(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    from kmc import registry
    from kmc.contract.differential import draw

    monkeypatch.chdir(tmp_path)
    name = write(tmp_path, "m_ranges.py", planted(("return s.x < 3  # mark: guard", "return True  # mark: guard")))
    model = registry.build(name)[0]
    states = draw(model, random.Random(0), 200)
    assert len(states) > 100 and all(0 <= x <= 3 for (x,) in states)  # the walks stop at 3


# -- sequence diagrams without describe() ----------------------------------------------------


def test_mermaid_and_html_of_a_model_without_describe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """One lifeline, the model's, for a counter with no replica (was: IndexError)."""
    monkeypatch.chdir(tmp_path)
    text = planted(('Field("x", lo=0, hi=3)', 'Field("x", lo=0, hi=4)'),
                   ("return s.x <= 3", "return s.x <= 2"))
    name = write(tmp_path, "m_plain.py", text)
    rc, _, _ = run(tmp_path, ["check", name, "-q", "--itf-dir", "traces"], capsys)
    assert rc == 12
    rc, out, err = run(tmp_path, ["trace", "traces/counter-plain-small.itf.json", "--model", name, "--format", "mermaid"], capsys)
    assert (rc, err) == (0, [])
    assert out.splitlines() == [
        "sequenceDiagram",
        "    title counter --mode=plain",
        "    participant p0 as counter",
        "    Note over p0: 1. bump(k=1)<br/>x 0 → 1",
        "    Note over p0: 2. bump(k=1)<br/>x 1 → 2",
        "    Note over p0: 3. bump(k=1)<br/>x 2 → 3",
        "    Note over p0: small is violated",
    ]
    rc, out, err = run(tmp_path, ["trace", "traces/counter-plain-small.itf.json", "--model", name, "--format", "html"], capsys)
    assert (rc, err) == (0, [])
    assert out.count('<g class="event"') == 3 and 'text-anchor="middle">counter</text>' in out


def test_lifelines_of_a_model_without_describe_come_from_its_replica_axes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Two-phase commit without its describe(): the RM fields (replica axis 0) make lifelines
    r1..r3 (those a step involves: r1 here), the TM's and the messages' fields the model's own
    (the example's declared lanes set aside, as a model that declares none)."""
    monkeypatch.chdir(tmp_path)
    for f in ("model.py", "invariants.py"):
        shutil.copy(ROOT / "examples" / "two_phase_commit" / f, tmp_path / f)
    write(tmp_path, "plain_2pc.py", "from model import TwoPhaseCommit\nfrom kmc.model.core import Model\n\n\n"
                                    "class Plain(TwoPhaseCommit):\n    name = \"plain-2pc\"\n"
                                    "    describe = Model.describe\n    lanes = None\n")
    rc, _, _ = run(tmp_path, ["check", "plain_2pc.py", "-q", "--itf-dir", "traces"], capsys)
    assert rc == 12
    rc, out, _ = run(tmp_path, ["trace", "traces/plain-2pc-tla-prepared-never-aborts.itf.json", "--model",
                                "plain_2pc.py", "--format", "mermaid"], capsys)
    assert rc == 0
    lines = out.splitlines()
    assert [ln for ln in lines if "participant" in ln] == ["    participant p0 as r1", "    participant p1 as plain-2pc"]
    # the shortest trace (3 steps, as with describe()): the TM aborts, r1 prepares, r1 receives the abort
    assert lines[4:] == [  # regression pin (the notes' wording; branch lanes: full labels)
        "    Note over p1: 1. tm_abort()<br/>tm_state 0 → 2<br/>msg_abort 0 → 1",
        "    Note over p0: 2. rm_prepare(rm=r1)<br/>rm_state 0 → 1<br/>msg_prepared 0 → 1",
        "    Note over p0: 3. rm_rcv_abort_msg(rm=r1)<br/>rm_state 1 → 3",
        "    Note over p0,p1: prepared-never-aborts is violated",
    ]


# -- options before the model ----------------------------------------------------------------


def test_options_may_come_before_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    name = write(tmp_path, "m_options.py", BASE)
    after = run(tmp_path, ["check", name, "--engine", "scalar", "--max-depth", "3", "--allow-incomplete", "--json"],
                capsys)
    before = run(tmp_path, ["check", "--engine", "scalar", "--max-depth=3", "--allow-incomplete", "--json", name],
                 capsys)
    assert after[0] == before[0] == 0
    assert [ln for ln in after[1].splitlines() if "seconds" not in ln and "memory" not in ln and "per_s" not in ln] \
        == [ln for ln in before[1].splitlines() if "seconds" not in ln and "memory" not in ln and "per_s" not in ln]
    assert '"engine": "scalar"' in before[1] and '"distinct_states": 3' in before[1]  # x = 0, 1, 2 within 3 levels


def test_a_model_option_before_the_model_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(Path("."), ["check", "--engine", "scalar", "--mode", "kip320", "replication"], capsys)
    assert (rc, out) == (2, "") and err == [
        "kmc: error: --mode before the model: a model's own options (its mode, bounds and switches) follow its name, "
        "as kmc check replication --mode ...; only check's options may come before it"]
    rc, out, err = run(Path("."), ["compare", "--engin", "scalar", "replication"], capsys)
    assert (rc, out) == (2, "") and err == ["kmc: error: no such option: --engin (did you mean --engine?)"]
