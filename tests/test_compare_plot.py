"""`kmc compare --plot`: the verdict matrix and state counts drawn to PNG or SVG."""

from __future__ import annotations

from pathlib import Path


def test_plot_png_and_svg(run_kmc, tmp_path: Path) -> None:
    png, svg = tmp_path / "m.png", tmp_path / "m.svg"
    rc, _, _ = run_kmc("compare", "replication", "--modes", "hw,kip320", "--quiet", "--plot", str(png))
    assert rc == 12 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rc, _, _ = run_kmc("compare", "replication", "--modes", "hw,kip320", "--quiet", "--plot", str(svg))
    text = svg.read_text()
    assert rc == 12 and "<svg" in text
    # the state counts of tests/test_cli.py::test_compare_prints_the_matrix are drawn as bar labels
    # TLC's count for hw (tests/reference/tlc-replication.md, table A)
    assert "10,131" in text or "10,131" in text.replace("&#44;", ",")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.png", "m.svg"]


def test_plot_needs_a_picture_suffix(run_kmc, tmp_path: Path) -> None:
    rc, out, err = run_kmc("compare", "replication", "--modes", "hw", "--plot", str(tmp_path / "m.pdf"))
    assert rc == 2 and out == "" and "must end in .png or .svg" in err
