"""--checkpoint-dir and --resume on the vector and compiled engines (kmc/engines/vector/checkpoint.py):
a run stopped after a level and resumed is the run that never stopped, and a checkpoint that
is not this run's, or not intact, is refused in one line.

Second computation: the same engine, uninterrupted. Runs are stopped by --max-depth (the levels
written so far are complete) and resumed with no limit; 3-broker-free configurations keep them
small. Replication `hw` with --continue finds violations before and after the stop, so their
traces are rebuilt from links written before it; --symmetry stores levels as words apart from
their canonical keys; kraft's wide keys are coded."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kmc.api import Checkpoint, Limits, SearchOptions, check
from kmc.cli.main import main
from kmc.engines import checkpoints
from kmc.engines.vector.links import Parents
from kmc.engines.vector.packed import Layout
from kmc.errors import BadInput
from tests.conftest import build
from tests.test_vector_parity import outcome

KRAFT = dict(mode="kip966", brokers=2, replication_factor=2, init_isr_size=2, unclean_shutdown_limit=1)
RUNS = [
    ("replication", dict(mode="hw"), SearchOptions(keep_going=True), 5),
    ("replication", dict(mode="kip320"), SearchOptions(symmetry=True), 7),
    ("kraft", KRAFT, SearchOptions(), 9),
    ("examples/two_phase_commit/model.py", dict(rms=3), SearchOptions(keep_going=True), 4),
]


def _stopped(root: Path, name: str, settings: dict[str, Any], search: SearchOptions, at: int,
             engine: str = "vector") -> tuple[Any, list[Any]]:
    model, invariants = build(name, **settings)
    first = check(model, invariants, engine=engine, search=search, limits=Limits(max_depth=at),
                  checkpoint=Checkpoint(directory=root))
    assert first.stopped_by == "max-depth"
    return model, invariants


@pytest.mark.parametrize("engine", ["vector", "compiled"])
@pytest.mark.parametrize("name, settings, search, at", RUNS, ids=[f"{r[0].split('/')[-2] if '/' in r[0] else r[0]}-{i}"
                                                                  for i, r in enumerate(RUNS)])
def test_a_resumed_run_is_the_run_that_never_stopped(tmp_path: Path, engine: str, name: str, settings: dict[str, Any],
                                                     search: SearchOptions, at: int) -> None:
    if engine == "compiled" and search.symmetry:
        pytest.skip("the compiled engine has no --symmetry")
    model, invariants = _stopped(tmp_path, name, settings, search, at, engine)
    want = outcome(check(model, invariants, engine=engine, search=search))
    resumed = check(model, invariants, engine=engine, search=search, checkpoint=Checkpoint(directory=tmp_path, resume=True))
    assert outcome(resumed) == want
    assert resumed.engine_stats["resumed_at"] == at
    # a complete run's last level is in the directory too: resuming it again gives the same result
    again = check(model, invariants, engine=engine, search=search, checkpoint=Checkpoint(directory=tmp_path, resume=True))
    assert outcome(again) == want


def test_resuming_past_the_memory_limit_spills_while_it_loads(tmp_path: Path) -> None:
    model, invariants = _stopped(tmp_path, "kraft", KRAFT, SearchOptions(), 12)
    want = outcome(check(model, invariants))
    resumed = check(model, invariants, limits=Limits(memory_limit=1), checkpoint=Checkpoint(directory=tmp_path, resume=True))
    assert outcome(resumed) == want
    spill = resumed.engine_stats["spill"]
    assert spill["states_on_disk"] == spill["states_in_checkpoint"] > 0  # the checkpoint's files, mapped


@pytest.mark.parametrize("name, settings, search, at", RUNS, ids=[f"{r[0].split('/')[-2] if '/' in r[0] else r[0]}-{i}"
                                                                  for i, r in enumerate(RUNS)])
def test_a_checkpointed_run_spills_into_its_checkpoint(tmp_path: Path, name: str, settings: dict[str, Any],
                                                       search: SearchOptions, at: int) -> None:
    """A limit of one byte spills at every chunk: each time, the visited keys in memory, the
    parent links and the level being expanded are the checkpoint's files, mapped, not written
    again (a level held as words, with --symmetry or keys of one or two words, still is)."""
    model, invariants = build(name, **settings)
    want = outcome(check(model, invariants, search=search))
    got = check(model, invariants, search=search, limits=Limits(memory_limit=1), workers=2,
                checkpoint=Checkpoint(directory=tmp_path))
    assert outcome(got) == want  # counts, verdicts and traces (rebuilt from the links in the checkpoint)
    spill = got.engine_stats["spill"]
    assert spill["states_on_disk"] == spill["states_in_checkpoint"] > 0
    if name == "kraft":
        assert spill["disk_bytes"] == 0  # coded levels: nothing of its own on disk


def test_a_resumed_run_counts_its_rate_from_the_states_it_found(tmp_path: Path) -> None:
    """States loaded from the checkpoint are not states found in this run's seconds."""
    model, invariants = _stopped(tmp_path, "kraft", KRAFT, SearchOptions(), 9)
    loaded = json.loads((tmp_path / "manifest.json").read_text())["distinct"]
    seen: list[Any] = []
    resumed = check(model, invariants, checkpoint=Checkpoint(directory=tmp_path, resume=True), progress=seen.append)
    assert resumed.resumed_states == loaded > 0
    assert resumed.states_per_second == pytest.approx((resumed.distinct_states - loaded) / resumed.seconds)
    assert all(p.resumed_states == loaded for p in seen) and seen[-1].rate == pytest.approx(
        (seen[-1].distinct_states - loaded) / seen[-1].seconds)


