"""The repository holds source, not artefacts: no tracked file is over 1 MB, except TLC's
reference outputs (tests/reference/) and the docs' screenshots (docs/img/). A wheel, a trace
dump or a results archive committed by mistake fails here (issue 28: a 2.9 MB py-spy wheel sat
at the root, used by nothing)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIMIT_BYTES = 1_000_000
ALLOWED = ("tests/reference/", "docs/img/")


def _tracked_files() -> list[str]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    listing = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=False)
    if listing.returncode != 0:
        pytest.skip("not a git checkout")
    return [name for name in listing.stdout.decode("utf-8").split("\0") if name]


def _too_large(root: Path, names: list[str]) -> list[str]:
    """The tracked files over the limit outside the allowed folders, with their sizes."""
    found = []
    for name in names:
        path = root / name
        if name.startswith(ALLOWED) or not path.is_file():  # deleted in the work tree, or a submodule
            continue
        size = path.stat().st_size
        if size > LIMIT_BYTES:
            found.append(f"{name} ({size:,} bytes)")
    return found


def test_no_tracked_file_is_over_1_mb_outside_the_reference_outputs_and_screenshots() -> None:
    names = _tracked_files()
    assert "pyproject.toml" in names
    too_large = _too_large(ROOT, names)
    assert not too_large, "tracked files over 1 MB: " + ", ".join(too_large)


def test_the_limit_is_applied_as_stated(tmp_path: Path) -> None:
    """The rule on files made for the purpose: one byte over the limit fails, the limit itself and the
    allowed folders pass."""
    (tmp_path / "docs" / "img").mkdir(parents=True)
    (tmp_path / "tests" / "reference").mkdir(parents=True)
    sizes = {"big.whl": LIMIT_BYTES + 1, "edge.bin": LIMIT_BYTES, "docs/img/shot.png": 3 * LIMIT_BYTES, "tests/reference/tlc.md": 2 * LIMIT_BYTES}
    for name, size in sizes.items():
        (tmp_path / name).write_bytes(b"\0" * size)
    assert _too_large(tmp_path, list(sizes)) == [f"big.whl ({LIMIT_BYTES + 1:,} bytes)"]
