"""A model's lanes and messages (kmc/model/lanes.py): declared in a model file, checked when
the model is built (each mistake one line, exit 2, naming the file, the line of `Lanes(` and
the fix), and drawn by kmc/traces/sequence.py: an arrow only for a message, from the step that
sends it to the step that receives it; a model that declares none gets a lane per entity."""

from __future__ import annotations

from pathlib import Path

import pytest

from kmc import registry
from kmc.engines.explicit import bfs
from kmc.traces import sequence
from kmc.traces.scenario import run_scenario

MODEL = '''from __future__ import annotations

from typing import Sequence

from kmc.model.core import (
    Action, Backend, Bool, Domain, Effect, Field, Lane, Lanes, Message, Model, Option, Schema, State, StateView,
    Invariant, action, invariant,
)

NODE = Domain(lambda m: (0, 1), lambda n: f"n{n + 1}")


class PingPong(Model):
    name = "ping-pong"
    summary = "n1 pings n2, which pongs"
    modes = {"plain": "the one mode"}
    options = (Option("mode", "plain", "the one mode", choices=("plain",)),)
    lanes = Lanes(  # mark: lanes
        Lane("nodes", NODE),
        local={"rest": "node"},
        messages=[Message("Ping", "node", "peer", sent_by="ping", received_by="pong")],
    )

    def _build(self) -> None:
        self.schema = Schema([Field("sent", lo=0, hi=1), Field("got", lo=0, hi=1), Field("rested", lo=0, hi=1)])

    def initial_states(self) -> list[State]:
        return [self.schema.state(sent=0, got=0, rested=0)]

    def actions(self) -> Sequence[Action]:
        return [self.ping, self.pong, self.rest]

    @action(node=NODE, peer=NODE)
    def ping(self, s: StateView, X: Backend, node: int, peer: int) -> Bool:
        return X.and_(s.sent == 0, node == 0, peer == 1)

    @ping.effect
    def _(self, s: StateView, X: Backend, node: int, peer: int) -> Effect:
        return {"sent": 1}

    @action(node=NODE, peer=NODE)
    def pong(self, s: StateView, X: Backend, node: int, peer: int) -> Bool:
        return X.and_(s.sent == 1, s.got == 0, node == 0, peer == 1)

    @pong.effect
    def _(self, s: StateView, X: Backend, node: int, peer: int) -> Effect:
        return {"got": 1}

    @action(node=NODE)
    def rest(self, s: StateView, X: Backend, node: int) -> Bool:
        return X.and_(s.got == 1, s.rested == 0, node == 1)

    @rest.effect
    def _(self, s: StateView, X: Backend, node: int) -> Effect:
        return {"rested": 1}

    def describe(self, state: State) -> dict[str, str]:
        v = self.schema.view(state)
        return {"n1.sent": str(v.sent), "n2.got": str(v.got), "n2.rested": str(v.rested)}


@invariant("in-range")
def in_range(m: PingPong, s: StateView, X: Backend) -> Bool:
    return s.got <= 1


def invariants(m: PingPong) -> list[Invariant]:
    return [in_range(m)]
'''

# (case, the edit, what the one line must say after `FILE:LINE: lanes: `)
MISTAKES = [
    ("an action named wrong", ('sent_by="ping"', 'sent_by="pingg"'),
     "message Ping names action 'pingg', which the model does not declare (did you mean ping?): name one of its "
     "actions"),
    ("an end that is no lane", ('"node", "peer", sent_by', '"node", "server", sent_by'),
     "message Ping: 'server' is neither a parameter of action ping (node, peer) nor a lane (nodes): name one of them"),
    ("an action without a lane", ('local={"rest": "node"}', "local={}"),
     'action rest has no lane: add "rest": LANE to local=, or name it in a Message\'s sent_by= or received_by='),
    ("a parameter over no lane", ('NODE = Domain(lambda m: (0, 1), lambda n: f"n{n + 1}")',
                                  'NODE = Domain(lambda m: (0, 1), lambda n: f"n{n + 1}")\n'
                                  'LANE = Domain(lambda m: (0,), lambda n: f"n{n + 1}")'),
     "message Ping: action ping's parameter node names n2, not a lane (n1): name a lane by a parameter that ranges over "
     "lanes"),
    ("a local event on many lanes", ('local={"rest": "node"}', 'local={"rest": "nodes"}'),
     "local: action rest happens on 'nodes', a lane per value (n1, n2): name the one by a parameter of rest"),
    ("two lanes of one name", ('Lane("nodes", NODE),', 'Lane("nodes", NODE), Lane("n1"),'),
     "two lanes are named n1: give each lane its own name"),
    ("a key that is no parameter", ('received_by="pong")', 'received_by="pong", key="batch")'),
     "message Ping: its key 'batch' is not a parameter of action ping: a key is a parameter of every action that "
     "sends or receives it"),
]