def test_another_run_is_refused(tmp_path: Path) -> None:
    _stopped(tmp_path, "replication", dict(mode="kip320"), SearchOptions(), 4)
    model, invariants = build("replication", mode="kip101")
    with pytest.raises(BadInput, match=r"^--resume: the run in .* has settings .*resume with the same settings$"):
        check(model, invariants, checkpoint=Checkpoint(directory=tmp_path, resume=True))
    model, invariants = build("replication", mode="kip320")
    with pytest.raises(BadInput, match=r"^--checkpoint-dir .*: holds a run already; add --resume"):
        check(model, invariants, checkpoint=Checkpoint(directory=tmp_path))


def _rewrite(root: Path, level: int, name: str, a: np.ndarray) -> None:
    """Replace a file and re-sign the manifest, as someone who knows the format could: what
    only the checks of the arrays themselves can catch."""
    path = root / f"level-{level:04d}" / name
    np.save(path, a, allow_pickle=False)
    m = json.loads((root / "manifest.json").read_text())
    m["levels"][level - 1]["files"][name] = [path.stat().st_size, hashlib.sha256(path.read_bytes()).hexdigest()]
    content = {k: v for k, v in m.items() if k != "digest"}
    m["digest"] = hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    (root / "manifest.json").write_text(json.dumps(m))


def _signed(root: Path, m: dict[str, Any], fmt: int) -> None:
    """`m` as the manifest of format `fmt`, signed as kmc signs it."""
    m["format"] = fmt
    content = {k: v for k, v in m.items() if k != "digest"}
    m["digest"] = hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    (root / "manifest.json").write_text(json.dumps(m))


def _listed(lv: dict[str, Any], f: Path) -> None:
    lv["files"][f.name] = [f.stat().st_size, hashlib.sha256(f.read_bytes()).hexdigest()]


def _as_format_4(root: Path) -> None:
    """Rewrite a checkpoint's packed keys a lane a file, as formats 3 and 4 kept them, and re-sign it."""
    m = json.loads((root / "manifest.json").read_text())
    for lv in m["levels"]:
        d = root / f"level-{lv['level']:04d}"
        layout = Layout.from_table(np.load(d / "keys-layout.npy"), m["key_words"] - 1)
        for lane, a in enumerate(layout.of_rows(np.load(d / "keys-rows.npy"))):
            np.save(d / f"keys-lane-{lane}.npy", a, allow_pickle=False)
            _listed(lv, d / f"keys-lane-{lane}.npy")
        (d / "keys-rows.npy").unlink()
        del lv["files"]["keys-rows.npy"]
    _signed(root, m, 4)


