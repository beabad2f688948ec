"""How a state of the `kraft` model prints in traces: the specification's variables, in its terms."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from kmc.model.core import NONE, State
from kmc.model.kraft_state import (
    ERROR, FETCH_REQUEST, FETCH_RESPONSE, ROLE, STATUS, UNFENCED, broker_name,
)

if TYPE_CHECKING:
    from kmc.model.kraft_state import KraftState

VALUES = "ABCDEFGH"


def describe_state(m: KraftState, state: State) -> dict[str, str]:
    v = m.schema.view(state)

    def brokers(flags: Sequence[int]) -> str:
        return "{" + ",".join(broker_name(b) for b in m.B if flags[b]) + "}"

    def opt(x: int) -> str:
        return "Nil" if x == NONE else str(x)

    def log(epochs: Sequence[int], values: Sequence[int], length: int) -> str:
        return "[" + " ".join(f"{VALUES[values[o]]}@e{epochs[o]}" for o in range(length)) + "]"

    con = f"leader {broker_name(v.con_leader)}, epoch {v.con_leader_epoch}, partition epoch {v.con_partition_epoch}, " \
          f"isr {brokers(v.con_isr)}"
    if m.kip966:
        con += f", elr {brokers(v.con_elr)}, last-known elr {brokers(v.con_last_known_elr)}"
    out: dict[str, str] = {"controller": con, "metadata log": f"{v.md_len} records"}
    for b in m.B:
        name = broker_name(b)
        fenced = "unfenced" if v.reg_status[b] == UNFENCED else "fenced"
        out[f"{name}.broker"] = f"{STATUS[v.status[b]]}, epoch {v.broker_epoch[b]}, controller: {fenced} " \
                                f"epoch {v.reg_epoch[b]}, metadata {v.md_applied[b]}/{v.md_len}"
        out[f"{name}.replica"] = f"{ROLE[v.role[b]]}, leader {broker_name(v.pm_leader[b])} epoch " \
                                 f"{v.pm_leader_epoch[b]}, partition epoch {v.pm_partition_epoch[b]}, isr " \
                                 f"{brokers(v.pm_isr[b])}, maximal isr {brokers(v.pm_maximal_isr[b])}"
        out[f"{name}.log"] = f"{log(v.log_epoch[b], v.log_value[b], v.leo[b] - 1)} hwm {v.hwm[b]}"
        for l in m.B:
            if v.fetch_offset[b][l] != NONE or v.fetch_pending[b][l]:
                out[f"{name}.fetcher[{broker_name(l)}]"] = (
                    f"offset {opt(v.fetch_offset[b][l])}, last epoch {v.fetch_last_epoch[b][l]}"
                    + (", pending" if v.fetch_pending[b][l] else "") + (", delayed" if v.fetch_delayed[b][l] else ""))
            if v.rs_leo[b][l] != NONE:
                out[f"{name}.follower[{broker_name(l)}]"] = f"leo {v.rs_leo[b][l]}"
            if v.fm[b][l] == FETCH_REQUEST:
                out[f"msg Fetch {name}->{broker_name(l)}"] = (
                    f"epoch {v.fm_leader_epoch[b][l]}, offset {v.fm_fetch_offset[b][l]}, last epoch "
                    f"{v.fm_last_epoch[b][l]}")
            elif v.fm[b][l] == FETCH_RESPONSE:
                record = "" if v.fm_record_epoch[b][l] == NONE else \
                    f", {VALUES[v.fm_record_value[b][l]]}@e{v.fm_record_epoch[b][l]}"
                div = "" if v.fm_diverging_epoch[b][l] == NONE else \
                    f", diverging {v.fm_diverging_epoch[b][l]}@{v.fm_diverging_offset[b][l]}"
                out[f"msg FetchResponse {broker_name(l)}->{name}"] = (
                    f"{ERROR[v.fm_error[b][l]]}, epoch {v.fm_leader_epoch[b][l]}, offset {v.fm_fetch_offset[b][l]}, "
                    f"hwm {v.fm_hwm[b][l]}{div}{record}")
        if v.ap_epoch[b]:
            out[f"{name}.pending AlterPartition"] = f"isr {brokers(v.ap_isr[b])}, epoch {v.ap_epoch[b]}"
        for p in m.epochs:
            if v.apq[b][p]:
                out[f"msg AlterPartition {name} pe {p}"] = f"isr {brokers(v.apq_isr[b][p])}"
            if v.aps[b][p]:
                out[f"msg AlterPartitionResponse {name} pe {p}"] = \
                    f"{ERROR[v.aps_error[b][p]]}, isr {brokers(v.aps_isr[b][p])}"
    for i, inc in enumerate(m.incarnations):
        if v.reg_request[i] != NONE:
            out[f"msg RegisterBroker #{inc}"] = broker_name(v.reg_request[i])
        if v.reg_response[i] != NONE:
            out[f"msg RegisterBrokerResponse #{inc}"] = f"{broker_name(v.reg_response[i])} epoch {v.reg_response_epoch[i]}"

    def values(flags: Sequence[int]) -> str:
        return "{" + ",".join(VALUES[x] for x in m.V if flags[x]) + "}"

    out["written"] = values(v.sent)
    out["acked"] = f"{values(v.pos_acked)} (failed {values(v.neg_acked)})"
    out["true hwm"] = str(v.true_hwm)
    return out
