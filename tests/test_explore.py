"""`kmc explore`: the JSON endpoints driven in-process (the server on a free port in a thread,
asked with urllib), the command's bad input, and Ctrl-C.

Numbers come from the TLA+ specifications or from a second computation here: two-phase
commit's Init is one state with seven enabled actions (TMAbort, RMPrepare and
RMChooseToAbort for each of 3 RMs: TwoPhase.tla), its prepared-never-aborts violation takes 3
steps (TMAbort, RMPrepare, RMRcvAbortMsg); kraft's last replica standing takes 7 steps, TLC's
length (docs/kraft.md); successors and failing invariants are recomputed with ScalarModel."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kmc
from kmc import registry
from kmc.cli.explore import explorer
from kmc.cli.trace import load_trace
from kmc.explore.server import Explorer
from kmc.semantics.scalar import ScalarModel
from kmc.traces import itf
from tests.conftest import terminal_signals

ROOT = Path(__file__).resolve().parents[1]
TPC = str(ROOT / "examples" / "two_phase_commit" / "model.py")
LRS = {"min_insync_replicas": 2, "fence_broker_limit": 1, "unclean_shutdown_limit": 1}
LRS_FLAGS = ["--min-insync-replicas", "2", "--fence-broker-limit", "1", "--unclean-shutdown-limit", "1"]


class Client:
    def __init__(self, server: Explorer):
        self.url = server.url

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=30) as answer:
            return json.loads(answer.read())

    def post(self, path: str, body: Any = None, status: int = 200, raw: bytes | None = None,
             headers: dict[str, str] | None = None) -> Any:
        data = raw if raw is not None else json.dumps(body or {}).encode()
        request = urllib.request.Request(self.url + path, data=data, method="POST",
                                         headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                got, text = answer.status, answer.read()
        except urllib.error.HTTPError as e:
            got, text = e.code, e.read()
        assert got == status, text
        return json.loads(text)

    def choose(self, label: str) -> Any:
        """Take the enabled action with this label, as the page's button does."""
        view = self.get("api/view")
        ids = [c["instance"] for c in view["choices"] if c["label"] == label]
        assert ids, (label, [c["label"] for c in view["choices"]])
        return self.post("api/choose", {"instance": ids[0]})


