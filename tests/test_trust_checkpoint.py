"""A checkpoint proves itself (issue 27, item 4): `--resume` loads a --checkpoint-dir only when
its manifest's digest matches its content and every level holds exactly the files the
manifest lists, each of the size and SHA-256 listed; a missing, truncated, altered or extra
file or an edited manifest is one line naming it, exit 2, before Spark does any work.

The checkpoint is replication kip320 (TLC: 5,973 distinct states, depth 18,
tests/reference/tlc-replication.md) stopped at depth 6. On main as of 81e0ee1 the corruption
cases resumed: a deleted level file gave a wrong count with exit 0, an edited `distinct` went
into the result, a truncated file was an internal error."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

RUN = ["check", "replication", "--mode", "kip320", "--engine", "spark", "--master", "local[2]", "--partitions", "2",
       "--no-properties", "--json", "--quiet"]
TLC_DISTINCT, TLC_DEPTH = 5973, 18  # tests/reference/tlc-replication.md
STOPPED_AT = 6


@pytest.fixture(scope="module")
def kept(spark_session: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoint directory of a run stopped by --max-depth after level 6."""
    from kmc.cli.main import main

    root = tmp_path_factory.mktemp("kept") / "run"
    assert main([*RUN, "--checkpoint-dir", str(root), "--max-depth", str(STOPPED_AT)]) in (0, 4)  # 4: undecided
    assert json.loads((root / "manifest.json").read_text())["depth"] == STOPPED_AT
    return root


@pytest.fixture
def copy(kept: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(kept, out)
    return out


def one_file(root: Path, pattern: str) -> Path:
    return sorted(root.glob(pattern))[0]


def truncate(f: Path) -> None:
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])


def flip_a_byte(f: Path) -> None:
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0xFF
    f.write_bytes(bytes(data))


def edit_manifest(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def edit(f: Path) -> None:
        m = json.loads(f.read_text())
        change(m)
        f.write_text(json.dumps(m))
    return edit


# (what is done, to which file (a glob under the run), what the one line says of it)
CASES = [
    ("deleted", "level-0003/kind=keys/part-00000-*.parquet", Path.unlink,
     "missing (the manifest lists it); the run cannot be resumed"),
    ("deleted frontier", f"level-{STOPPED_AT:04d}/kind=frontier/part-*.parquet", Path.unlink,
     "missing (the manifest lists it); the run cannot be resumed"),
    ("deleted checksum", "level-0002/kind=keys/.part-00001-*.crc", Path.unlink,
     "missing (the manifest lists it); the run cannot be resumed"),
    ("truncated", "level-0005/kind=keys/part-00001-*.parquet", truncate,
     "(truncated or replaced); the run cannot be resumed"),
    ("altered", f"level-{STOPPED_AT:04d}/kind=frontier/part-*.parquet", flip_a_byte,
     "its SHA-256 is not the one the manifest lists (altered); the run cannot be resumed"),
]


@pytest.mark.parametrize("what,pattern,damage,says", CASES, ids=[c[0] for c in CASES])
def test_a_damaged_level_file_is_refused_naming_it(run_kmc, copy: Path, what: str, pattern: str,
                                                   damage: Callable[[Path], None], says: str) -> None:
    f = one_file(copy, pattern)
    size = f.stat().st_size
    damage(f)
    rc, out, err = run_kmc(*RUN, "--checkpoint-dir", str(copy), "--resume")
    assert rc == 2 and out == ""
    [line] = err.strip().splitlines()
    assert line.startswith(f"kmc: error: --resume: {f}: ") and line.endswith(says)
    if what == "truncated":
        assert f"{size // 2:,} bytes, the manifest says {size:,} (truncated or replaced)" in line


def test_an_extra_file_in_a_level_is_refused_naming_it(run_kmc, copy: Path) -> None:
    f = one_file(copy, "level-0004/kind=keys/part-00000-*.parquet")
    extra = f.with_name(f.name.replace("part-00000", "part-00002"))
    shutil.copyfile(f, extra)  # the keys of level 4 twice: more distinct states than there are
    rc, out, err = run_kmc(*RUN, "--checkpoint-dir", str(copy), "--resume")
    assert rc == 2 and out == ""
    assert err.strip() == (f"kmc: error: --resume: {extra}: not part of the run (the manifest does not list it); "
                           "remove it or start again in an empty directory")


@pytest.mark.parametrize("change", [
    lambda m: m.update(distinct=m["distinct"] + 1),
    lambda m: m.update(depth=m["depth"] - 1),
    lambda m: m["levels"][2]["files"].popitem(),
    lambda m: m.pop("digest"),
], ids=["distinct", "depth", "a file unlisted", "no digest"])
def test_an_edited_manifest_is_refused(run_kmc, copy: Path, change: Callable[[dict[str, Any]], None]) -> None:
    edit_manifest(change)(copy / "manifest.json")
    rc, out, err = run_kmc(*RUN, "--checkpoint-dir", str(copy), "--resume")
    assert rc == 2 and out == ""
    assert err.strip() == (f"kmc: error: --resume: {copy / 'manifest.json'} was changed after kmc wrote it (its "
                           "digest does not match its content); start the run again in an empty directory")


def test_the_manifest_lists_every_file_with_its_size_and_sha256(kept: Path) -> None:
    """A second computation of what the manifest records: the files on disk, hashed here."""
    m = json.loads((kept / "manifest.json").read_text())
    assert m["format"] == 4 and [lv["level"] for lv in m["levels"]] == list(range(1, STOPPED_AT + 1))
    assert sum(lv["keys"] for lv in m["levels"]) == m["distinct"] and m["levels"][-1]["keys"] == m["level_size"]
    for lv in m["levels"]:
        d = kept / f"level-{lv['level']:04d}"
        on_disk = {p.relative_to(d).as_posix(): [p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest()]
                   for p in d.rglob("*") if p.is_file()}
        if lv["level"] < STOPPED_AT:  # an older level's frontier is dropped once the next level is written
            assert not any(name.startswith("kind=frontier/") for name in on_disk)
            assert lv["files"] == {**on_disk, **{k: v for k, v in lv["files"].items() if k.startswith("kind=frontier/")}}
        else:
            assert lv["files"] == on_disk
        assert any(name.startswith("kind=keys/") and name.endswith(".parquet") for name in lv["files"])
    content = {k: v for k, v in m.items() if k != "digest"}
    assert m["digest"] == hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@pytest.mark.slow
def test_an_intact_checkpoint_resumes_to_tlcs_count(run_kmc, copy: Path) -> None:
    rc, out, err = run_kmc(*RUN, "--checkpoint-dir", str(copy), "--resume")
    assert rc == 0, err
    got = json.loads(out)
    assert (got["distinct_states"], got["depth"], got["complete"]) == (TLC_DISTINCT, TLC_DEPTH, True)
    assert got["engine_stats"]["resumed_at"] == STOPPED_AT
    m = json.loads((copy / "manifest.json").read_text())
    assert sum(lv["keys"] for lv in m["levels"]) == TLC_DISTINCT
