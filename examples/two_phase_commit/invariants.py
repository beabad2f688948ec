"""What must hold of the two-phase-commit model, and one thing that does not.

- type-ok:     TPTypeOK; every field within its range
- consistency: TCConsistent (module TCommit); no RM has committed while another has aborted
- prepared-never-aborts: a tempting belief that is false. An RM that prepared has voted to
  commit and can no longer abort on its own, yet the TM may still abort the transaction and
  tell it to, even one that prepared after the TM had already aborted (the Abort message is
  simply still on its way). Shortest counterexample, 3 steps, as breadth-first search finds it:
  tm_abort(), rm_prepare(rm=r1), rm_rcv_abort_msg(rm=r1). A Prepared vote is a promise, not a
  decision; only the TM decides.
"""

from __future__ import annotations

from kmc.invariants.common import type_ok
from kmc.invariants.pairing import for_model
from kmc.model.core import Backend, Bool, Invariant, StateView, invariant
from model import ABORTED, COMMITTED, TwoPhaseCommit


@invariant("consistency")
def consistency(m: TwoPhaseCommit, s: StateView, X: Backend) -> Bool:
    """TCConsistent: no RM has committed while another has aborted"""
    # the specification's \A rm1, rm2 : ~(aborted(rm1) /\ committed(rm2)), read as "not both
    # some RM aborted and some RM committed": N comparisons a state instead of N * N
    return X.not_(X.and_(X.exists(m.RM, lambda r: s.rm_state[r] == ABORTED),
                         X.exists(m.RM, lambda r: s.rm_state[r] == COMMITTED)))


@invariant("prepared-never-aborts")
def prepared_never_aborts(m: TwoPhaseCommit, s: StateView, X: Backend) -> Bool:
    """an RM that prepared never aborts (false: the TM may abort after an RM voted to commit)"""
    # an RM's Prepared message stays in msgs forever: it records that the RM prepared
    return X.forall(m.RM, lambda r: X.implies(s.msg_prepared[r] == 1, s.rm_state[r] != ABORTED))


@for_model(TwoPhaseCommit)
def invariants(m: TwoPhaseCommit) -> list[Invariant]:
    return [type_ok(m.schema), consistency(m), prepared_never_aborts(m)]
