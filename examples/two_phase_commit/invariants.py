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

from typing import Any

from kmc.invariants.common import type_ok
from kmc.model.core import Invariant
from model import ABORTED, COMMITTED, TwoPhaseCommit


def consistency(m: TwoPhaseCommit) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        return X.all([
            X.not_(X.and_(s.rm_state[r1] == ABORTED, s.rm_state[r2] == COMMITTED))
            for r1 in m.RM for r2 in m.RM
        ])

    return Invariant("consistency", holds, "TCConsistent: no RM has committed while another has aborted")


def prepared_never_aborts(m: TwoPhaseCommit) -> Invariant:
    def holds(s: Any, X: Any) -> Any:
        # an RM's Prepared message stays in msgs forever: it records that the RM prepared
        return X.all([X.implies(s.msg_prepared[r] == 1, s.rm_state[r] != ABORTED) for r in m.RM])

    return Invariant(
        "prepared-never-aborts", holds,
        "an RM that prepared never aborts (false: the TM may abort after an RM voted to commit)",
    )


def invariants(m: TwoPhaseCommit) -> list[Invariant]:
    return [type_ok(m.schema), consistency(m), prepared_never_aborts(m)]
