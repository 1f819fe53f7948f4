"""An HTML page's main content as Markdown (BeautifulSoup, with lxml when it is installed).

- What is not content goes first: scripts, styles, forms, navigation, asides, and the page's
  own header and footer (a header inside an article, holding its title, stays).
- The content is the page's `<main>`, else its one `<article>`, else its body.
- `<h1>`..`<h6>` become `#`..`######` headings; with no `<h1>`, the page's `<title>` is the
  heading over everything. Lists become `- ` / `1.` items, nested ones indented; a table
  becomes a pipe table whose first row is the header (a table of one column, as pages are
  laid out with, is read as paragraphs); other blocks are paragraphs, `<br>` a line break.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hopgraph.errors import InputError
from hopgraph.ingest.containers import office_library
from hopgraph.ingest.markdown import MarkdownText, ReadText, one_line

MAX_HTML_BYTES = 32 * 1024 * 1024  # a parsed page takes many times its size in memory
MAX_LIST_DEPTH = 8
DROPPED = ("script", "style", "noscript", "template", "nav", "aside", "form", "button",
           "select", "textarea", "iframe", "svg", "canvas", "object", "embed", "dialog")
BLOCKS = frozenset(["address", "article", "blockquote", "body", "center", "dd", "details",
                    "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer",
                    "header", "hgroup", "html", "li", "main", "p", "section", "summary"])
_TAG = re.compile(rb"<\s*(?:!doctype|!--|[a-z][a-z0-9]*[\s/>])", re.I)


def looks_like_html(data: bytes) -> bool:
    """Whether the file's bytes hold markup at all (a tag, a doctype or a comment)."""
    return _TAG.search(data[:1 << 16]) is not None


def read_html(path: Path) -> ReadText:
    """The page at `path` as Markdown (its declared or detected encoding)."""
    if path.stat().st_size > MAX_HTML_BYTES:
        raise InputError(f"too large: an HTML page of {path.stat().st_size // 2**20} MB "
                         f"(at most {MAX_HTML_BYTES // 2**20} MB)", where=str(path))
    read = html_markdown(path.read_bytes(), path)
    if not read.text.strip():
        raise InputError("no text in the HTML page (only scripts, styles or navigation)",
                         where=str(path))
    return read


def html_markdown(markup: bytes | str, path: Path) -> ReadText:
    """HTML (bytes in any encoding it declares, or text) as Markdown; `path` is named when
    the library is missing."""
    bs4 = office_library("bs4", "beautifulsoup4", path)
    parser = "lxml" if _has_lxml() else "html.parser"
    soup = bs4.BeautifulSoup(markup, parser)
    for tag in soup.find_all(DROPPED):
        tag.decompose()
    for tag in soup.find_all(["header", "footer"]):
        if tag.find_parent(["article", "main"]) is None:
            tag.decompose()
    root = _content(soup)
    out = MarkdownText()
    if root is not None:
        title = soup.title.get_text() if soup.title is not None else ""
        if title.strip() and root.find("h1") is None and not _placeholder_title(title, path):
            out.heading(1, title)
        _Walker(bs4, out).block(root)
    return out.read()


def _placeholder_title(title: str, path: Path) -> bool:
    """Whether a page's `<title>` says nothing its file's name does not ("report" in
    report.html, as pages exported by a program are titled) or is a program's placeholder
    ("Untitled"): like a file name, it is no heading over every chunk."""
    def key(text: str) -> str:
        return re.sub(r"[\W_]+", " ", text).strip().lower()

    return key(title) in (key(path.stem), "untitled", "untitled document", "document")


def _has_lxml() -> bool:
    try:
        import lxml  # noqa: F401
    except ImportError:
        return False
    return True


def _content(soup: Any) -> Any:
    """The element holding the page's content: `<main>`, its one `<article>`, or the body."""
    main = soup.find("main")
    if main is not None:
        return main
    articles = soup.find_all("article")
    if len(articles) == 1:
        return articles[0]
    return soup.body if soup.body is not None else soup


