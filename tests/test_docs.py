"""The documentation holds together: a short README, links that resolve, enough pages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
README_MAX_BYTES = 12_288

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$")
EXTERNAL = ("http://", "https://", "mailto:")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fence = [], ""
    for line in text.splitlines():
        opened = FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            continue
        if opened:
            fence = opened.group(1)
            continue
        lines.append(line)
    return lines


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped except - and _, spaces
    to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a markdown file, with GitHub's -1, -2 suffixes for repeats."""
    seen: dict[str, int] = {}
    found = set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        base = anchor(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    """The targets of the markdown links of a file, outside code blocks and code spans."""
    return [m.group(1) for line in prose_lines(path.read_text(encoding="utf-8"))
            for m in LINK.finditer(INLINE_CODE.sub("", line))]


def documents() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md")), RESULTS]


def test_readme_is_short() -> None:
    size = len(README.read_bytes())
    assert size <= README_MAX_BYTES, (
        f"README.md is {size} bytes, over {README_MAX_BYTES}: move detail to docs/")


def test_docs_has_pages() -> None:
    pages = sorted(p.name for p in DOCS.glob("*.md"))
    assert len(pages) >= 5, f"docs/ has {len(pages)} pages: {pages}"


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path: Path) -> None:
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing"
    broken = []
    for target in links(path):
        if not target or target.startswith(EXTERNAL):
            continue
        file_part, _, fragment = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target}: no such file or folder")
        elif fragment and linked.is_file() and linked.suffix == ".md" \
                and fragment not in anchors(linked):
            broken.append(f"{target}: no heading #{fragment} in {linked.name}")
        elif fragment and not (linked.is_file() and linked.suffix == ".md"):
            broken.append(f"{target}: #{fragment} points into something that is not markdown")
    assert not broken, f"{path.relative_to(ROOT)}:\n  " + "\n  ".join(broken)


def test_anchor_rule() -> None:
    assert anchor("Scale (synthetic graphs)") == "scale-synthetic-graphs"
    assert anchor("Documents: replace, check, delete") == "documents-replace-check-delete"
    assert anchor("The `llm` method") == "the-llm-method"
    assert anchor("Adding a query_option") == "adding-a-query_option"
    assert anchor("Requests: timeouts, retries") == "requests-timeouts-retries"


def test_links_in_code_are_ignored(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n```\n[x](missing.md)\n```\n`[y](gone.md)` [ok](#title)\n",
                    encoding="utf-8")
    assert links(page) == ["#title"]
    assert anchors(page) == {"title"}


def test_the_code_points_at_pages_that_exist() -> None:
    """Docstrings and error fixes name docs/ pages and benchmarks/RESULTS.md; the README is a
    tour and is not where the code sends anyone."""
    named: set[str] = set()
    for source in sorted((ROOT / "src" / "hopgraph").rglob("*.py")):
        text = source.read_text(encoding="utf-8")
        assert "README" not in text, f"{source.relative_to(ROOT)} points at the README"
        named |= set(re.findall(r"\b((?:docs|benchmarks)/[\w./-]+\.md)", text))
    assert named, "no page named at all: the pattern is wrong"
    missing = sorted(page for page in named if not (ROOT / page).is_file())
    assert not missing, f"pages named in src/ that do not exist: {missing}"
