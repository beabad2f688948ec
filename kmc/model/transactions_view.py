"""The transactions model's vocabulary (transaction states, log entry kinds, producer phases)
and how its states read in traces: names and `describe`."""

from __future__ import annotations

from typing import Any

from kmc.model.core import NONE, Domain, State

# coordinator transaction states (TransactionState in Kafka)
EMPTY, ONGOING, PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT = range(6)
STATE_NAMES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort")

# log entries: a data record, or a control record (transaction marker)
DATA, COMMIT, ABORT = 0, 1, 2

# producer instance phases
UNINITIALISED, READY, IN_TRANSACTION, FENCED = range(4)
PHASE_NAMES = ("uninitialised", "ready", "in transaction", "fenced")

# the producer's view of its write to a partition in the current transaction
UNSENT, AWAITING, ACKED, GAVE_UP = range(4)
WRITE_NAMES = ("-", "awaiting", "acked", "gave up")

# EndTxn's decision, as its `committed` flag: 0 abort, 1 commit
DECISION_NAMES = ("abort", "commit")


def producer_name(i: int) -> str:
    return f"p{i + 1}"


def partition_name(p: int) -> str:
    return f"out-{p}"


def txn_name(t: int) -> str:
    return "-" if t == NONE else f"T{t + 1}"


# action parameters: the producer instances, the output partitions, EndTxn's decision
PRODUCER = Domain(lambda m: m.I, producer_name)
PARTITION = Domain(lambda m: m.P, partition_name)
DECISION = Domain(lambda m: (1, 0), lambda c: "commit" if c else "abort")



def describe(m: Any, state: State) -> dict[str, str]:
    """The transactions model's state, field by field, for traces."""
    v = m.schema.view(state)
    out: dict[str, str] = {}
    for i in m.I:
        n = producer_name(i)
        epoch = "-" if v.epoch[i] == NONE else str(v.epoch[i])
        out[n] = f"{PHASE_NAMES[v.phase[i]]}, epoch {epoch}"
        if v.phase[i] == IN_TRANSACTION:
            out[f"{n}.txn"] = f"{txn_name(v.txn[i])} on input {v.input[i]}" + (" (abortable)" if v.abortable[i] else "")
            if m.end_txn_in_flight and v.unanswered[i] != NONE:
                out[f"{n}.txn"] += f", {DECISION_NAMES[v.unanswered[i]]} timed out"
            for p in m.P:
                if v.added[i][p]:
                    out[f"{n}.{partition_name(p)}"] = f"added, write {WRITE_NAMES[v.write[i][p]]}"
            if v.offsets_sent[i]:
                out[f"{n}.offsets"] = "sent"
        for p in m.P:
            if v.request[i][p]:
                out[f"network {n}->{partition_name(p)}"] = (
                    f"produce(epoch {v.request_epoch[i][p]}, seq {v.request_seq[i][p]}, "
                    f"{txn_name(v.request_txn[i][p])}, input {v.request_input[i][p]})")
        if m.end_txn_in_flight and v.end_req[i] != NONE:
            out[f"network {n}->coordinator"] = (
                f"EndTxn({DECISION_NAMES[v.end_req[i]]}, epoch {v.end_req_epoch[i]}, {txn_name(v.end_req_txn[i])})")
    parts = [partition_name(p) for p in m.P if v.co_parts[p]] + (["offsets"] if v.co_group else [])
    epoch = "-" if v.co_epoch == NONE else str(v.co_epoch)
    out["coordinator"] = f"{STATE_NAMES[v.co_state]} {txn_name(v.co_txn)}, epoch {epoch}, partitions {{{','.join(parts)}}}"
    marked = [partition_name(p) for p in m.P if v.marked[p]] + (["offsets"] if v.marked_group else [])
    if marked:
        out["coordinator.markers sent"] = "{" + ",".join(marked) + "}"
    for p in m.P:
        entries = []
        for o in range(v.log_end[p]):
            t = txn_name(v.log_txn[p][o])
            if v.log_kind[p][o] == DATA:
                entries.append(f"in{v.log_input[p][o]}@e{v.log_epoch[p][o]}/{t}")
            else:
                entries.append(f"{'COMMIT' if v.log_kind[p][o] == COMMIT else 'ABORT'}@e{v.log_epoch[p][o]}/{t}")
        out[f"{partition_name(p)}.log"] = "[" + " ".join(entries) + "]"
        read = [f"in{v.log_input[p][o]}@{o}" for o in range(v.read_pos[p]) if v.returned[p][o]]
        out[f"{partition_name(p)}.read_committed"] = f"position {v.read_pos[p]}, returned [{' '.join(read)}]"
    pending = "" if v.pending_offset == NONE else f", pending {v.pending_offset}"
    out["group.offset"] = f"{v.group_offset}{pending}"
    out["coordinator failovers"] = str(v.failovers)
    if m.end_txn_in_flight:
        told = [f"{txn_name(t)} {'committed' if v.told[t] else 'aborted'}" for t in range(m.T) if v.told[t] != NONE]
        out["producer was told"] = ", ".join(told) or "-"
    return out