def _as_format_2(root: Path) -> tuple[int, int]:
    """Rewrite a checkpoint's coded keys a word a file and its links a parent a state, as format 2
    kept them (an older kmc's checkpoint), and re-sign it; the bytes of the keys' other words
    before and after."""
    m = json.loads((root / "manifest.json").read_text())
    packed = unpacked = 0
    for lv in m["levels"]:
        d = root / f"level-{lv['level']:04d}"
        layout = Layout.from_table(np.load(d / "keys-layout.npy"), m["key_words"] - 1)
        lanes = layout.of_rows(np.load(d / "keys-rows.npy"))
        for f in [d / "keys-layout.npy", d / "keys-rows.npy"]:
            packed += f.stat().st_size
            del lv["files"][f.name]
            f.unlink()
        for w in range(m["key_words"] - 1):
            f = d / f"keys-word-{w}.npy"
            np.save(f, layout.unpack(w, lanes, lv["keys"]), allow_pickle=False)
            unpacked += f.stat().st_size
            _listed(lv, f)
        if lv["level"] > 1:
            children = d / "links-children.npy"
            np.save(d / "links-parent.npy", Parents(np.load(children)).indices(), allow_pickle=False)
            del lv["files"][children.name]
            children.unlink()
            _listed(lv, d / "links-parent.npy")
    _signed(root, m, 2)
    return packed, unpacked


@pytest.mark.parametrize("memory_limit", [None, 1])
def test_a_checkpoint_of_format_2_resumes(tmp_path: Path, memory_limit: int | None) -> None:
    """Coded keys were kept a word a file before they were bit-packed: such a checkpoint resumes
    (spilling into its files too), its levels rewritten bit-packed as they load."""
    model, invariants = _stopped(tmp_path, "kraft", KRAFT, SearchOptions(), 9)
    packed, unpacked = _as_format_2(tmp_path)
    assert packed < 0.6 * unpacked
    want = outcome(check(model, invariants))
    resumed = check(model, invariants, limits=Limits(memory_limit=memory_limit),
                    checkpoint=Checkpoint(directory=tmp_path, resume=True))
    assert outcome(resumed) == want
    m = json.loads((tmp_path / "manifest.json").read_text())
    assert m["format"] == 5
    assert all("keys-rows.npy" in lv["files"] and "keys-word-0.npy" not in lv["files"] for lv in m["levels"])
    assert all("links-children.npy" in lv["files"] for lv in m["levels"][1:])
    assert not list(tmp_path.glob("level-*/keys-word-*")) and not list(tmp_path.glob("level-*/links-parent*"))
    assert sum(size for lv in m["levels"][:9] for name, (size, _) in lv["files"].items()
               if name in ("keys-layout.npy", "keys-rows.npy")) < 0.6 * unpacked
    assert outcome(check(model, invariants, checkpoint=Checkpoint(directory=tmp_path, resume=True))) == want


@pytest.mark.parametrize("memory_limit", [None, 1])
def test_a_checkpoint_of_format_4_resumes(tmp_path: Path, memory_limit: int | None) -> None:
    """Packed keys were kept a lane a file before a key's lanes were kept in a row: such a
    checkpoint resumes (spilling into its files too), its levels rewritten in rows as they load,
    taking the same disk."""
    model, invariants = _stopped(tmp_path, "kraft", KRAFT, SearchOptions(), 9)
    rows = sum(f.stat().st_size - 128 for f in tmp_path.glob("level-*/keys-rows.npy"))
    _as_format_4(tmp_path)
    assert sum(f.stat().st_size - 128 for f in tmp_path.glob("level-*/keys-lane-*.npy")) == rows
    want = outcome(check(model, invariants))
    resumed = check(model, invariants, limits=Limits(memory_limit=memory_limit),
                    checkpoint=Checkpoint(directory=tmp_path, resume=True))
    assert outcome(resumed) == want
    m = json.loads((tmp_path / "manifest.json").read_text())
    assert m["format"] == 5 and all("keys-rows.npy" in lv["files"] for lv in m["levels"])
    assert not list(tmp_path.glob("level-*/keys-lane-*"))
    assert outcome(check(model, invariants, checkpoint=Checkpoint(directory=tmp_path, resume=True))) == want


