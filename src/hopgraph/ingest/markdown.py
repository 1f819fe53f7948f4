"""Text written in the shape the structure reads (`ingest.structure`): `#` headings, blocks
between blank lines, `- ` list items and Markdown pipe tables, and where each page starts.

Every reader of a structured format (HTML, Word, PowerPoint, spreadsheets, e-mail) writes
what it finds through `MarkdownText`, so the chunker sees one shape whatever the file was:
a heading becomes the section path of the chunks under it, and a table stays a table, cut
by rows with its header repeated.

A table is written as several tables of at most TABLE_PART_CHARS characters, each with the
header row and rule: the chunker reads a paragraph longer than its window as prose, so a
table that long would lose its header in every piece but the first.
"""

from __future__ import annotations

import datetime
import html
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import yaml

TABLE_PART_CHARS = 3_000  # below the chunker's window (documents.WINDOW_CHARS)
_SPACES = re.compile(r"[^\S\n]+")
_MARKUP_START = re.compile(r"^(\s*)(#|\||=+\s*$|-{3,}\s*$)")


@dataclass(frozen=True)
class ReadText:
    """What a reader made of a file: Markdown text, where each page (a slide, a sheet)
    starts in it, and the pages' labels (a sheet's name; empty when pages are numbered)."""

    text: str
    pages: tuple[int, ...] = ()
    labels: tuple[str, ...] = ()


def one_line(text: str) -> str:
    """`text` with every run of white space (line breaks too) made one space."""
    return " ".join(text.split())


def plain_lines(text: str) -> str:
    """`text` with spaces within a line collapsed, lines stripped and blank lines dropped; a
    line that Markdown would read as a heading, a table row or an underline is escaped."""
    lines = (_SPACES.sub(" ", line).strip() for line in text.splitlines())
    return "\n".join(_MARKUP_START.sub(r"\1\\\2", line) for line in lines if line)


# A table's delimiter row, with or without its outer pipes: "--- | :---:", "|---|---|"
_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?\s*$")
_PIPE = re.compile(r"(?<!\\)\|")  # a pipe that is no escaped character
FENCE = re.compile(r"^\s{0,3}(```|~~~)")  # a fenced code block opens or closes


def piped(text: str) -> str:
    """Markdown text with each pipe table's rows between outer pipes. GitHub's Markdown lets
    a table leave them out ("Supplier | Owner" over "--- | ---"); the readers of the
    structure and of a table's rows take a row to open and close with a pipe. A table is
    a header row, then a delimiter row with as many cells, then the rows that hold a pipe;
    nothing inside a fenced code block is touched."""
    lines = text.split("\n")
    fenced, row = False, 0
    while row < len(lines):
        if FENCE.match(lines[row]):
            fenced = not fenced
        elif not fenced and row + 1 < len(lines) and _DELIMITER.match(lines[row + 1]) \
                and _PIPE.search(lines[row]) and _cells(lines[row]) == _cells(lines[row + 1]):
            end = row + 2
            while end < len(lines) and lines[end].strip() and _PIPE.search(lines[end]):
                end += 1
            lines[row:end] = [_between_pipes(line) for line in lines[row:end]]
            row = end
            continue
        row += 1
    return "\n".join(lines)


def _cells(line: str) -> int:
    return len(_PIPE.split(line.strip().removeprefix("|").removesuffix("|")))


def _between_pipes(line: str) -> str:
    stripped = line.strip()
    opened = stripped if stripped.startswith("|") else f"| {stripped}"
    return opened if _PIPE.search(opened[-1:]) and not opened.endswith("\\|") \
        else f"{opened} |"


# Inline HTML that Markdown files carry (exports from Confluence or Notion, hand-written
# notes): line breaks, emphasis, links and spans, and comments
_BREAK = re.compile(r"<br\s*/?>", re.I)
_INLINE_TAG = re.compile(r"</?(?:a|abbr|b|big|cite|em|font|i|ins|kbd|mark|s|small|span|strong"
                         r"|sub|sup|u|del|img)(?:\s[^<>]*)?/?>", re.I)
_BLOCK_TAG = re.compile(r"</?(?:p|div)(?:\s[^<>]*)?/?>", re.I)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_ENTITY = re.compile(r"&(?:amp|lt|gt|quot|apos|nbsp|#\d{1,6}|#x[0-9a-f]{1,5});", re.I)


def without_inline_html(text: str) -> str:
    """Markdown text with its inline HTML read as text: a tag of emphasis, a link or a span
    dropped with its words kept, a line break a new line (in a table's row, "; ", which
    separates a cell's parts), a paragraph's or a division's tag a new line, a comment
    dropped, a character entity (`&amp;`, `&nbsp;`) the character. "Buyer<br>Evesham"
    in a cell is two things, "<b>Keller Polymers</b>" a name. Fenced code is left as it
    is."""
    if "<" not in text and "&" not in text:
        return text
    parts: list[list[str]] = [[]]  # text, fenced code, text... in turn, each as its lines
    for line in text.split("\n"):
        fence = FENCE.match(line) is not None
        opening = fence and len(parts) % 2 == 1
        if opening:
            parts.append([])
        parts[-1].append(line)
        if fence and not opening:
            parts.append([])  # the fence closed: text again
    return "\n".join(_html_as_text("\n".join(lines)) if number % 2 == 0 else "\n".join(lines)
                     for number, lines in enumerate(parts))


