"""What must hold of the `idempotence` model (PROTOCOL.md section 3)."""

from __future__ import annotations

from kmc.invariants.common import type_ok
from kmc.invariants.pairing import for_model
from kmc.model.core import Backend, Bool, Invariant, StateView, invariant
from kmc.model.idempotence import ACKED, UNSENT, Idempotence


@invariant("no-duplicates")
def no_duplicates(m: Idempotence, s: StateView, X: Backend) -> Bool:
    """no batch is written to the log twice"""
    return X.forall(m.B, lambda b: X.forall(m.offsets, lambda o1: X.forall(m.offsets[o1 + 1:], lambda o2: X.implies(
        X.and_(o2 < s.log_end, s.log[o1] == b), s.log[o2] != b))))


@invariant("in-order")
def in_order(m: Idempotence, s: StateView, X: Backend) -> Bool:
    """batches are first written in the order the producer sent them: no batch before an earlier one"""
    def first_written_in_order(a: int, b: int, o1: int, o2: int) -> Bool:
        # a later batch b at o1 and an earlier batch a at o2 > o1: a must also be before o1
        return X.implies(X.and_(o2 < s.log_end, s.log[o1] == b, s.log[o2] == a),
                         X.exists(m.offsets[:o1], lambda o0: s.log[o0] == a))

    return X.forall(m.B, lambda a: X.forall(m.B[a + 1:], lambda b: X.forall(m.offsets, lambda o1: X.forall(
        m.offsets[o1 + 1:], lambda o2: first_written_in_order(a, b, o1, o2)))))


@invariant("no-loss-of-acked")
def no_loss_of_acked(m: Idempotence, s: StateView, X: Backend) -> Bool:
    """every batch the producer saw acknowledged is in the log"""
    return X.forall(m.B, lambda b: X.implies(
        s.batch[b] == ACKED, X.exists(m.offsets, lambda o: X.and_(o < s.log_end, s.log[o] == b))))


@for_model(Idempotence)
def invariants(m: Idempotence) -> list[Invariant]:
    return [no_duplicates(m), in_order(m), no_loss_of_acked(m), type_ok(m.schema)]


# ---------------------------------------------------------------------------------------
# Lemmas: proof aids for `kmc prove` (not checked by `kmc check`): the first two bound the
# requests in the network, which k-induction otherwise lets grow past the field's range from
# an unreachable state; the third is what makes idempotence work, and implies no-duplicates
# and in-order (it is false without idempotence).
# ---------------------------------------------------------------------------------------


@invariant("unsent-not-sent")
def unsent_not_sent(m: Idempotence, s: StateView, X: Backend) -> Bool:
    """a batch the producer has not sent has no produce request in the network"""
    return X.forall(m.B, lambda b: X.implies(s.batch[b] == UNSENT, s.requests[b] == 0))


@invariant("requests-from-sends-and-retries")
def requests_bounded(m: Idempotence, s: StateView, X: Backend) -> Bool:
    """a batch's requests in the network are at most its first send plus the retries used so far"""
    return X.forall(m.B, lambda b: s.requests[b] <= (s.batch[b] != UNSENT) + s.retries_used)


@invariant("log-in-sequence")
def log_in_sequence(m: Idempotence, s: StateView, X: Backend) -> Bool:
    """(idempotence mode only) the log holds b0, b1, ... in order, one each, and the leader's last
    sequence is the last of them: the leader appends only the next sequence number"""
    return X.and_(s.last_seq == s.log_end - 1, X.forall(m.offsets, lambda o: X.implies(o < s.log_end, s.log[o] == o)))


def lemmas(m: Idempotence) -> list[Invariant]:
    """The proof aids above, for `kmc prove --lemma NAME`."""
    return [unsent_not_sent(m), requests_bounded(m), log_in_sequence(m)]