@pytest.mark.parametrize("stop", ["relist", "unlink"])
def test_a_rewrite_stopped_halfway_names_the_files_left_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             stop: str) -> None:
    """A run stopped while it rewrites a format-2 level (before the manifest names the new files,
    or before the old ones are gone) is refused, naming the files to remove; then it resumes."""
    model, invariants = _stopped(tmp_path, "kraft", KRAFT, SearchOptions(), 9)
    _as_format_2(tmp_path)
    target = checkpoints if stop == "relist" else Path

    def stopped(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(target, stop, stopped)
        with pytest.raises(KeyboardInterrupt):
            check(model, invariants, checkpoint=Checkpoint(directory=tmp_path, resume=True))
    left = ["keys-layout.npy", "keys-rows.npy"] if stop == "relist" else \
        [f.name for f in (tmp_path / "level-0001").glob("keys-word-*")]
    with pytest.raises(BadInput, match=rf"level-0001/{sorted(left)[0]}: not part of the run .*more file\(s\) there\); "
                                       "remove it"):
        check(model, invariants, checkpoint=Checkpoint(directory=tmp_path, resume=True))
    for name in left:
        (tmp_path / "level-0001" / name).unlink()
    resumed = check(model, invariants, checkpoint=Checkpoint(directory=tmp_path, resume=True))
    assert outcome(resumed) == outcome(check(model, invariants))


@pytest.mark.parametrize("name, change, message", [
    ("links-children.npy", lambda a: a * 2, "a parent link out of range"),
    ("links-children.npy", lambda a: a[:-1], r"expected one of uint8 with \d+ elements"),
    ("keys-sort.npy", lambda a: a[::-1].copy(), "the keys of level 4 are not sorted"),
    ("keys-sort.npy", lambda a: a.astype(np.int64), "expected one of uint64"),
])
def test_a_checkpoint_whose_arrays_are_wrong_is_refused(tmp_path: Path, name: str, change: Any, message: str) -> None:
    model, invariants = _stopped(tmp_path, "replication", dict(mode="kip320"), SearchOptions(), 5)
    a = np.load(tmp_path / "level-0004" / name)
    _rewrite(tmp_path, 4, name, change(a))
    with pytest.raises(BadInput, match=message):
        check(model, invariants, checkpoint=Checkpoint(directory=tmp_path, resume=True))


def _all_ones(rows: np.ndarray, lane: str) -> np.ndarray:
    out = rows.copy()
    out[lane] = np.iinfo(out[lane].dtype).max
    return out


@pytest.mark.parametrize("name, change, message", [
    ("keys-layout.npy", lambda a: np.concatenate([a, a[:4]]), r"keys-layout.npy: two pieces overlap in lane 0: "
     "the run cannot be resumed"),
    ("keys-layout.npy", lambda a: a.astype(np.int32), "expected one of int64"),
    ("keys-rows.npy", lambda a: _all_ones(a, "lane-0"), r"keys-rows.npy: word \d+ has a code beyond its dictionary"),
    ("keys-rows.npy", lambda a: a.view(np.uint8), r"expected one of \[\('lane-0'"),
])
def test_a_checkpoint_whose_packed_keys_are_wrong_is_refused(tmp_path: Path, name: str, change: Any, message: str) -> None:
    model, invariants = _stopped(tmp_path, "kraft", KRAFT, SearchOptions(), 9)
    _rewrite(tmp_path, 7, name, change(np.load(tmp_path / "level-0007" / name)))
    with pytest.raises(BadInput, match=message):
        check(model, invariants, checkpoint=Checkpoint(directory=tmp_path, resume=True))


def test_an_altered_file_is_refused(tmp_path: Path) -> None:
    model, invariants = _stopped(tmp_path, "replication", dict(mode="kip320"), SearchOptions(), 5)
    path = tmp_path / "level-0003" / "keys-sort.npy"
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(BadInput, match=r"keys-sort.npy: its SHA-256 is not the one the manifest lists"):
        check(model, invariants, checkpoint=Checkpoint(directory=tmp_path, resume=True))


@pytest.mark.parametrize("args, message", [
    (["--resume"], "kmc: error: --resume needs --checkpoint-dir DIR, the directory of the run to continue"),
    (["--engine", "scalar", "--checkpoint-dir", "DIR"],
     "kmc: error: --checkpoint-dir: the scalar engine keeps no checkpoints; the vector, spark and compiled engines do"),
    (["--coverage", "--checkpoint-dir", "DIR"], "kmc: error: --checkpoint-dir: the vector engine keeps levels, not "
     "liveness graphs or coverage: drop the checkpoint, or --property/--properties/--coverage (--no-properties checks "
     "safety only)"),
])
def test_the_command_line_says_what_is_wrong(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                            message: str) -> None:
    args = [str(tmp_path / "run") if a == "DIR" else a for a in args]
    assert main(["check", "replication", "--mode", "kip320", "-q", *args]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == message
    assert not (tmp_path / "run").exists()  # nothing half-written