def serving(server: Explorer) -> Iterator[Client]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Client(server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture
def tpc() -> Iterator[Client]:
    yield from serving(explorer(TPC, port=0))


@pytest.fixture(scope="module")
def lrs_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kraft's last-replica-standing counterexample, as `kmc check ... --itf-dir` writes it."""
    model, invariants = registry.build("kraft", **LRS)
    result = kmc.check(model, registry.select(invariants, ["leader-completeness"]))
    trace = result.invariants["leader-completeness"].trace
    assert trace is not None
    path = tmp_path_factory.mktemp("lrs") / "kraft-v3.5-leader-completeness.itf.json"
    path.write_text(itf.dumps(trace))
    return path


def test_initial_states_then_the_enabled_actions(tpc: Client) -> None:
    view = tpc.get("api/view")
    assert view["title"] == "two-phase-commit --mode=tla --rms=3"
    assert view["cursor"] == -1 and view["state"] is None and view["path"] == []
    assert [c["label"] for c in view["choices"]] == ["initial state 0"]  # TwoPhase.tla's Init: one state
    view = tpc.post("api/init", {"index": 0})
    assert view["cursor"] == 0 and [s["label"] for s in view["path"]] == ["init"]
    model, _ = registry.build(TPC)
    sm = ScalarModel(model)
    expected = [model.instances()[i].label for i, _ in sm.successors(model.initial_states()[0])]
    assert [c["label"] for c in view["choices"]] == expected and len(expected) == 7
    abort = next(c for c in view["choices"] if c["action"] == "tm_abort")
    assert abort["changes"] == [{"key": "tm", "old": "init", "new": "aborted"},
                                {"key": "msgs", "old": "{}", "new": "{Abort}"}]
    prepare = next(c for c in view["choices"] if c["label"] == "rm_prepare(rm=r2)")
    assert prepare["params"] == {"rm": "r2"}
    assert view["state"]["fails"] == []
    assert {f["key"] for f in view["state"]["fields"]} == set(model.describe(model.initial_states()[0]))


def test_invariants_back_forward_and_another_branch(tpc: Client) -> None:
    tpc.post("api/init", {"index": 0})
    tpc.choose("tm_abort()")
    view = tpc.choose("rm_prepare(rm=r1)")
    receive = next(c for c in view["choices"] if c["label"] == "rm_rcv_abort_msg(rm=r1)")
    assert receive["fails"] == ["prepared-never-aborts"]  # shown before it is taken
    view = tpc.choose("rm_rcv_abort_msg(rm=r1)")
    assert view["cursor"] == 3 and view["state"]["fails"] == ["prepared-never-aborts"]
    assert [s["fails"] for s in view["path"]] == [[], [], [], ["prepared-never-aborts"]]
    changed = [f["key"] for f in view["state"]["fields"] if f["changed"]]
    assert changed == ["r1"]
    view = tpc.post("api/back")
    assert view["cursor"] == 2 and len(view["path"]) == 4 and view["state"]["fails"] == []
    assert [c["ahead"] for c in view["choices"] if c["label"] == "rm_rcv_abort_msg(rm=r1)"] == [True]
    view = tpc.post("api/forward")
    assert view["cursor"] == 3
    view = tpc.post("api/goto", {"index": 1})
    assert view["cursor"] == 1 and len(view["path"]) == 4  # looking back keeps the path
    view = tpc.choose("rm_prepare(rm=r1)")  # the step ahead: the path is kept
    assert view["cursor"] == 2 and len(view["path"]) == 4
    tpc.post("api/back")
    view = tpc.choose("rm_choose_to_abort(rm=r2)")  # another step: the rest of the path goes
    assert [s["label"] for s in view["path"]] == ["init", "tm_abort()", "rm_choose_to_abort(rm=r2)"]
    assert tpc.post("api/goto", {"index": -1})["cursor"] == -1


def test_search_the_reached_states_and_jump(tpc: Client) -> None:
    view = tpc.post("api/init", {"index": 0})
    assert view["reached"] == 1 + 7  # the initial state and its successors on the page
    found = tpc.post("api/search", {"query": "rm_state[1] == 1 and msg_prepared[1] = 1"})
    assert found["total"] == 1 and found["reached"] == 8
    assert found["matches"][0]["steps"] == 1 and found["matches"][0]["last"] == "rm_prepare(rm=r2)"
    found = tpc.post("api/search", {"query": "tm_state >= 0"})
    assert found["total"] == 8
    view = tpc.post("api/jump", {"match": tpc.post("api/search", {"query": "rm_state[2] == 3"})["matches"][0]["match"]})
    assert [s["label"] for s in view["path"]] == ["init", "rm_choose_to_abort(rm=r3)"] and view["cursor"] == 1


@pytest.mark.parametrize("query,message", [
    ("rm_stat[0] == 1", "no field 'rm_stat[0]'; did you mean rm_state[0]"),
    ("rm_state[0] ~ 1", "cannot read 'rm_state[0] ~ 1'"),
    ("__import__('os').system('x')", "cannot read"),
    ("", "an empty search"),
])
def test_a_search_is_parsed_never_evaluated(tpc: Client, query: str, message: str) -> None:
    error = tpc.post("api/search", {"query": query}, status=400)["error"]
    assert message in error and "\n" not in error


def test_bad_requests_are_refused_and_change_nothing(tpc: Client) -> None:
    tpc.post("api/init", {"index": 0})
    assert "is not enabled" in tpc.post("api/choose", {"instance": 16}, status=400)["error"]  # rm_rcv_abort_msg(r3)
    assert "no action instance 99" in tpc.post("api/choose", {"instance": 99}, status=400)["error"]
    assert "must be an integer" in tpc.post("api/choose", {"instance": "0"}, status=400)["error"]
    assert "no initial state 1" in tpc.post("api/init", {"index": 1}, status=400)["error"]
    assert "not JSON" in tpc.post("api/back", raw=b"{", status=400)["error"]
    assert "kmc explore answers only" in tpc.post("api/back", headers={"Origin": "http://example.com"}, status=403)["error"]
    assert "no file to save to" in tpc.post("api/save", status=400)["error"]
    assert tpc.get("api/view")["cursor"] == 0


def test_another_host_name_is_refused(tpc: Client) -> None:
    request = urllib.request.Request(tpc.url + "api/view", headers={"Host": "attacker.example:80"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(request, timeout=30)
    assert e.value.code == 403


def test_a_kraft_counterexample_loaded_then_continued_and_saved(lrs_file: Path, tmp_path: Path, run_kmc) -> None:
    saved = tmp_path / "walk.itf.json"
    for client in serving(explorer("kraft", port=0, save=saved, **LRS)):
        view = client.post("api/load", {"name": lrs_file.name, "text": lrs_file.read_text()})
        assert len(view["path"]) == 8 and view["cursor"] == 0 and view["loaded"] == lrs_file.name  # 7 steps: TLC's
        assert view["path"][7]["fails"][0] == "leader-completeness"
        labels = [s["label"] for s in view["path"]]
        assert labels[2] == "fence_broker(broker=b2, leader=none)" and labels[4].startswith("unclean_shutdown(broker=b1")
        view = client.post("api/goto", {"index": 7})
        assert "leader-completeness" in view["state"]["fails"]
        view = client.post("api/goto", {"index": 3})
        ahead = [c["label"] for c in view["choices"] if c["ahead"]]
        assert ahead == [labels[4]]
        other = next(c for c in view["choices"] if not c["ahead"])
        view = client.post("api/choose", {"instance": other["instance"]})  # continue another way from step 3
        assert [s["label"] for s in view["path"]] == [*labels[:4], other["label"]] and view["cursor"] == 4
        client.post("api/goto", {"index": 2})
        view = client.choose(labels[3])
        view = client.choose(labels[4])
        assert len(view["path"]) == 5
        assert client.post("api/save") == {"saved": str(saved)}
        with urllib.request.urlopen(client.url + "api/walk.itf.json", timeout=30) as answer:
            assert answer.headers["Content-Disposition"] == 'attachment; filename="kraft-walk.itf.json"'
            assert answer.read().decode() == saved.read_text()
    played, _ = load_trace(saved, "kraft")  # kmc trace's reader: rebuilt, replayed, its claim checked
    assert [s.instance.label if s.instance else "init" for s in played.steps] == labels[:5]
    assert played.invariant is None  # step 4 violates nothing yet
    rc, out, _ = run_kmc("trace", str(saved))
    assert rc == 0 and f"Step 4: {labels[4]}" in out


def test_a_saved_violation_claims_its_invariant(tmp_path: Path, run_kmc) -> None:
    saved = tmp_path / "tpc.itf.json"
    for client in serving(explorer(TPC, port=0, save=saved)):
        client.post("api/init", {"index": 0})
        for label in ("tm_abort()", "rm_prepare(rm=r1)", "rm_rcv_abort_msg(rm=r1)"):
            client.choose(label)
        client.post("api/save")
    rc, out, _ = run_kmc("trace", str(saved), "--model", TPC)
    assert rc == 0 and out.startswith("Invariant prepared-never-aborts is violated")
    assert "Counterexample (3 steps)" in out


@pytest.mark.parametrize("text,message", [
    ("{not json", "not JSON"),
    ('{"#meta": {}, "states": []}', "states must be a non-empty list of states"),
    ('{"#meta": {}, "states": [{}]}', "not an ITF trace written by kmc"),
])
def test_a_malformed_trace_is_refused(text: str, message: str) -> None:
    for client in serving(explorer("kraft", port=0, **LRS)):
        error = client.post("api/load", {"name": "bad.itf.json", "text": text}, status=400)["error"]
        assert error.startswith("bad.itf.json: ") and message in error
        assert client.get("api/view")["path"] == []


def test_a_trace_of_other_options_is_refused(lrs_file: Path) -> None:
    for client in serving(explorer("kraft", port=0)):
        error = client.post("api/load", {"name": lrs_file.name, "text": lrs_file.read_text()}, status=400)["error"]
        assert "the trace is of kraft --mode=v3.5" in error and "start kmc explore with the trace's options" in error


def test_a_tampered_trace_does_not_replay(lrs_file: Path) -> None:
    data = json.loads(lrs_file.read_text())
    data["states"][3]["hwm"] = [0, 0]
    for client in serving(explorer("kraft", port=0, **LRS)):
        error = client.post("api/load", {"name": "t.itf.json", "text": json.dumps(data)}, status=400)["error"]
        assert "does not replay through its model" in error


def test_the_page_is_one_self_contained_file(tpc: Client) -> None:
    with urllib.request.urlopen(tpc.url, timeout=30) as answer:
        html = answer.read().decode()
    assert answer.headers["Content-Type"] == "text/html; charset=utf-8"
    assert "<script>" in html and "src=" not in html and "http" not in html.replace("http-equiv", "")


def _busy_port() -> socket.socket:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s


def test_bad_input_is_one_line(run_kmc, lrs_file: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.itf.json"
    bad.write_text("{not json")
    with _busy_port() as busy:
        port = busy.getsockname()[1]
        cases = [
            (["explore", "kraft", "--nope"], "No such option '--nope'"),
            (["explore", "kraft", "--port", str(port)], f"--port {port}: cannot listen on 127.0.0.1:{port}"),
            (["explore", "kraft", "--port", "70000"], "'--port'"),
            (["explore", "kraft", "--trace", str(bad)], f"{bad}: not JSON"),
            (["explore", "kraft", "--trace", str(lrs_file)], f"{lrs_file}: the trace is of kraft"),
            (["explore", "kraft", "--save", str(tmp_path)], "is a directory"),
            (["explore", "nope"], "unknown model"),
        ]
        for argv, message in cases:
            rc, out, err = run_kmc(*argv)
            assert (rc, out, err.count("\n")) == (2, "", 1), (argv, err)
            assert err.startswith("kmc: error: ") and message in err, (argv, err)


def _explore(more: list[str]) -> subprocess.Popen[str]:
    """`kmc explore` on 2PC, on a free port, with Ctrl-C as a terminal gives it."""
    return subprocess.Popen([sys.executable, "-m", "kmc.cli.main", "explore", TPC, "--port", "0", *more],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=terminal_signals)


def _interrupted(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Ctrl-C to `proc`, then its output; if it does not end in 30 s, the failure says how its
    signals stood (/proc/PID/status: blocked, ignored, caught) and what it was doing."""
    proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        status = Path(f"/proc/{proc.pid}/status")
        lines = [ln for ln in status.read_text().splitlines() if ln.startswith(("State", "Sig", "Shd"))] \
            if status.exists() else []
        parent = (signal.getsignal(signal.SIGINT), signal.pthread_sigmask(signal.SIG_BLOCK, set()))
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"no exit 30 s after SIGINT: {lines}; this process's SIGINT handler and mask "
                             f"{parent}; out {out!r}; err {err!r}") from None


def test_ctrl_c_stops_it_cleanly_and_saves_the_walk(tmp_path: Path) -> None:
    saved = tmp_path / "walk.itf.json"
    proc = _explore(["--save", str(saved)])
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("kmc explore: two-phase-commit --mode=tla --rms=3 at http://127.0.0.1:")
        url = first.split(" at ")[1].split()[0]
        request = urllib.request.Request(url + "api/init", data=b'{"index": 0}', method="POST",
                                         headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=30).read()
        out, err = _interrupted(proc)
    finally:
        proc.kill() if proc.poll() is None else None
    assert proc.returncode == 0, err
    assert out == f"kmc explore: stopped; the walk (0 steps) saved to {saved}\n" and err == ""
    assert json.loads(saved.read_text())["#meta"]["length"] == 0


def test_ctrl_c_right_after_the_url_exits_0() -> None:
    proc = _explore([])
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("kmc explore: two-phase-commit")
    out, err = _interrupted(proc)
    assert (proc.returncode, out, err) == (0, "kmc explore: stopped\n", "")
