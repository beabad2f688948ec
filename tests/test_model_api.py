"""The model API: actions declared with @action, and the quantifier and counting helpers every
backend provides. The independent source for the helpers is the Scalar backend (Python's own
all, any, sum and ==); each other backend must compute the same value on the same inputs."""

from __future__ import annotations

from itertools import product
from typing import Any, Callable

import numpy as np
import pytest
import z3

from kmc.model.core import NONE, Action, Backend, Bool, Domain, Effect, Field, Model, Option, Schema, StateView, action
from kmc.model.replication import Replication
from kmc.semantics.scalar import Scalar
from kmc.semantics.symbolic import Symbolic, as_int
from kmc.semantics.symbolic_value import Sym
from kmc.semantics.tracing import Term, Tracing
from kmc.semantics.vector import Vector

HELPERS: dict[str, Callable[[list[Any], Backend], Any]] = {
    "forall": lambda xs, X: X.forall(range(len(xs)), lambda k: xs[k] > 0),
    "exists": lambda xs, X: X.exists(range(len(xs)), lambda k: xs[k] == 1),
    "forall over none": lambda xs, X: X.forall(range(0), lambda k: xs[k] > 0),
    "exists over none": lambda xs, X: X.exists(range(0), lambda k: xs[k] > 0),
    "count of comparisons": lambda xs, X: X.count(x >= 1 for x in xs),
    "count of 0/1 flags": lambda xs, X: X.count(X.ite(x > 0, 1, 0) for x in xs),
    "count with constants": lambda xs, X: X.count([True, xs[0] < 0, False, 1]) + 0,
    "iff": lambda xs, X: X.iff(xs[0] > 0, xs[1] == NONE),
    "iff of a flag": lambda xs, X: X.iff(X.ite(xs[0] > 0, 1, 0), xs[1] < 1),
}
ROWS = list(product(range(-1, 3), repeat=3))  # every assignment of three fields in [-1, 2]


def _scalar(name: str) -> list[int]:
    return [int(HELPERS[name](list(row), Scalar())) for row in ROWS]


@pytest.mark.parametrize("name", HELPERS)
def test_vector_helpers_compute_what_the_scalar_backend_computes(name: str) -> None:
    columns = [np.array([row[k] for row in ROWS], dtype=np.int16) for k in range(3)]
    out = HELPERS[name](columns, Vector())
    values = np.broadcast_to(np.asarray(out), (len(ROWS),)).astype(int).tolist()
    assert values == _scalar(name)


@pytest.mark.parametrize("name", HELPERS)
def test_symbolic_helpers_compute_what_the_scalar_backend_computes(name: str) -> None:
    fields = [z3.BitVec(f"x{k}", 5) for k in range(3)]
    out = HELPERS[name]([Sym(f, 5) for f in fields], Symbolic(5))
    for row, want in zip(ROWS, _scalar(name)):
        at = [(f, z3.BitVecVal(v, 5)) for f, v in zip(fields, row)]
        term = z3.simplify(z3.substitute(as_int(out, 8), *at)) if isinstance(out, Sym) else as_int(out, 8)
        got = term.as_signed_long() if isinstance(term, z3.BitVecNumRef) else int(term)
        assert got == want, (name, row)


@pytest.mark.parametrize("name", HELPERS)
def test_tracing_helpers_ask_no_truth_value(name: str) -> None:
    out = HELPERS[name]([Term(f"x{k}") for k in range(3)], Tracing())
    assert isinstance(out, (Term, bool, int))


REPLICA = Domain(lambda m: range(m.settings["replicas"]), lambda r: f"r{r + 1}")


class Toy(Model):
    name = "toy"
    summary = "replicas that start once"
    modes = {"only": "the one mode"}
    options = (Option("mode", "only", "mode", choices=("only",)), Option("replicas", 2, "replicas", min=1, max=3))

    def _build(self) -> None:
        self.schema = Schema([Field("up", lo=0, hi=1, shape=(self.settings["replicas"],), replica_axes=(0,))])

    def initial_states(self) -> list[tuple[int, ...]]:
        return [self.schema.state(up=[0] * self.settings["replicas"])]

    def actions(self) -> list[Action]:
        return [self.start]

    @action(replica=REPLICA)
    def start(self, s: StateView, X: Backend, r: int) -> Bool:
        """A replica starts."""
        return s.up[r] == 0

    @start.effect
    def _(self, s: StateView, X: Backend, r: int) -> Effect:
        return {"up": {r: 1}}


def test_an_action_read_from_a_model_is_its_action() -> None:
    model = Toy(replicas=3)
    start = model.start
    assert (start.name, start.doc, [p.name for p in start.params]) == ("start", "A replica starts.", ["replica"])
    assert [i.label for i in model.instances()] == ["start(replica=r1)", "start(replica=r2)", "start(replica=r3)"]
    view = model.schema.view(model.initial_states()[0])
    assert start.guard(view, Scalar(), 1) and start.effect(view, Scalar(), 1) == {"up": {1: 1}}


def test_declaration_mistakes_name_the_action() -> None:
    def start(self: Toy, s: StateView, X: Backend) -> Bool:
        return True

    with pytest.raises(TypeError, match=r"action start: its guard takes 3 arguments; .* \(self, s, X, replica\)"):
        action(replica=REPLICA)(start)
    declared = action(replica=REPLICA)(Toy.start.guard)
    with pytest.raises(TypeError, match="action start declares no effect"):
        declared.__get__(Toy(), Toy)


def test_replace_keeps_name_parameters_and_doc() -> None:
    class Stuck(Toy):
        def _never(self, s: StateView, X: Backend, r: int) -> Bool:
            return False

        start = Toy.start.replace(guard=_never)

    model = Stuck()
    assert (model.start.name, model.start.doc) == ("start", "A replica starts.")
    view = model.schema.view(model.initial_states()[0])
    assert not model.start.guard(view, Scalar(), 0)


def test_replication_mode_variants_keep_the_action_names() -> None:
    names = {mode: [a.name for a in Replication(mode=mode).actions()] for mode in Replication.modes}
    common = ["controller_elect_leader", "controller_shrink_isr", "become_leader", "leader_write",
              "leader_inc_high_watermark", "leader_shrink_isr", "leader_expand_isr", "become_follower", "follower_fetch"]
    assert all(n == common for mode, n in names.items() if mode != "kip320-first-try")
    assert names["kip320-first-try"] == [*common, "follower_truncate"]
    assert Replication(mode="kip320").actions()[4].guard.__name__ == "fenced_leader_inc_high_watermark"


def test_a_title_reruns_the_model_with_its_switches_turned_off() -> None:
    """A run's one-line title (printed above every counterexample) names a switch that is on by
    default and turned off as --no-name: pasted back, the flags give the same settings."""
    from kmc.cli.main import main
    from tests.conftest import build

    model, _ = build("quorum", mode="kip996", resend_begin_quorum_epoch=False)
    words = model.title().split()
    assert "--no-resend-begin-quorum-epoch" in words and "--follower-rejects-pre-vote" in words
    assert main(["check", *words, "--max-depth", "2", "--allow-incomplete", "-q"]) == 0  # every flag of the title is one the CLI takes
