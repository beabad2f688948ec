"""Two-phase commit at the level of Lamport's TLA+ specification `TwoPhase`.

A transaction manager (TM) and N resource managers (RMs) decide together whether one
transaction commits or aborts. Each RM works on its part, then either prepares (promises it
can commit, and tells the TM with a Prepared message) or gives up on its own (aborts). The
TM commits once it has heard Prepared from every RM, or aborts at any moment before that;
it broadcasts its decision, and each RM that receives it does what it says.

As in the specification, the network is the set of every message ever sent: a message is
put in once, never removed and never lost, and any process may act on it at any time
(acting twice on it changes nothing). The RMs' Prepare messages from the TM and their Abort
messages to it are left out, as the specification leaves them out: the TM's spontaneous
abort stands for the latter.

This is a kmc model written outside the kmc package, as a user would write one. Its state
counts equal TLC's on the specification for 3 to 8 RMs (tests/reference/tlc-two-phase.md).
"""

from __future__ import annotations

from typing import Sequence

from kmc.model.core import (
    Action, Backend, Bool, Domain, Effect, Field, Lane, Lanes, Message, Model, Option, Schema, State, StateView,
    action,
)

MODES = {
    "tla": "the TwoPhase specification as written (tlaplus/Examples, specifications/transaction_commit)",
}

# an RM's state (the specification's rmState values)
WORKING, PREPARED, COMMITTED, ABORTED = 0, 1, 2, 3
RM_STATES = ("working", "prepared", "committed", "aborted")

# the TM's state (tmState)
INIT, TM_COMMITTED, TM_ABORTED = 0, 1, 2
TM_STATES = ("init", "committed", "aborted")


def rm_name(rm: int) -> str:
    """RMs as the TLC configuration names them: r1, r2, ..."""
    return f"r{rm + 1}"


RM = Domain(lambda m: m.RM, rm_name)  # an action parameter ranging over the resource managers