def model_file(tmp_path: Path, edit: tuple[str, str] | None = None) -> Path:
    text = MODEL
    if edit is not None:
        assert edit[0] in text, edit[0]
        text = text.replace(edit[0], edit[1])
        if "LANE = " in edit[1]:
            text = text.replace('Lane("nodes", NODE)', 'Lane("nodes", LANE)')
    path = tmp_path / "ping_pong.py"
    path.write_text(text)
    return path


@pytest.mark.parametrize("case, edit, message", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_a_lanes_mistake_is_one_line(run_kmc, tmp_path: Path, case: str, edit: tuple[str, str],
                                     message: str) -> None:
    path = model_file(tmp_path, edit)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "# mark: lanes" in text)
    rc, out, err = run_kmc("check", str(path), "--no-invariants")
    assert rc == 2 and out == "" and err.count("\n") == 1, err
    assert err == f"kmc: error: {path}:{line}: lanes: {message}\n"


def test_lanes_that_are_not_lanes(run_kmc, tmp_path: Path) -> None:
    path = model_file(tmp_path, ("    lanes = Lanes(  # mark: lanes", "    lanes = ('nodes',)\n    _unused = Lanes("))
    rc, _, err = run_kmc("check", str(path), "--no-invariants")
    assert rc == 2 and err.count("\n") == 1
    assert "model class PingPong: lanes = ('nodes',): declare lanes = Lanes(Lane(\"controller\"), ..." in err


def test_a_message_is_an_arrow_from_its_send_to_its_receipt(tmp_path: Path) -> None:
    model, _ = registry.build(str(model_file(tmp_path)))
    trace = run_scenario(model, ["ping(n1, n2)", "pong(n1, n2)", "rest(n2)"])
    seq = sequence.build(trace)
    assert seq.participants == ["n1", "n2"]
    assert [(a.message, a.source, a.target, a.sent, a.received) for a in seq.arrows] == [("Ping", "n1", "n2", 1, 2)]
    assert [(ev.step, ev.lane) for ev in seq.events] == [(1, "n1"), (2, "n2"), (3, "n2")]
    assert seq.events[2].notes == {"n2": ["rested 0 → 1"]}


def test_kraft_lrs_controller_events_are_notes_on_the_controller() -> None:
    model, invs = registry.build("kraft", mode="v3.5", unclean_shutdown_limit=1, fence_broker_limit=1,
                                 clean_shutdown_limit=0)
    trace = bfs.check(model, registry.select(invs, ["leader-completeness"])).invariants["leader-completeness"].trace
    seq = sequence.build(trace)
    assert seq.participants == ["controller", "b1", "b2"]
    lanes = {ev.label.split("(")[0]: ev.lane for ev in seq.events}
    assert lanes["fence_broker"] == "controller" and lanes["unclean_shutdown"] == "b1"
    assert all(2 not in (a.sent, a.received) and 4 not in (a.sent, a.received) for a in seq.arrows)


def test_a_model_that_declares_nothing_gets_a_lane_per_entity(tmp_path: Path) -> None:
    path = model_file(tmp_path, ("    lanes = Lanes(  # mark: lanes", "    _unused = Lanes("))
    model, _ = registry.build(str(path))
    seq = sequence.build(run_scenario(model, ["ping(n1, n2)", "pong(n1, n2)"]))
    assert seq.participants == ["n1", "n2"] and seq.arrows == []  # entity groups of describe, no arrows
    assert [ev.lane for ev in seq.events] == ["n1", "n2"]


def test_a_key_matches_each_receipt_to_its_send() -> None:
    """Without idempotence, batch b1 overtakes b0 in the network and is appended first (the
    in-order violation of docs/idempotence.md): each Produce arrow runs from its own send."""
    model, invs = registry.build("idempotence", mode="no-idempotence")
    trace = bfs.check(model, registry.select(invs, ["in-order"])).invariants["in-order"].trace
    assert [s.instance.label for s in trace.steps[1:]] == [
        "send(batch=b0)", "send(batch=b1)", "leader_append(batch=b1)", "leader_append(batch=b0)"]
    arrows = [(a.message, a.sent, a.received) for a in sequence.build(trace).arrows]
    assert arrows == [("Produce(b0)", 1, 4), ("Produce(b1)", 2, 3), ("ProduceResponse(b1)", 3, 3),
                      ("ProduceResponse(b0)", 4, 4)]
