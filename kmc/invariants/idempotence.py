"""What must hold of the `idempotence` model (PROTOCOL.md section 3)."""

from __future__ import annotations

from typing import Any

from kmc.invariants.common import type_ok
from kmc.model.core import Invariant
from kmc.model.idempotence import ACKED, UNSENT, Idempotence


def no_duplicates(m: Idempotence) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.and_(*[
            X.implies(X.and_(o2 < s.log_end, s.log[o1] == b), s.log[o2] != b)
            for b in m.B for o1 in m.offsets for o2 in m.offsets if o1 < o2
        ])

    return Invariant("no-duplicates", holds, "no batch is written to the log twice")


def in_order(m: Idempotence) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        # a later batch b at o1 and an earlier batch a at o2 > o1: a must also be before o1
        return X.and_(*[
            X.implies(
                X.and_(o2 < s.log_end, s.log[o1] == b, s.log[o2] == a),
                X.or_(*[s.log[o0] == a for o0 in m.offsets if o0 < o1]),
            )
            for a in m.B for b in m.B if a < b for o1 in m.offsets for o2 in m.offsets if o1 < o2
        ])

    return Invariant(
        "in-order", holds,
        "batches are first written in the order the producer sent them: no batch before an earlier one",
    )


def no_loss_of_acked(m: Idempotence) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.and_(*[
            X.implies(s.batch[b] == ACKED, X.or_(*[X.and_(o < s.log_end, s.log[o] == b) for o in m.offsets]))
            for b in m.B
        ])

    return Invariant("no-loss-of-acked", holds, "every batch the producer saw acknowledged is in the log")


def invariants(m: Idempotence) -> list[Invariant]:
    return [no_duplicates(m), in_order(m), no_loss_of_acked(m), type_ok(m.schema)]


def lemmas(m: Idempotence) -> list[Invariant]:
    """Proof aids for `kmc prove` (not checked by `kmc check`): the first two bound the requests
    in the network, which k-induction otherwise lets grow past the field's range from an
    unreachable state; the third is what makes idempotence work, and implies no-duplicates and
    in-order (it is false without idempotence)."""
    unsent_not_sent = Invariant(
        "unsent-not-sent",
        lambda s, X: X.and_(*[X.implies(s.batch[b] == UNSENT, s.requests[b] == 0) for b in m.B]),
        "a batch the producer has not sent has no produce request in the network",
    )
    requests_bounded = Invariant(
        "requests-from-sends-and-retries",
        lambda s, X: X.and_(*[s.requests[b] <= (s.batch[b] != UNSENT) + s.retries_used for b in m.B]),
        "a batch's requests in the network are at most its first send plus the retries used so far",
    )
    log_in_sequence = Invariant(
        "log-in-sequence",
        lambda s, X: X.and_(s.last_seq == s.log_end - 1, *[X.implies(o < s.log_end, s.log[o] == o) for o in m.offsets]),
        "(idempotence mode only) the log holds b0, b1, ... in order, one each, and the leader's last "
        "sequence is the last of them: the leader appends only the next sequence number",
    )
    return [unsent_not_sent, requests_bounded, log_in_sequence]
