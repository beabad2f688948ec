"""How a state of the `quorum` model prints in traces: the specification's variables, in its terms."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from kmc.model.core import NONE, State
from kmc.model.quorum_state import COMMAND, CONFIG_COMMANDS, ENTRY, ERROR, KINDS, RESULT, ROLE, STATE, holds_server, server_name

if TYPE_CHECKING:
    from kmc.model.quorum_state import QuorumState


def describe_state(m: QuorumState, state: State) -> dict[str, str]:
    v = m.schema.view(state)

    def servers(flags: Sequence[int]) -> str:
        return "{" + ",".join(server_name(t) for t in m.S if flags[t]) + "}"

    def values(flags: Sequence[int]) -> str:
        return "{" + ",".join(f"v{x + 1}" for x in m.V if flags[x]) + "}"

    def entry(cmd: int, epoch: int, value: int, cfg_id: int, members: int, server: int) -> str:
        if cmd in CONFIG_COMMANDS:
            detail = f":id{cfg_id}{servers([members >> t & 1 for t in m.S])}"
            return f"{COMMAND[cmd]}@e{epoch}{detail}"
        return f"{COMMAND[cmd]}@e{epoch}" + (f":v{value + 1}" if cmd == 2 else "")

    out: dict[str, str] = {}
    for a in m.S:
        name = server_name(a)
        if a >= v.started:
            out[f"{name}"] = "not started"
            continue
        out[f"{name}"] = (f"{STATE[v.state[a]]} {ROLE[v.role[a]]} on h{v.host[a] + 1}, epoch {v.epoch[a]}, leader "
                          f"{server_name(v.leader[a])}, voted for {server_name(v.voted_for[a])}, votes "
                          f"{servers(v.votes_recv[a])}")
        out[f"{name}.config"] = (f"id {v.cfg_id[a]} members {servers(v.cfg_members[a])}"
                                 + (" committed" if v.cfg_committed[a] else ""))
        log = " ".join(entry(*[getattr(v, "log_" + part)[a][o] for part in ENTRY]) for o in range(v.log_len[a]))
        out[f"{name}.log"] = f"[{log}] hwm {v.hwm[a]}"
        if v.pf[a]:
            out[f"{name}.pending fetch"] = (f"to {server_name(v.pf_dest[a])} epoch {v.pf_epoch[a]} offset "
                                            f"{v.pf_offset[a]} last epoch {v.pf_last_epoch[a]}")
        if v.lfr[a]:
            out[f"{name}.last fetch"] = f"from {server_name(v.lfr_peer[a])} {ERROR[v.lfr_error[a]]}"
        ends = [f"{server_name(t)}:{v.feo[a][t]}" for t in m.S if v.feo[a][t] != NONE]
        out[f"{name}.follower end offsets"] = "{" + ",".join(ends) + "}"
        if any(v.pending_ack[a]):
            out[f"{name}.pending ack"] = values(v.pending_ack[a])
    for src in m.S:
        for dst in m.S:
            for kind in KINDS:
                for k in range(m.capacity[kind.name]):
                    slot = [getattr(v, f)[src][dst][k] for f in kind.fields]
                    if slot[0]:
                        label = f"msg {kind.name} {server_name(src)}->{server_name(dst)} #{k}"
                        out[label] = _message(kind.name, kind.fields, slot)
    cut = [f"{server_name(a)}-{server_name(b)}" for i, (a, b) in enumerate(m.pairs) if not v.connected[i]]
    if cut:
        out["disconnected"] = ", ".join(cut)
    out["written"] = values(v.sent)
    out["acked"] = f"{values(v.pos_acked)} (failed {values(v.neg_acked)})"
    return out


def _message(kind: str, fields: Sequence[str], slot: Sequence[int]) -> str:
    named = dict(zip(fields, slot))
    if kind == "fs":
        return (f"{RESULT[slot[0]]} {ERROR[named['fs_error']]} epoch {named['fs_epoch']} leader "
                f"{server_name(named['fs_leader'])} hwm {named['fs_hwm']}"
                + (f" diverging {named['fs_div_epoch']}@{named['fs_div_end']}" if slot[0] == 2 else "")
                + (f" entry {COMMAND[named['fs_entry_cmd']]}@e{named['fs_entry_epoch']}" if named['fs_entry_cmd']
                   else "")
                + f" (for fetch epoch {named['fs_corr_epoch']} offset {named['fs_corr_offset']})")
    if kind == "bqe":  # resend: FALSE (or kip853's, without the field), TRUE, or kip996's AddVoter's, without it
        return f"epoch={named['bqe_epoch']}" + ("", " resend", " (no resend field)")[named["bqe_resend"]]
    return " ".join(f"{f.split('_', 1)[1]}={server_name(x) if holds_server(f) else x}"
                    for f, x in zip(fields[1:], slot[1:]))