class TwoPhaseCommit(Model):
    name = "two-phase-commit"
    summary = "Lamport's two-phase commit (TLA+ TwoPhase): one TM, N RMs, messages as a set"
    lanes = Lanes(  # for traces: the TM, then a lane per RM; the decision goes to every RM
        Lane("tm"), Lane("rms", RM),
        local={"rm_choose_to_abort": "rm"},
        messages=[
            Message("Prepared", "rm", "tm", sent_by="rm_prepare", received_by="tm_rcv_prepared"),
            Message("Commit", "tm", "rms", sent_by="tm_commit", received_by="rm_rcv_commit_msg",
                    received_as=("tm", "rm")),
            Message("Abort", "tm", "rms", sent_by="tm_abort", received_by="rm_rcv_abort_msg",
                    received_as=("tm", "rm")),
        ],
    )
    modes = MODES
    options = (
        Option("mode", "tla", "tla: the TwoPhase specification as written", choices=tuple(MODES)),
        Option("rms", 3, "resource managers (the specification's constant RM)", min=1, max=12),
    )

    def _build(self) -> None:
        n = self.settings["rms"]
        self.RM = range(n)
        rm_axis = (0,)  # RMs are interchangeable: renaming them renames the successors
        self.schema = Schema(
            [
                Field("rm_state", lo=WORKING, hi=ABORTED, shape=(n,),
                      doc="rmState[rm]: 0 working, 1 prepared, 2 committed, 3 aborted", replica_axes=rm_axis),
                Field("tm_state", lo=INIT, hi=TM_ABORTED, doc="tmState: 0 init, 1 committed, 2 aborted"),
                Field("tm_prepared", lo=0, hi=1, shape=(n,),
                      doc="rm \\in tmPrepared: the TM has received rm's Prepared message", replica_axes=rm_axis),
                Field("msg_prepared", lo=0, hi=1, shape=(n,),
                      doc="[type |-> \"Prepared\", rm |-> rm] \\in msgs", replica_axes=rm_axis),
                Field("msg_commit", lo=0, hi=1, doc="[type |-> \"Commit\"] \\in msgs"),
                Field("msg_abort", lo=0, hi=1, doc="[type |-> \"Abort\"] \\in msgs"),
            ]
        )

    def initial_states(self) -> list[State]:
        """TPInit: every RM working, the TM in init, nothing received, no message sent."""
        n = len(self.RM)
        return [
            self.schema.state(
                rm_state=[WORKING] * n, tm_state=INIT, tm_prepared=[0] * n,
                msg_prepared=[0] * n, msg_commit=0, msg_abort=0,
            )
        ]

    # -- actions, in the order the specification's TPNext lists them -------------------------

    def actions(self) -> Sequence[Action]:
        return [self.tm_rcv_prepared, self.tm_commit, self.tm_abort, self.rm_prepare,
                self.rm_choose_to_abort, self.rm_rcv_commit_msg, self.rm_rcv_abort_msg]

    @action(rm=RM)
    def tm_rcv_prepared(self, s: StateView, X: Backend, rm: int) -> Bool:
        """TMRcvPrepared(rm): the TM, still undecided, receives rm's Prepared message and
        records that rm has prepared."""
        return X.and_(s.tm_state == INIT, s.msg_prepared[rm] == 1)

    @tm_rcv_prepared.effect
    def _(self, s: StateView, X: Backend, rm: int) -> Effect:
        return {"tm_prepared": {rm: 1}}

    @action()
    def tm_commit(self, s: StateView, X: Backend) -> Bool:
        """TMCommit: the TM, still undecided, has received Prepared from every RM; it decides
        to commit and sends the Commit message."""
        return X.and_(s.tm_state == INIT, X.forall(self.RM, lambda r: s.tm_prepared[r] == 1))

    @tm_commit.effect
    def _(self, s: StateView, X: Backend) -> Effect:
        return {"tm_state": TM_COMMITTED, "msg_commit": 1}

    @action()
    def tm_abort(self, s: StateView, X: Backend) -> Bool:
        """TMAbort: the TM, still undecided, decides on its own to abort (it stands for a
        timeout, or an RM's abort message the specification leaves out) and sends the
        Abort message."""
        return s.tm_state == INIT

    @tm_abort.effect
    def _(self, s: StateView, X: Backend) -> Effect:
        return {"tm_state": TM_ABORTED, "msg_abort": 1}

    @action(rm=RM)
    def rm_prepare(self, s: StateView, X: Backend, rm: int) -> Bool:
        """RMPrepare(rm): a working RM prepares (it can now commit, and gives up aborting on
        its own) and sends its Prepared message to the TM."""
        return s.rm_state[rm] == WORKING

    @rm_prepare.effect
    def _(self, s: StateView, X: Backend, rm: int) -> Effect:
        return {"rm_state": {rm: PREPARED}, "msg_prepared": {rm: 1}}

    @action(rm=RM)
    def rm_choose_to_abort(self, s: StateView, X: Backend, rm: int) -> Bool:
        """RMChooseToAbort(rm): a working RM decides on its own to abort; it sends nothing."""
        return s.rm_state[rm] == WORKING

    @rm_choose_to_abort.effect
    def _(self, s: StateView, X: Backend, rm: int) -> Effect:
        return {"rm_state": {rm: ABORTED}}

    @action(rm=RM)
    def rm_rcv_commit_msg(self, s: StateView, X: Backend, rm: int) -> Bool:
        """RMRcvCommitMsg(rm): rm receives the TM's Commit message and commits."""
        return s.msg_commit == 1

    @rm_rcv_commit_msg.effect
    def _(self, s: StateView, X: Backend, rm: int) -> Effect:
        return {"rm_state": {rm: COMMITTED}}

    @action(rm=RM)
    def rm_rcv_abort_msg(self, s: StateView, X: Backend, rm: int) -> Bool:
        """RMRcvAbortMsg(rm): rm receives the TM's Abort message and aborts."""
        return s.msg_abort == 1

    @rm_rcv_abort_msg.effect
    def _(self, s: StateView, X: Backend, rm: int) -> Effect:
        return {"rm_state": {rm: ABORTED}}

    # -- presentation ----------------------------------------------------------------------

    def describe(self, state: State) -> dict[str, str]:
        v = self.schema.view(state)
        out = {f"{rm_name(r)}": RM_STATES[v.rm_state[r]] for r in self.RM}
        out["tm"] = TM_STATES[v.tm_state]
        out["tm.prepared"] = "{" + ", ".join(rm_name(r) for r in self.RM if v.tm_prepared[r]) + "}"
        sent = [f"Prepared({rm_name(r)})" for r in self.RM if v.msg_prepared[r]]
        sent += ["Commit"] * v.msg_commit + ["Abort"] * v.msg_abort
        out["msgs"] = "{" + ", ".join(sent) + "}"
        return out


# The invariants, beside this file, name this model (@for_model); imported last, as they import it.
import invariants  # noqa: E402,F401
