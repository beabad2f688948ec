"""The docs a user reads stay readable and connected: every relative link in README.md, docs/*.md
and benchmarks/results/*.md names a file that exists (and, with `#anchor`, a heading of it, as
GitHub slugs it), and no page in docs/ grows past MAX_DOC_LINES: measurement sittings belong in
benchmarks/results/ (docs/architecture.md, "docs/*.md")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "benchmarks" / "results").glob("*.md"))]

# "about 350 lines" (issue 28): a page that needs more is two topics, or carries a diary.
MAX_DOC_LINES = 360

_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^(```|~~~)")


def _prose(text: str) -> str:
    """The text outside fenced code blocks (a console block may print `](` itself)."""
    kept, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            kept.append(line)
    return "\n".join(kept)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but hyphens dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for line in _prose(page.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"^#{1,6}\s+(.*)$", line)
        if not match:
            continue
        slug = _slug(match.group(1))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _relative_links(page: Path) -> list[str]:
    return [t for t in _LINK.findall(_prose(page.read_text(encoding="utf-8"))) if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]


def test_the_pages_exist() -> None:
    assert (ROOT / "docs" / "spark.md").is_file() and (ROOT / "benchmarks" / "results" / "spark.md").is_file()
    assert len(PAGES) > 10


def _broken(page: Path) -> list[str]:
    broken = []
    for target in _relative_links(page):
        path, _, anchor = target.partition("#")
        file = page if not path else (page.parent / path).resolve()
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(f"{target}: no heading with that anchor")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_at_an_existing_file(page: Path) -> None:
    broken = _broken(page)
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


@pytest.mark.parametrize("page", sorted((ROOT / "docs").glob("*.md")), ids=lambda p: p.name)
def test_no_docs_page_is_longer_than_the_limit(page: Path) -> None:
    lines = len(page.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_DOC_LINES, f"docs/{page.name} has {lines} lines; move dated measurements to benchmarks/results/"


def test_the_checks_catch_what_they_should(tmp_path: Path) -> None:
    """A second computation of the rules on pages made for the purpose: a missing file, a missing
    anchor, and a link inside a code block (ignored)."""
    (tmp_path / "b.md").write_text("# The `x` option: KIP-890 (part 2)\n", encoding="utf-8")
    page = tmp_path / "a.md"
    page.write_text(
        "[ok](b.md#the-x-option-kip-890-part-2) [bad](c.md) [no anchor](b.md#nope) [web](https://example.org)\n"
        "```\n[inside](missing.md)\n```\n",
        encoding="utf-8",
    )
    assert _relative_links(page) == ["b.md#the-x-option-kip-890-part-2", "c.md", "b.md#nope"]
    assert _anchors(tmp_path / "b.md") == {"the-x-option-kip-890-part-2"}
    assert _broken(page) == ["c.md: no such file", "b.md#nope: no heading with that anchor"]