def _html_as_text(text: str) -> str:
    lines = _COMMENT.sub("", text).split("\n")
    for number, line in enumerate(lines):
        row = line.lstrip().startswith("|")
        line = _BREAK.sub("; " if row else "\n", line)
        line = _BLOCK_TAG.sub(" " if row else "\n", _INLINE_TAG.sub("", line))
        lines[number] = _ENTITY.sub(lambda found: html.unescape(found.group(0)), line)
    return "\n".join(lines).replace("\xa0", " ")


# YAML front matter: a block between "---" lines that opens the file (Jekyll, Hugo,
# Obsidian, a wiki's export), closed by "---" or "..."
_FRONT = re.compile(r"\A(\ufeff?)---[ \t]*\n(?P<body>.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
MAX_FRONT_CHARS = 20_000
Scalar = str | int | float


def front_matter(text: str) -> tuple[dict[str, Scalar], str]:
    """A Markdown file's YAML front matter as metadata, and the text with the front matter
    written as key–value lines ("owner: Priya Castell" becomes "Owner: Priya Castell"), which
    the structure and the extractor read as a report's header. Metadata keeps the values that
    are one string, number, true/false or date (ISO 8601, so a filter can compare it); a list
    of such values is a line of text, not metadata. Text without front matter, or whose
    front matter is not a YAML mapping, is returned as it is with no metadata."""
    block = _FRONT.match(text)
    if block is None or len(block.group("body")) > MAX_FRONT_CHARS:
        return {}, text
    try:
        data = yaml.safe_load(block.group("body"))
    except yaml.YAMLError:
        return {}, text
    if not isinstance(data, dict):
        return {}, text
    metadata: dict[str, Scalar] = {}
    lines: list[str] = []
    for key, value in data.items():
        found = [_scalar(v) for v in (value if isinstance(value, list) else [value])]
        written = [v for v in found if v is not None]
        if not isinstance(key, str) or not key.strip() or not written \
                or len(written) < len(found):
            continue  # a nested mapping, an empty list, a null: nothing to say
        if not isinstance(value, list):
            metadata[key.strip()] = written[0]
        label = key.strip().replace("_", " ")
        lines.append(f"{label[:1].upper()}{label[1:]}: {', '.join(str(v) for v in written)}")
    rest = text[block.end():]
    return metadata, (block.group(1) + "\n".join(lines) + "\n\n" + rest if lines else rest)


def _scalar(value: object) -> Scalar | None:
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str | int | float):
        return value.strip() if isinstance(value, str) else value
    return None


def cell(value: object) -> str:
    """A table cell's text: one line, its pipes escaped."""
    return one_line("" if value is None else str(value)).replace("|", "\\|")


class MarkdownText:
    """Blocks of Markdown appended in reading order, each page's start kept."""

    def __init__(self) -> None:
        self._blocks: list[str] = []
        self._size = 0  # characters written, blank lines between blocks included
        self._pages: list[int] = []
        self._labels: list[str] = []

    def page(self, label: str | None = None) -> None:
        """A new page (slide, sheet) starts with the next block; `label` names it."""
        self._pages.append(self._size + (2 if self._blocks else 0))
        if label is not None:
            self._labels.append(label)

    def heading(self, level: int, text: str) -> None:
        """A `#` heading (levels past six are six); an empty heading is left out."""
        text = one_line(text)
        if text:
            self._add(f"{'#' * min(max(level, 1), 6)} {text}")

    def paragraph(self, text: str) -> None:
        """A block of text; its line breaks are kept, blank lines dropped."""
        text = plain_lines(text)
        if text:
            self._add(text)

    def items(self, items: Iterable[tuple[int, str]], numbered: bool = False) -> None:
        """A list: (depth from 0, text) per item, nested items indented."""
        lines = []
        for number, (depth, text) in enumerate(items, start=1):
            text = one_line(text)
            if text:
                lines.append(f"{'  ' * depth}{f'{number}.' if numbered else '-'} {text}")
        if lines:
            self._add("\n".join(lines))

    def table(self, rows: Sequence[Sequence[object]]) -> None:
        """A pipe table whose first row is the header, in parts of at most TABLE_PART_CHARS
        characters that each repeat it. Rows are padded to the widest; empty rows dropped."""
        cells = [[cell(value) for value in row] for row in rows]
        cells = [row for row in cells if any(row)]
        if not cells:
            return
        width = max(len(row) for row in cells)
        lines = ["| " + " | ".join(row + [""] * (width - len(row))) + " |" for row in cells]
        top = f"{lines[0]}\n|{'---|' * width}"
        part: list[str] = []
        size = len(top)
        for line in lines[1:]:
            if part and size + len(line) + 1 > TABLE_PART_CHARS:
                self._add("\n".join([top, *part]))
                part, size = [], len(top)
            part.append(line)
            size += len(line) + 1
        self._add("\n".join([top, *part]))

    def read(self) -> ReadText:
        """The text written, with its pages and their labels."""
        text = "\n\n".join(self._blocks)
        return ReadText(text + "\n" if text else "", tuple(min(start, len(text))
                                                           for start in self._pages),
                        tuple(self._labels))

    @property
    def empty(self) -> bool:
        """Whether nothing has been written."""
        return not self._blocks

    def _add(self, block: str) -> None:
        self._size += len(block) + (2 if self._blocks else 0)
        self._blocks.append(block)
