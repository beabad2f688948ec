"""Malformed input is one line, exit 2, naming the file and the problem (issue 27, item 5).

Each case is the bytes of an input file (or none) and a command line; the test runs the
command and asserts the exit code and the whole of stderr, one line. On main before this
change every case here was a traceback (exit 1), a silent wrong run (exit 0), or a run that
never ended (`--time-limit nan`).

ITF cases start from a real trace (replication hw, weak-isr violated) and break one thing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from kmc import registry
from kmc.engines.simulation import swarm as simulation
from kmc.api import check
from kmc.traces import itf

NOT_UTF8 = b'model = "replication"\n\xff\xfe = 1\n'
NOT_UTF8_LINE = "{f}:2: not UTF-8 text (byte 0xff at offset 22); save the file as UTF-8"
DEEP_TOML = b"a = " + b"[" * 100_000 + b"]" * 100_000 + b"\n"
SCENARIO = 'model = "fetch"\nsteps = ["produce(r1)", "fetch(r2)"]\n'


@pytest.fixture(scope="module")
def good_trace() -> dict[str, Any]:
    model, invariants = registry.build("replication", mode="hw")
    result = check(model, registry.select(invariants, ["weak-isr"]))
    trace = result.invariants["weak-isr"].trace
    assert trace is not None and trace.length == 8  # TLC's length (tests/reference/tlc-replication.md)
    return json.loads(itf.dumps(trace))


def _broken(change: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], bytes]:
    """The good trace with `change` applied (its return value replaces the document when not None)."""
    def make(good: dict[str, Any]) -> bytes:
        data = json.loads(json.dumps(good))
        replaced = change(data)
        return json.dumps(data if replaced is None else replaced).encode()
    return make


def _text(change: Callable[[str], str]) -> Callable[[dict[str, Any]], bytes]:
    return lambda good: change(json.dumps(good)).encode()


# (case, file name, the file's bytes (or a function of the good trace), argv with {f} for the file, stderr's line)
FILE_CASES: list[tuple[str, str, Any, list[str], str]] = [
    ("baseline not UTF-8", "base.toml", NOT_UTF8, ["gate", "{f}"], NOT_UTF8_LINE),
    ("run file not UTF-8", "run.toml", NOT_UTF8, ["check", "replication", "--config", "{f}"], NOT_UTF8_LINE),
    ("run file not UTF-8, model from it", "run.toml", NOT_UTF8, ["check", "--config", "{f}"], NOT_UTF8_LINE),
    ("scenario not UTF-8", "s.toml", NOT_UTF8, ["trace", "--scenario", "{f}"], NOT_UTF8_LINE),
    ("trace not UTF-8", "t.itf.json", NOT_UTF8, ["trace", "{f}"], NOT_UTF8_LINE),
    ("bench configurations not UTF-8", "c.toml", NOT_UTF8, ["bench", "--configs", "{f}"], NOT_UTF8_LINE),
    ("baseline nested 100k deep", "base.toml", DEEP_TOML, ["gate", "{f}"],
     "{f}: malformed TOML: arrays or tables nested too deeply"),
    ("bench configurations nested 100k deep", "c.toml", DEEP_TOML, ["bench", "--configs", "{f}"],
     "{f}: malformed TOML: arrays or tables nested too deeply"),
    ("bench config not tables", "c.toml", b"config = 5\n", ["bench", "--configs", "{f}"],
     "{f}:1: 'config' must be [[config]] tables (got an integer)"),
    ("bench config name not a string", "c.toml", b'[[config]]\nname = 5\nmodel = "replication"\n',
     ["bench", "--configs", "{f}"], "{f}:2: configuration 1: 'name' must be a string (got an integer)"),
    ("scenario steps not strings", "s.toml", b'model = "fetch"\nsteps = [1, 2]\n', ["trace", "--scenario", "{f}"],
     "{f}:2: key 'steps' must be an array of strings (got an integer)"),
    ("scenario columns not strings", "s.toml", (SCENARIO + "columns = [{a = 1}]\n").encode(),
     ["trace", "--scenario", "{f}"], "{f}:3: key 'columns' must be an array of strings (got a table)"),
    ("scenario model not a string", "s.toml", b'model = 5\nsteps = []\n', ["trace", "--scenario", "{f}"],
     "{f}:1: key 'model' must be a string (got an integer)"),
    ("scenario setting nan", "s.toml", (SCENARIO + "[settings]\nmax_records = nan\n").encode(),
     ["trace", "--scenario", "{f}"], "{f}: --max-records takes an integer (got nan)"),
    ("scenario step not enabled", "s.toml", b'model = "fetch"\nsteps = ["fetch_response(r1)"]\n',
     ["trace", "--scenario", "{f}"],
     "{f}: step 1 'fetch_response(r1)' is not enabled; enabled: produce(leader=r1), fetch(follower=r2, leader=r1), "
     "crash(replica=r1), crash(replica=r2), elect(replica=r2)"),
    ("run file time-limit nan", "run.toml", b'model = "replication"\ntime-limit = nan\n', ["check", "--config", "{f}"],
     "{f}:2: key 'time-limit': nan is not a number of seconds; write a finite number above 0"),
    ("run file time-limit inf", "run.toml", b'time-limit = inf\n', ["compare", "replication", "--config", "{f}"],
     "{f}:1: key 'time-limit': inf is not a number of seconds; write a finite number above 0"),
    ("graph without kmc's attributes", "g.graphml",
     b'<?xml version="1.0"?><graphml xmlns="http://graphml.graphdrawing.org/xmlns"><graph edgedefault="directed">'
     b'<node id="a"/></graph></graphml>', ["graph", "{f}", "--levels"],
     "{f}: not a state graph written by kmc check --dump-graph: state 'a' has no integer 'level'"),
]

ITF_CASES: list[tuple[str, Any, str]] = [
    ("a list, not an object", _broken(lambda d: [d]),
     "{f}: not an ITF trace: the document must be a JSON object (got an array)"),
    ("#meta a list", _broken(lambda d: d.__setitem__("#meta", [])),
     "{f}: not an ITF trace: #meta must be a JSON object (got an empty array)"),
    ("no states", _broken(lambda d: d.pop("states") and None), "{f}: not an ITF trace: it has no 'states' key"),
    ("states an object", _broken(lambda d: d.__setitem__("states", {})),
     "{f}: states must be a non-empty list of states (got an object)"),
    ("states empty", _broken(lambda d: d.__setitem__("states", [])),
     "{f}: states must be a non-empty list of states (got an empty array)"),
    ("a state a list", _broken(lambda d: d["states"].__setitem__(2, [])),
     "{f}: not an ITF trace: states[2] must be a JSON object (got an empty array)"),
    ("a field a string", _broken(lambda d: d["states"][0].__setitem__("hw", "x")),
     "{f}: states[0].hw must be an integer (got a string)"),
    ("an element a float", _broken(lambda d: d["states"][1]["hw"].__setitem__(1, 1.5)),
     "{f}: states[1].hw[1] must be an integer (got a number)"),
    ("a field a boolean", _broken(lambda d: d["states"][0].__setitem__("next_record_id", True)),
     "{f}: states[0].next_record_id must be an integer (got a boolean)"),
    ("a field 2**63", _broken(lambda d: d["states"][0].__setitem__("next_record_id", 2**63)),
     "{f}: states[0].next_record_id = 9223372036854775808 does not fit in 64 bits"),
    ("a 5,000-digit integer", _text(lambda t: t.replace('"next_record_id": 0', '"next_record_id": ' + "9" * 5000, 1)),
     "{f}: integer 999999999999... has 5,000 digits; a trace's integers fit in 64 bits"),
    ("#bigint malformed", _broken(lambda d: d["states"][0].__setitem__("next_record_id", {"#bigint": "12x"})),
     "{f}: states[0].next_record_id: #bigint must spell an integer of at most 19 digits (got '12x')"),
    ("NaN", _text(lambda t: t.replace('"next_record_id": 0', '"next_record_id": NaN', 1)),
     "{f}: NaN is not a JSON number; a trace's numbers are integers"),
    ("Infinity", _text(lambda t: t.replace('"length": 8', '"length": -Infinity', 1)),
     "{f}: -Infinity is not a JSON number; a trace's numbers are integers"),
    ("nested 100k deep", lambda good: b'{"#meta": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
     "{f}: not an ITF trace: lists or objects nested too deeply"),
    ("a field nested 9 deep", _broken(lambda d: d["states"][0].__setitem__("hw", [[[[[[[[[0]]]]]]]]])),
     "{f}: states[0].hw[0][0][0][0][0][0][0][0]: lists nested more than 8 deep; a field is an integer or an array "
     "of them"),
    ("step params a list", _broken(lambda d: d["states"][1]["#meta"].__setitem__("params", [1])),
     "{f}: not an ITF trace: states[1].#meta.params must be a JSON object (got an array)"),
    ("step param a list", _broken(lambda d: d["states"][1]["#meta"].__setitem__("params", {"leader": [0]})),
     "{f}: states[1].#meta.params.leader must be an integer (got an array)"),
    ("step action a list", _broken(lambda d: d["states"][1]["#meta"].__setitem__("action", ["x"])),
     "{f}: states[1].#meta.action must be a string (got an array)"),
    ("step #meta a list", _broken(lambda d: d["states"][1].__setitem__("#meta", [])),
     "{f}: not an ITF trace: states[1].#meta must be a JSON object (got an empty array)"),
    ("invariant a list", _broken(lambda d: d["#meta"].__setitem__("invariant", ["weak-isr"])),
     "{f}: #meta.invariant must be a string (got an array)"),
    ("model_source a number", _broken(lambda d: d["#meta"].__setitem__("model_source", 5)),
     "{f}: #meta.model_source must be a string (got a number)"),
    ("settings a list", _broken(lambda d: d["#meta"].__setitem__("settings", [1])),
     "{f}: not an ITF trace: #meta.settings must be a JSON object (got an array)"),
    ("a setting a float", _broken(lambda d: d["#meta"]["settings"].__setitem__("replicas", 2.5)),
     "{f}: #meta.settings.replicas must be an integer (got a number)"),
    ("loop a boolean", _broken(lambda d: d.__setitem__("loop", True)), "{f}: loop must be an integer (got a boolean)"),
    ("vars a number", _broken(lambda d: d.__setitem__("vars", 5)),
     "{f}: vars must be a list of field names (got a number)"),
]

ARGV_CASES: list[tuple[list[str], str]] = [
    (["simulate", "replication", "--seed", "-5"],
     "Invalid value for '--seed': -5 is not in the range 0<=x<=18446744073709551615."),
    (["simulate", "replication", "--seed", str(2**64)],
     "Invalid value for '--seed': 18446744073709551616 is not in the range 0<=x<=18446744073709551615."),
    (["simulate", "replication", "--walks", "10", "--weight", "leader_write=inf"],
     "--weight leader_write=inf: a weight is a finite number from 0 (never) to 1,000,000"),
    (["simulate", "replication", "--walks", "10", "--weight", "leader_write=1e400"],
     "--weight leader_write=inf: a weight is a finite number from 0 (never) to 1,000,000"),
    (["simulate", "replication", "--walks", "10", "--weight", "leader_write=nan"],
     "--weight leader_write=nan: a weight is a finite number from 0 (never) to 1,000,000"),
    (["simulate", "replication", "--walks", "10", "--weight", "leader_write=2e6"],
     "--weight leader_write=2e+06: a weight is a finite number from 0 (never) to 1,000,000"),
    (["simulate", "replication", "--walks", "10",
      *[w for a in ("become_follower", "become_leader", "controller_elect_leader", "controller_shrink_isr",
                    "follower_fetch", "leader_expand_isr", "leader_inc_high_watermark", "leader_shrink_isr",
                    "leader_write") for w in ("--weight", f"{a}=0")]],
     "--weight: every action has weight 0, so no walk could take a step; give one a weight above 0"),
    (["simulate", "replication", "--time-limit", "nan"],
     "Invalid value for '--time-limit': 'nan' is not a number of seconds; write a finite number above 0"),
    (["simulate", "replication", "--time-limit", "inf"],
     "Invalid value for '--time-limit': 'inf' is not a number of seconds; write a finite number above 0"),
    (["check", "replication", "--time-limit", "nan"],
     "Invalid value for '--time-limit': 'nan' is not a number of seconds; write a finite number above 0"),
    (["check", "replication", "--time-limit", "1e400"],
     "Invalid value for '--time-limit': '1e400' is not a number of seconds; write a finite number above 0"),
    (["compare", "replication", "--modes", "hw,kip320", "--time-limit", "nan"],
     "Invalid value for '--time-limit': 'nan' is not a number of seconds; write a finite number above 0"),
    (["prove", "replication", "--invariant", "weak-isr", "--timeout", "nan"],
     "Invalid value for '--timeout': 'nan' is not a number of seconds; write a finite number above 0"),
    (["prove", "replication", "--invariant", "weak-isr", "--timeout", "inf"],
     "Invalid value for '--timeout': 'inf' is not a number of seconds; write a finite number above 0"),
    (["check", "replication", "--memory-limit", "9" * 400],
     f"Invalid value for '--memory-limit': '{'9' * 20}'...: the size is too large to be a number"),
]


@pytest.mark.parametrize("case, name, content, argv, line", FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_a_malformed_file_is_one_line(run_kmc, tmp_path: Path, case: str, name: str, content: bytes,
                                      argv: list[str], line: str) -> None:
    f = tmp_path / name
    f.write_bytes(content)
    rc, out, err = run_kmc(*[a.format(f=f) for a in argv])
    assert (rc, err) == (2, f"kmc: error: {line.format(f=f)}\n")


@pytest.mark.parametrize("case, make, line", ITF_CASES, ids=[c[0] for c in ITF_CASES])
def test_a_malformed_trace_is_one_line(run_kmc, tmp_path: Path, good_trace: dict[str, Any], case: str,
                                       make: Callable[[dict[str, Any]], bytes], line: str) -> None:
    f = tmp_path / "t.itf.json"
    f.write_bytes(make(good_trace))
    rc, out, err = run_kmc("trace", str(f))
    assert (rc, err, out) == (2, f"kmc: error: {line.format(f=f)}\n", "")


def test_the_good_trace_still_renders(run_kmc, tmp_path: Path, good_trace: dict[str, Any]) -> None:
    f = tmp_path / "t.itf.json"
    f.write_text(json.dumps(good_trace))
    rc, out, err = run_kmc("trace", str(f))
    assert rc == 0 and "Step 8:" in out and err == ""


def test_a_bigint_spelled_as_itf_does_is_read(run_kmc, tmp_path: Path, good_trace: dict[str, Any]) -> None:
    data = json.loads(json.dumps(good_trace))
    data["states"][0]["next_record_id"] = {"#bigint": "0"}
    f = tmp_path / "t.itf.json"
    f.write_text(json.dumps(data))
    rc, out, err = run_kmc("trace", str(f))
    assert rc == 0 and "Step 8:" in out


@pytest.mark.parametrize("argv, line", ARGV_CASES, ids=[" ".join(a[:4]) + " " + a[-1][:20] for a, _ in ARGV_CASES])
def test_a_number_out_of_range_is_one_line(run_kmc, argv: list[str], line: str) -> None:
    rc, out, err = run_kmc(*argv)
    assert (rc, err) == (2, f"kmc: error: {line}\n")


def test_walks_that_do_not_fit_in_memory_are_refused_before_allocating(run_kmc, monkeypatch) -> None:
    monkeypatch.setattr(simulation, "physical_memory", lambda: 16 * 2**30)
    rc, out, err = run_kmc("simulate", "replication", "--walkers", "10000000", "--depth", "100000")
    # regression pin: 937.0 GiB, the estimate of Swarm.walk_bytes; its path alone (a byte per step of each
    # walker, 10^7 x 10^5 bytes) is 931.3 GiB, so the estimate cannot be below that
    assert (rc, err) == (2, "kmc: error: --walkers 10,000,000 with --depth 100,000 needs about 937.0 GiB before "
                            "the first state is seen; this machine has 16.0 GiB of memory: use fewer walkers or a "
                            "smaller depth\n")
    assert 937.0 * 2**30 >= 10**7 * 10**5


def test_the_memory_check_counts_every_worker(run_kmc, monkeypatch) -> None:
    monkeypatch.setattr(simulation, "physical_memory", lambda: 2**30)
    rc, out, err = run_kmc("simulate", "replication", "--walkers", "1000000", "--depth", "1000", "--workers", "4")
    assert rc == 2 and err.startswith("kmc: error: --walkers 1,000,000 with --depth 1,000 needs about ")
    assert err.endswith("this machine has 1.0 GiB of memory: use fewer walkers or a smaller depth\n")


@pytest.mark.parametrize("title", ["oops [/]", "[bold]not bold", "a [link=x]link"])
def test_markup_in_a_scenario_title_is_printed_as_written(run_kmc, tmp_path: Path, title: str) -> None:
    f = tmp_path / "s.toml"
    f.write_text(f"title = {json.dumps(title)}\n" + SCENARIO)
    rc, out, err = run_kmc("trace", "--scenario", str(f))
    assert rc == 0 and out.splitlines()[0].rstrip() == title


@pytest.mark.parametrize("argv, what", [(["gate", "{f}"], "baseline"), (["trace", "{f}"], "trace file"),
                                        (["check", "replication", "--config", "{f}"], "run file"),
                                        (["trace", "--scenario", "{f}"], "scenario file")])
@pytest.mark.parametrize("source", ["sparse 300 MiB file", "/dev/zero"])
def test_an_input_file_past_256_mib_is_refused_unread(run_kmc, tmp_path: Path, argv: list[str], what: str,
                                                      source: str) -> None:
    if source == "/dev/zero":
        f = Path("/dev/zero")
        if not f.exists():
            pytest.skip("no /dev/zero")
    else:
        f = tmp_path / "big"
        with f.open("wb") as out:
            out.truncate(300 * 2**20)  # sparse: no disk used
    rc, out, err = run_kmc(*[a.format(f=f) for a in argv])
    assert (rc, err) == (2, f"kmc: error: {f}: the {what} is larger than 256 MiB; kmc's input files are far smaller\n")
