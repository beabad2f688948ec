"""A run's completed levels on disk, and the manifest that proves them: what the Spark engine
(kmc/engines/spark/store.py) and the vector and compiled engines (kmc/engines/vector/checkpoint.py)
share for `--checkpoint-dir` and `--resume`.

DIR/level-LLLL/ holds the files of level L, in the engine's own layout; DIR/manifest.json is
replaced atomically after each level: the run's identity (the model's fingerprint, settings,
invariants, search options), what the engine knows at the level's end (counts, violations),
and per level its key count and every file's path, size and SHA-256, the whole under a SHA-256
of its canonical JSON (`digest`). A level is part of the run only once the manifest names it.
Only the last level's frontier (the states to expand next) is kept.

`proved` first proves the directory holds what the manifest says: its digest, then in every
level exactly the files it lists (none missing, none extra; an older level's frontier may be
gone), each of its size and SHA-256; anything else is refused, one line naming the file. Data,
never code: files are read as JSON and NumPy arrays without pickles.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from kmc.errors import BadInput
from kmc.model.core import Invariant, Model

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Layout:
    """An engine's checkpoints: its name, the format number it writes, where a level keeps its
    frontier (the path prefix of those files inside the level's directory), and the older
    formats it still reads."""

    engine: str
    format: int
    frontier: str
    reads_older: tuple[int, ...] = ()

    def formats(self) -> str:
        return " or ".join(str(f) for f in (*self.reads_older, self.format))


def level_dir(root: Path, level: int) -> Path:
    return root / f"level-{level:04d}"


def write_manifest(root: Path, manifest: dict[str, Any], layout: Layout) -> None:
    """Replace the manifest atomically (the level just written, `depth`, recorded with its files
    beside the older levels' records), then drop the frontiers of older levels."""
    root.mkdir(parents=True, exist_ok=True)
    depth = manifest["depth"]
    levels = _levels_before(root, depth)
    levels.append({"level": depth, "keys": manifest["level_size"], "files": _files(level_dir(root, depth))})
    _replace(root, {"format": layout.format, **manifest, "levels": levels})
    last = manifest["depth"]
    for level in range(1, last):
        for old in level_dir(root, level).glob(layout.frontier + "*"):
            shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink(missing_ok=True)


def relist(root: Path, manifest: dict[str, Any], level: int, leaving: tuple[str, ...]) -> dict[str, Any]:
    """The manifest `manifest` with level `level`'s files recorded again as they are on disk,
    leaving out those whose names start with one of `leaving` (files the engine rewrote in its
    current format, and deletes next), replaced atomically; the manifest as it reads back."""
    levels = [dict(lv) for lv in manifest["levels"]]
    files = _files(level_dir(root, level))
    levels[level - 1]["files"] = {name: f for name, f in files.items() if not name.startswith(leaving)}
    return _replace(root, {**{k: v for k, v in manifest.items() if k != "digest"}, "levels": levels})


def _replace(root: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Write `manifest` under its digest in place of the run's, atomically; it as it reads back."""
    content = json.loads(json.dumps(manifest))
    signed = {**content, "digest": _digest(content)}
    fd, tmp = tempfile.mkstemp(dir=root, prefix=f".{MANIFEST}.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(signed, f)
    os.replace(tmp, root / MANIFEST)
    return signed


def check_fresh(root: Path) -> None:
    """A new run must not mix its levels with another run's."""
    if (root / MANIFEST).exists():
        raise BadInput(f"--checkpoint-dir {root}: holds a run already; add --resume to continue it, "
                       "or give an empty directory")


def _levels_before(root: Path, depth: int) -> list[dict[str, Any]]:
    """The records of levels 1 .. depth - 1: the manifest this run wrote last (or resumed from)."""
    if depth == 1:
        return []
    levels = json.loads((root / MANIFEST).read_text())["levels"]
    return [lv for lv in levels if lv["level"] < depth]


def _files(d: Path) -> dict[str, list[Any]]:
    """Every file under a level's directory (Spark's checksums and _SUCCESS included), by its
    path inside it: [size, SHA-256]."""
    out = {}
    for f in sorted(p for p in d.rglob("*") if not p.is_dir()):
        out[f.relative_to(d).as_posix()] = [f.stat().st_size, _sha256(f)]
    return out


def _sha256(f: Path) -> str:
    h = hashlib.sha256()
    with open(f, "rb") as stream:
        for block in iter(lambda: stream.read(2**20), b""):
            h.update(block)
    return h.hexdigest()


def _digest(content: dict[str, Any]) -> str:
    """SHA-256 of the manifest's canonical JSON (sorted keys, no spaces), without its digest."""
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


# -- reading -------------------------------------------------------------------------------

def proved(root: Path, layout: Layout) -> dict[str, Any]:
    """The manifest of the run kept in `root`, once it and every file it lists are proved (see
    above): BadInput, one line naming the file, otherwise. Needs no Spark."""
    path = root / MANIFEST
    if not path.is_file():
        raise BadInput(f"--resume: no kmc run in {root} ({MANIFEST} missing)")
    try:
        manifest = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadInput(f"--resume: {path} is not valid JSON ({e})") from e
    if not isinstance(manifest, dict):
        raise BadInput(f"--resume: {path} is not a kmc manifest (not a JSON object)")
    if manifest.get("format") not in (*layout.reads_older, layout.format):
        raise BadInput(f"--resume: {path} has format {manifest.get('format')!r}; this kmc reads format "
                       f"{layout.formats()} ({layout.engine} engine)")
    content = {k: v for k, v in manifest.items() if k != "digest"}
    if manifest.get("digest") != _digest(content):
        raise BadInput(f"--resume: {path} was changed after kmc wrote it (its digest does not match its content); "
                       "start the run again in an empty directory")
    _check_levels(root, manifest, layout)
    return manifest


def same_run(root: Path, manifest: dict[str, Any], identity: dict[str, Any]) -> None:
    """BadInput unless the run kept in `root` is this one (model, settings, invariants, ...)."""
    for key, value in identity.items():
        if manifest.get(key) != value:
            raise BadInput(f"--resume: the run in {root} has {key} {manifest.get(key)!r}, this one {value!r}; "
                           "resume with the same settings")


def _check_levels(root: Path, m: dict[str, Any], layout: Layout) -> None:
    """Every level of the run holds exactly the files the manifest lists, byte for byte."""
    depth, levels = m["depth"], m["levels"]
    if [lv["level"] for lv in levels] != list(range(1, depth + 1)) \
            or sum(lv["keys"] for lv in levels) != m["distinct"] or levels[-1]["keys"] != m["level_size"]:
        raise BadInput(f"--resume: {root / MANIFEST}: its levels do not add up to its counts")
    for lv in levels:
        d = level_dir(root, lv["level"])
        listed: dict[str, list[Any]] = lv["files"]
        found = {p.relative_to(d).as_posix(): p for p in d.rglob("*") if not p.is_dir()} if d.is_dir() else {}
        dropped = lv["level"] < depth and not any(name.startswith(layout.frontier) for name in found)
        extra = sorted(set(found) - set(listed))
        if extra:
            more = f", nor {len(extra) - 1} more file(s) there" if len(extra) > 1 else ""
            raise BadInput(f"--resume: {found[extra[0]]}: not part of the run (the manifest does not list it{more}); "
                           "remove it or start again in an empty directory")
        for name, (size, sha) in sorted(listed.items()):
            f = d / name
            if name not in found:
                if dropped and name.startswith(layout.frontier):
                    continue  # an older level's frontier, dropped once the next level was written
                raise BadInput(f"--resume: {f}: missing (the manifest lists it); the run cannot be resumed")
            if f.is_symlink() or f.stat().st_size != size:
                raise BadInput(f"--resume: {f}: {f.lstat().st_size:,} bytes, the manifest says {size:,} "
                               "(truncated or replaced); the run cannot be resumed")
            if _sha256(f) != sha:
                raise BadInput(f"--resume: {f}: its SHA-256 is not the one the manifest lists (altered); "
                               "the run cannot be resumed")


def violations_record(initial: Sequence[Sequence[int]], violations: Any, found_at: dict[Any, tuple[int, int]]
                      ) -> dict[str, Any]:
    """What a manifest keeps of a search's violations (kmc/engines/search.py:Violations) and
    initial states, as JSON."""
    return {"initial": [list(s) for s in initial],
            "first": {str(k): list(v) for k, v in violations.first.items()},
            "counts": {str(k): v for k, v in violations.counts.items()},
            "found_at": [[list(st), lv, index] for st, (lv, index) in found_at.items()]}


def fingerprint(model: Model, invariants: Sequence[Invariant]) -> str:
    """A digest of what a run explores and checks: equal on the driver and every executor."""
    parts = (
        type(model).__qualname__,  # not its module: a script is `__main__` here, kmc_main_<digest> there
        sorted(model.settings.items()),
        [(f.name, f.lo, f.hi, f.shape) for f in model.schema.fields],
        [i.label for i in model.instances()],
        [tuple(s) for s in model.initial_states()],
        [(i.name, i.report) for i in invariants],
    )
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]
