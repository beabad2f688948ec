"""The processes of a protocol and the messages between them, as a model declares them for
its traces (kmc/traces/sequence.py draws them): lanes, and per action family a local event on
one lane or the sending or receiving of a message.

    lanes = Lanes(
        Lane("controller"), Lane("broker", BROKER),   # one lane; one lane per broker (b1, b2, ...)
        local={"fence_broker": "controller", "unclean_shutdown": "broker"},
        messages=[Message("Fetch", "follower", "leader",
                          sent_by="send_fetch_request", received_by="receive_fetch_request")],
    )

A lane is named in an action by one of its parameters (`broker`: the lane of the broker it
names; a parameter that names none, `leader=none`, names no lane), or by a lane's own name (a
lane per value named so is every one of them but the other end: a broadcast). A message's ends
are named as its sending action names them; `received_as=(sender, receiver)` names them as its
receiving action does when that differs. Checked when the model is built: one line,
`FILE:LINE: what is wrong: the fix`. Part of the model contract; depends on nothing else in kmc
but declared.py and located.py.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from kmc.model.declared import caller
from kmc.model.located import DeclarationError


@dataclass(frozen=True)
class Lane:
    """A process drawn as a lane: `Lane("controller")` is one; `Lane("broker", BROKER)` is one
    per value of the Domain, named as it shows them (b1, b2, ...)."""

    name: str
    each: Any = None  # a Domain (kmc/model/core.py), or None for a single process


@dataclass(frozen=True)
class Message:
    """A message `name` from lane `sender` to lane `receiver` (as the sending action names
    them), sent by the action `sent_by` (or by any of several) and received by `received_by`
    (either may be left out: a message put in by no action, or never taken out); `key`, a
    parameter of both actions, tells apart the messages of one kind in flight at once (the
    batch of a produce request), and is shown with the name."""

    name: str
    sender: str
    receiver: str
    sent_by: str | tuple[str, ...] = ()
    received_by: str | tuple[str, ...] = ()
    received_as: tuple[str, str] | None = None  # (sender, receiver) as the receiving action names them
    key: str | None = None

    def senders(self) -> tuple[str, ...]:
        return (self.sent_by,) if isinstance(self.sent_by, str) else tuple(self.sent_by)

    def receivers(self) -> tuple[str, ...]:
        return (self.received_by,) if isinstance(self.received_by, str) else tuple(self.received_by)


@dataclass(frozen=True)
class Moves:
    """What one step does on the lanes: its own lane, the messages it sends (name, sender,
    receivers) and receives (name, the lanes that may have sent it, receiver)."""

    home: str | None
    sends: list[tuple[str, str, list[str]]] = field(default_factory=list)
    receives: list[tuple[str, list[str], str]] = field(default_factory=list)


class Lanes:
    """A model's lanes, its actions' local events (action -> lane) and its messages."""

    def __init__(self, *lanes: Lane, local: Mapping[str, str] | None = None, messages: Sequence[Message] = ()):
        self.at = caller()
        self.lanes = tuple(lanes)
        self.local = dict(local or {})
        self.messages = tuple(messages)

    def members(self, model: Any) -> dict[str, list[str]]:
        """Each declared lane's name -> the lanes drawn for it, in order."""
        return {ln.name: [ln.name] if ln.each is None else [ln.each.show(v) for v in ln.each.values(model)]
                for ln in self.lanes}

    def order(self, model: Any) -> list[str]:
        return [name for names in self.members(model).values() for name in names]

    def moves(self, model: Any, action: Any, args: Sequence[int]) -> Moves:
        """The lanes of one step of `action` with parameters `args`."""
        members = self.members(model)
        bound = {p.name: (p, a) for p, a in zip(action.params, args)}

        def ends(name: str, other: list[str]) -> list[str]:
            if name in bound:
                p, a = bound[name]
                shown = p.show(a)
                return [shown] if any(shown in m for m in members.values()) else []
            return [m for m in members[name] if m not in other]

        out = Moves(None)
        for msg in self.messages:
            name = msg.name
            if msg.key is not None and msg.key in bound:
                p, a = bound[msg.key]
                name = f"{msg.name}({p.show(a)})"
            if action.name in msg.senders():
                src = ends(msg.sender, [])
                if src:
                    out.sends.append((name, src[0], ends(msg.receiver, src)))
            if action.name in msg.receivers():
                sender, receiver = msg.received_as or (msg.sender, msg.receiver)
                dst = ends(receiver, [])
                src = ends(sender, dst)
                if dst and src:
                    out.receives.append((name, src, dst[0]))
        if action.name in self.local:
            found = ends(self.local[action.name], [])
            home = found[0] if found else None
        else:
            home = (out.receives[0][2] if out.receives else out.sends[0][1] if out.sends else None)
        return Moves(home, out.sends, out.receives)

    # -- the checks run when a model is built ---------------------------------------------

    def check(self, model: Any, actions: Mapping[str, Any]) -> None:
        """`actions`: every action the model class declares, by name (each needs a lane, also
        one that only some options list)."""
        if not self.lanes or not all(isinstance(ln, Lane) for ln in self.lanes):
            raise self._error("Lanes(...) takes the lanes first: Lanes(Lane(\"controller\"), Lane(\"broker\", BROKER), "
                              "local={...}, messages=[...])")
        members = self.members(model)
        seen: list[str] = []
        for names in members.values():
            for name in names:
                if name in seen:
                    raise self._error(f"two lanes are named {name}: give each lane its own name")
                seen.append(name)
        for msg in self.messages:
            if not isinstance(msg, Message):
                raise self._error(f"messages lists {msg!r}: list Message(\"Fetch\", sender, receiver, sent_by=..., "
                                  "received_by=...)")
            if not msg.senders() and not msg.receivers():
                raise self._error(f"message {msg.name}: give sent_by=, received_by= or both (the actions)")
            for name in msg.senders():
                self._ends(actions, members, name, f"message {msg.name}", msg.sender, msg.receiver)
            for name in msg.receivers():
                ends = msg.received_as or (msg.sender, msg.receiver)
                self._ends(actions, members, name, f"message {msg.name}", *ends)
            for name in (*msg.senders(), *msg.receivers()) if msg.key is not None else ():
                if msg.key not in {p.name for p in actions[name].params}:
                    raise self._error(f"message {msg.name}: its key {msg.key!r} is not a parameter of action {name}: "
                                      "a key is a parameter of every action that sends or receives it")
        for name, lane in self.local.items():
            self._ends(actions, members, name, "local", lane)
            if lane not in {p.name for p in actions[name].params} and len(members[lane]) > 1:
                each = ", ".join(members[lane])
                raise self._error(f"local: action {name} happens on {lane!r}, a lane per value ({each}): name the one "
                                  f"by a parameter of {name}")
        drawn = set(self.local) | {a for m in self.messages for a in (*m.senders(), *m.receivers())}
        for name in actions:
            if name not in drawn:
                raise self._error(f"action {name} has no lane: add \"{name}\": LANE to local=, or name it in a "
                                  "Message's sent_by= or received_by=")

    def _ends(self, actions: Mapping[str, Any], members: dict[str, list[str]], name: str, what: str,
              *ends: str) -> None:
        if name not in actions:
            near = difflib.get_close_matches(name, sorted(actions), n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise self._error(f"{what} names action {name!r}, which the model does not declare{hint}: name one of its "
                              "actions")
        action = actions[name]
        params = {p.name: p for p in action.params}
        lanes = [m for names in members.values() for m in names]
        for end in ends:
            if end in params:
                p = params[end]
                wrong = [p.show(v) for v in p.values if v >= 0 and p.show(v) not in lanes]
                if wrong:
                    raise self._error(f"{what}: action {name}'s parameter {end} names {wrong[0]}, not a lane "
                                      f"({', '.join(lanes)}): name a lane by a parameter that ranges over lanes")
            elif end not in members:
                raise self._error(f"{what}: {end!r} is neither a parameter of action {name} "
                                  f"({', '.join(params) or 'none'}) nor a lane ({', '.join(members)}): name one of them")

    def _error(self, text: str) -> DeclarationError:
        return DeclarationError(f"{self.at}: lanes: {text}")
