"""The `quorum` model's network: connectivity between pairs of servers and the messages in
flight (the specification's network module).

Messages are a set, as in the specification: for each kind and each (source, destination)
pair, `capacity` slots holding the messages in a canonical order (greatest first by their
fields, empty slots last), so that two equal sets are one state.
"""

from __future__ import annotations

from typing import Any, Sequence

from kmc.model.core import NONE, Backend, Bool, Int, StateView
from kmc.model.effects import Flat
from kmc.model.quorum_state import KINDS, Kind, QuorumState, holds_server


class QuorumMessages(QuorumState):
    """Connected(a, b), Send, Discard, and dropping a pair's messages."""

    # -- connectivity -------------------------------------------------------------------

    def pair_index(self, a: int, b: int) -> int:
        return self.pairs.index((min(a, b), max(a, b)))

    def connected(self, s: StateView, a: int, b: int) -> Bool | bool:
        """Connected(a, b)."""
        return True if a == b else s.connected[self.pair_index(a, b)] == 1

    # -- messages: a sorted set of slots per kind and (source, dest) ------------------------

    def slot(self, s: StateView, kind: Kind, src: int, dst: int, k: int) -> list[Int]:
        return [getattr(s, name)[src][dst][k] for name in kind.fields]

    def empty(self, kind: Kind) -> list[int]:
        return [NONE if holds_server(name) else 0 for name in kind.fields]

    def greater(self, X: Backend, a: Sequence[Int], b: Sequence[Int]) -> Bool:
        """a > b, lexicographically over the slot fields."""
        gt: Bool = a[-1] > b[-1]
        for x, y in zip(reversed(a[:-1]), reversed(b[:-1])):
            gt = X.or_(x > y, X.and_(x == y, gt))
        return gt

    def write_slots(self, kind: Kind, src: int, dst: int, slots: Sequence[Sequence[Any]]) -> Flat:
        out: Flat = {}
        for k, values in enumerate(slots):
            for name, value in zip(kind.fields, values):
                out[(name, src, dst, k)] = value
        return out

    def send(self, s: StateView, X: Backend, kind: Kind, src: int, dst: int, msg: Sequence[Int],
             cond: Bool | bool = True) -> Flat:
        """Send(m) (when cond): m joins the set of messages when dst and src are connected."""
        cap = self.capacity[kind.name]
        old = [self.slot(s, kind, src, dst, k) for k in range(cap)]
        dup = X.any([X.all([x == y for x, y in zip(o, msg)]) for o in old])
        gt = [self.greater(X, o, msg) for o in old]
        new = []
        for k in range(cap):
            shifted = msg if k == 0 else [X.ite(gt[k - 1], m, p) for m, p in zip(msg, old[k - 1])]
            new.append([X.ite(gt[k], o, sh) for o, sh in zip(old[k], shifted)])
        go = X.and_(cond, self.connected(s, dst, src), X.not_(dup))
        return self.write_slots(kind, src, dst, [[X.ite(go, x, o) for x, o in zip(nk, ok)]
                                                 for nk, ok in zip(new, old)])

    def discard(self, s: StateView, X: Backend, kind: Kind, src: int, dst: int, k: int) -> Flat:
        """Discard(m) for the message in slot k: the slots after it move up."""
        cap = self.capacity[kind.name]
        old = [self.slot(s, kind, src, dst, j) for j in range(cap)]
        new = old[:k] + old[k + 1:] + [self.empty(kind)]
        return self.write_slots(kind, src, dst, new)

    def drop_pair(self, s: StateView, X: Backend, a: int, b: int, cond: Bool | bool = True) -> Flat:
        """Drop every message between a and b (either way) when cond."""
        out: Flat = {}
        for kind in KINDS:
            for src, dst in ((a, b), (b, a)):
                for k in range(self.capacity[kind.name]):
                    for name, blank in zip(kind.fields, self.empty(kind)):
                        out[(name, src, dst, k)] = X.ite(cond, blank, getattr(s, name)[src][dst][k])
        # kip853's Drop: the dropped messages join net_messages_processed (kip996's, and
        # --no-dropped-begin-quorum-epoch-processed: they do not)
        if self.test_liveness and not self.kip996 and self.settings["dropped_begin_quorum_epoch_processed"]:
            for src, dst in ((a, b), (b, a)):
                out[("bqe_gone", src, dst)] = X.ite(X.and_(cond, s.bqe[src][dst][0] == 1), 1, s.bqe_gone[src][dst])
        return out

    def bqe_processed(self, s: StateView, X: Backend, src: int, dst: int) -> Flat:
        """A BeginQuorumEpoch request src -> dst joins net_messages_processed (kip853 with
        --test-liveness: bqe_gone)."""
        return {("bqe_gone", src, dst): 1} if self.test_liveness and not self.kip996 else {}