class _Walker:
    """Writes an element's content to `out` in reading order; inline text gathers in `run`
    until a block ends it. The tree is walked with a stack, not by recursion: a page may
    nest its elements deeper than Python's recursion allows."""

    def __init__(self, bs4: Any, out: MarkdownText) -> None:
        self.bs4, self.out = bs4, out
        self.run: list[str] = []

    def block(self, root: Any) -> None:
        stack: list[tuple[Any, bool]] = [(root, False)]  # (node, whether a block ends here)
        self.flush()
        while stack:
            node, ending = stack.pop()
            if ending:
                self.flush()
            elif isinstance(node, self.bs4.element.Tag):
                walked = self.tag(node)
                if walked is not None:
                    if walked:  # a block: its paragraph ends after its content
                        stack.append((node, True))
                    stack.extend((child, False) for child in reversed(node.contents))
            elif type(node) in (self.bs4.element.NavigableString, self.bs4.element.CData):
                self.run.append(re.sub(r"\s+", " ", str(node)))
        self.flush()

    def flush(self) -> None:
        text = "".join(self.run)
        self.run.clear()
        self.out.paragraph("\n".join(one_line(line) for line in text.split("\n")))

    def tag(self, node: Any) -> bool | None:
        """Write an element read whole (a heading, list, table, `<pre>`) and return None;
        else whether it is a block (its content is walked, a paragraph ending after it)."""
        name = node.name
        if re.fullmatch(r"h[1-6]", name):
            self.flush()
            self.out.heading(int(name[1]), text_of(node, self.bs4))
        elif name in ("ul", "ol"):
            self.flush()
            self.out.items(list_items(node, self.bs4), numbered=name == "ol")
        elif name == "table":
            self.flush()
            self.table(node)
        elif name == "pre":
            self.flush()
            self.out.paragraph(node.get_text())
        elif name == "br":
            self.run.append("\n")
        else:
            if name in BLOCKS:
                self.flush()
            return name in BLOCKS
        return None

    def table(self, table: Any) -> None:
        rows = [[text_of(cell, self.bs4) for cell in row.find_all(["th", "td"],
                                                                  recursive=False)
                 for _ in range(_span(cell))]
                for row in table.find_all("tr") if row.find_parent("table") is table]
        if max((len(row) for row in rows), default=0) <= 1:
            for row in rows:  # a layout table: its cells are paragraphs
                self.out.paragraph(" ".join(row))
        else:
            self.out.table([row for row in rows if any(row)])


def _span(cell: Any) -> int:
    """A cell's column span (the text is repeated so the columns stay in line), at most 50."""
    try:
        return min(max(int(cell.get("colspan", 1)), 1), 50)
    except (TypeError, ValueError):
        return 1


def text_of(element: Any, bs4: Any) -> str:
    """An element's text on one line, a space where blocks or line breaks part it."""
    parts: list[str] = []
    for node in element.descendants:
        if isinstance(node, bs4.element.Tag):
            if node.name in BLOCKS or node.name in ("br", "td", "th", "tr", "li"):
                parts.append(" ")
        elif type(node) in (bs4.element.NavigableString, bs4.element.CData):
            parts.append(str(node))
    return one_line("".join(parts))


def list_items(element: Any, bs4: Any, depth: int = 0) -> list[tuple[int, str]]:
    """A list's items (depth, text), the items of lists nested in them after each (below
    MAX_LIST_DEPTH; deeper ones are part of their item's text)."""
    found: list[tuple[int, str]] = []
    for item in element.find_all("li", recursive=False):
        inner = [n for n in item.find_all(["ul", "ol"]) if n.find_parent("li") is item
                 ] if depth < MAX_LIST_DEPTH else []
        for sub in inner:
            sub.extract()
        found.append((depth, text_of(item, bs4)))
        for sub in inner:
            found.extend(list_items(sub, bs4, depth + 1))
    return found
