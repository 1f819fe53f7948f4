"""A PDF read page by page into text the structure can read.

pypdf gives each page's lines in reading order; its text visitor also says where each piece
stands on the page and in which font, which is what tells a heading from a paragraph:

- Page furniture goes first: a line at the top or the bottom of a page that comes back on
  other pages (a running header, a footer "Confidential - page 2 of 3", the numbers of
  such a line allowed to change) and a page number standing alone; never a table's row.
- A table's cells stand where its columns start: lines set in pieces at the same places
  are written as a Markdown table (`pdf_tables`), one table also over a page break. A
  table drawn cell by cell comes in the order it was drawn; its rows are put back together
  by height first (`rows_rejoined`).
- A gap between two lines wider than the text's line spacing ends a paragraph; lines within
  one are joined where they were wrapped (`lines.wrapped`), also across a page break.
- A short line set larger than the text, or bold where the text is not, is a heading. Then
  the text is written as Markdown: `#` headings, one level per type size, and paragraphs
  between blank lines. A PDF without such lines is written as plain text for the
  plain-text rules (`structure`) to find its headings.

`PdfText.pages` holds where each page starts in the text, so a chunk knows its page.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from hopgraph.errors import InputError
from hopgraph.ingest.lines import (
    FULL_PRINTED_LINE,
    MAX_HEADING_CHARS,
    MAX_HEADING_WORDS,
    ends_sentence,
    heading_line,
    join_wrapped,
    width_of,
    wrapped,
)
from hopgraph.ingest.pdf_tables import pipe_table, rows_going_on, table_runs, table_text

EDGE_LINES = 2  # lines at each end of a page where headers and footers stand
FURNITURE_PAGES = 1 / 3  # a line at a page's edge on this share of the pages (and two)...
ROW_BACK_LINES = 6  # lines a table's cell may run on below its row before the next cell
SAME_HEIGHT = 1.0  # points within which two lines stand at one height
PARAGRAPH_GAP = 1.3  # a gap this many times the line spacing ends a paragraph
SHORT_LINE = 0.7  # with no heights known, a line this much shorter than the width ends one
LARGER = 0.9  # points above the text's size that make a line a heading
_BOLD = re.compile(r"bold|black|heavy|semibold|demi", re.I)
_PAGE_NUMBER = re.compile(r"^(?:(?:page|p\.|seite|pagina)\s*)?[-–—(\[]?\s*\d{1,4}\s*[-–—)\]]?"
                          r"(?:\s*(?:/|of|von|de|sur)\s*\d{1,4})?$", re.I)


@dataclass
class Line:
    """One line of a page: its text, the height of its baseline (points from the page's
    bottom; None when pypdf could not say) and its type (size in points, bold or not)."""

    text: str
    y: float | None = None
    size: float = 0.0
    bold: bool = False
    cells: tuple[tuple[float, str], ...] = ()  # (x, text) of each piece set apart on the line

    @property
    def style(self) -> tuple[float, bool]:
        """The line's type, sizes rounded to half a point."""
        return round(self.size * 2) / 2, self.bold


@dataclass
class PdfText:
    """A PDF's text, `kind` "md" (headings found by their type, written with `#`) or "pdf"
    (plain text), and the offset where each page starts."""

    text: str
    kind: str
    pages: tuple[int, ...] = ()


@dataclass
class _Block:
    page: int
    lines: list[Line] = field(default_factory=list)
    level: int = 0  # a heading's level; 0 for a paragraph


def read_pdf(path: Path) -> PdfText:
    """The PDF's text, page furniture dropped, paragraphs and headings found."""
    try:
        import pypdf
    except ImportError as exc:
        raise InputError("reading PDF needs pypdf", where=str(path),
                         fix="pip install pypdf") from exc
    try:
        pages = [page_lines(page) for page in pypdf.PdfReader(path).pages]
    except Exception as exc:  # pypdf raises many types on damaged files; all mean unreadable
        raise InputError(f"cannot read PDF ({type(exc).__name__}: {exc})",
                         where=str(path)) from exc
    return pdf_text(pages)


def page_lines(page: Any) -> list[Line]:
    """A pypdf page's lines, with their height and type when its text visitor tells them."""
    pieces: list[tuple[str, float, float, float, bool]] = []

    def visit(text: str, cm: list[float], tm: list[float], font: Any, size: float) -> None:
        if text:
            x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
            y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
            scale = abs(tm[2] * cm[1] + tm[3] * cm[3]) or 1.0
            name = str(font.get("/BaseFont", "")) if isinstance(font, dict) else ""
            pieces.append((text, x, y, float(size) * scale, bool(_BOLD.search(name))))

    text = page.extract_text(visitor_text=visit) or ""
    if "".join(piece[0] for piece in pieces) != text:  # the visitor missed something
        return [Line(line.strip()) for line in text.splitlines()]
    lines: list[Line] = []
    parts: list[str] = []
    cells: list[tuple[float, str]] = []
    styles: Counter[tuple[float, bool]] = Counter()
    y: float | None = None
    for piece, x, height, size, bold in pieces:
        for number, part in enumerate(piece.split("\n")):
            if number:
                lines.append(_line("".join(parts), y, styles, cells))
                parts, cells, styles, y = [], [], Counter(), None
            if part.strip():
                y = height if y is None else y
                styles[(size, bold)] += len(part.strip())
                # A piece set at a place of its own starts a cell; a line a piece goes on
                # to after a break has no known place.
                at = x if number == 0 else math.nan
                if not cells or at != cells[-1][0]:
                    cells.append((at, part))
                else:
                    cells[-1] = (at, cells[-1][1] + part)
            parts.append(part)
    lines.append(_line("".join(parts), y, styles, cells))
    return rows_rejoined(lines)


def rows_rejoined(lines: list[Line]) -> list[Line]:
    """The lines as they stand on the page where pypdf gives them in the order a table's
    cells were drawn: cell by cell, so a cell's second line comes before the next cell's
    first. A line that goes back up to the height of one of the ROW_BACK_LINES lines before
    it, every line in between standing lower and starting further right (a cell's own
    lines), joins that line, its pieces in the order of their places. (A page's second
    column, a block of text set beside another, keeps its order.)"""
    out: list[Line] = []
    for line in lines:
        target: int | None = None
        for back in range(1, min(ROW_BACK_LINES, len(out)) + 1):
            earlier = out[-back]
            if line.y is None or earlier.y is None or not line.text or not earlier.text:
                break
            if abs(earlier.y - line.y) <= SAME_HEIGHT:
                between = out[len(out) - back + 1:]
                if earlier.cells and all(
                        later.cells and later.cells[0][0] > earlier.cells[0][0] + SAME_HEIGHT
                        for later in between):
                    target = len(out) - back  # the lines in between are a cell's own
                break
            if earlier.y > line.y:  # a line above it in between: not one row
                break
        if target is None:
            out.append(line)
            continue
        row = out[target]
        cells = sorted(row.cells + line.cells,
                       key=lambda cell: math.inf if math.isnan(cell[0]) else cell[0])
        out[target] = Line(" ".join(text for _, text in cells), row.y, row.size, row.bold,
                           tuple(cells))
    return out


def _line(text: str, y: float | None, styles: Counter[tuple[float, bool]],
          cells: list[tuple[float, str]]) -> Line:
    size, bold = styles.most_common(1)[0][0] if styles else (0.0, False)
    return Line(" ".join(text.split()), y, size, bold,
                tuple((x, " ".join(cell.split())) for x, cell in cells))


def pdf_text(pages: list[list[Line]]) -> PdfText:
    """Pages of lines as text: furniture dropped, paragraphs found by the gaps between lines,
    wrapped lines joined, headings found by their type (then written as Markdown)."""
    pages = drop_furniture(pages)
    body = [line for page in pages for line in page if line.text]
    if not body:
        return PdfText("", "pdf")
    width = width_of(line.text for line in body)
    text_style = _text_style(body)
    levels = _heading_levels(body, text_style)
    blocks = _blocks(pages, _line_spacing(pages, text_style), levels, width)
    return _write(blocks, width, bool(levels), len(pages))


def text_pages(text: str) -> PdfText | None:
    """Plain text cut into pages by form feeds (what `pdftotext` and many exports write), its
    page furniture dropped as a PDF's is (`drop_furniture`) and where each page starts kept;
    None for text with one page."""
    pages = text.split("\f")
    if sum(bool(page.strip()) for page in pages) < 2:
        return None
    kept = drop_furniture([[Line(line) for line in page.split("\n")] for page in pages])
    texts = ["\n".join(line.text for line in page).strip("\n") for page in kept]
    starts, at = [], 0
    for page in texts:
        starts.append(at)
        at += len(page) + 2
    return PdfText("\n\n".join(texts), "txt", tuple(starts))


def drop_furniture(pages: list[list[Line]]) -> list[list[Line]]:
    """The pages without their running headers, footers and page numbers: a line among the
    first or last few of a page that stands at the edge of other pages too (its numbers
    allowed to differ), or a page number standing alone there. A table's row is never
    furniture: rows at the pages' edges ("Supplier 12  61  71"), a header row repeated on
    every page."""
    edges = [_edge_indices(page) - {n for start, end in table_runs([line.cells for line in page])
                                    for n in range(start, end)} for page in pages]
    seen: Counter[str] = Counter()
    for page, edge in zip(pages, edges, strict=True):
        seen.update({_furniture_key(page[i].text) for i in edge})
    repeated = {key for key, count in seen.items()
                if count >= 2 and count >= FURNITURE_PAGES * len(pages)}
    kept: list[list[Line]] = []
    for page, edge in zip(pages, edges, strict=True):
        kept.append([line for i, line in enumerate(page) if not line.text or i not in edge
                     or (_furniture_key(line.text) not in repeated
                         and not _PAGE_NUMBER.match(line.text))])
    return kept


def _edge_indices(page: list[Line]) -> set[int]:
    filled = [i for i, line in enumerate(page) if line.text]
    return set(filled[:EDGE_LINES] + filled[-EDGE_LINES:])


def _furniture_key(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.lower().split()))


def _text_style(lines: list[Line]) -> tuple[float, bool]:
    """The type most of the text is set in (counted in characters)."""
    weights: Counter[tuple[float, bool]] = Counter()
    for line in lines:
        weights[line.style] += len(line.text)
    return weights.most_common(1)[0][0]


def _heading_levels(lines: list[Line], text: tuple[float, bool]) -> dict[tuple[float, bool], int]:
    """Heading level by type: the types of short lines set larger than the text, or bold
    where it is not; the largest is level 1."""
    size, bold = text
    found = {line.style for line in lines if size and (
        line.size >= size + LARGER or (line.bold and not bold and line.size >= size - 0.5))
        and _heading_text(line.text)}
    ordered = sorted(found, key=lambda style: (-style[0], not style[1]))
    return {style: min(level, 6) for level, style in enumerate(ordered, start=1)}


def _heading_text(text: str) -> bool:
    stripped = text.rstrip()
    return (0 < len(stripped) <= MAX_HEADING_CHARS and len(stripped.split()) <= MAX_HEADING_WORDS
            and any(ch.isalpha() for ch in stripped) and not stripped.startswith("|")
            and not (stripped.endswith(".") and ends_sentence(stripped)))


def _line_spacing(pages: list[list[Line]], text: tuple[float, bool]) -> float | None:
    """The usual distance between two lines of text (None when heights are unknown)."""
    steps = [above.y - below.y for page in pages for above, below in pairwise(page)
             if above.y is not None and below.y is not None and above.text and below.text
             and above.style == below.style == text and above.y > below.y]
    return statistics.median(steps) if steps else None


def _blocks(pages: list[list[Line]], spacing: float | None,
            levels: dict[tuple[float, bool], int], width: int) -> list[_Block]:
    """Runs of lines with no gap between them and of one kind: a heading's lines (of one
    type) or a paragraph's. Where the heights are not known, a line well short of the width
    that the next does not go on from ends a paragraph (a heading, a list item, a last line)."""
    blocks: list[_Block] = []
    for number, page in enumerate(pages):
        block: _Block | None = None
        previous: Line | None = None
        rows = {n for start, end in table_runs([line.cells for line in page])
                for n in range(start, end)}
        for n, line in enumerate(page):
            if not line.text:
                block = None
                continue
            level = levels.get(line.style, 0) if _heading_text(line.text) and n not in rows \
                else 0
            if previous is None:
                gap = False
            elif spacing is None or previous.y is None or line.y is None:
                short = len(line.text) < SHORT_LINE * width
                gap = ((len(previous.text) < SHORT_LINE * width
                        and not wrapped(previous.text, line.text, width, FULL_PRINTED_LINE))
                       or (short and ends_sentence(previous.text) and heading_line(line.text)))
            else:
                gap = not 0 < previous.y - line.y <= PARAGRAPH_GAP * spacing
            if block is None or gap or level != block.level or (
                    level and line.style != block.lines[-1].style):
                block = _Block(number, level=level)
                blocks.append(block)
            block.lines.append(line)
            previous = line
    return blocks


def _write(blocks: list[_Block], width: int, markdown: bool, page_count: int) -> PdfText:
    """The blocks as text (Markdown headings when `markdown`), and where each page starts.
    A paragraph that goes on over a page break is one paragraph."""
    parts: list[str] = []
    starts: list[int | None] = [None] * page_count
    base = 0  # where the last part starts
    last: _Block | None = None
    for block in blocks:
        if block.level and markdown:
            text = "#" * block.level + " " + " ".join(line.text for line in block.lines)
        else:
            text = _body(block.lines, width)
        if (last is not None and not last.level and not block.level and last.page != block.page
                and not table_text(parts[-1].rsplit("\n", 1)[-1]) and not table_text(text)
                and wrapped(last.lines[-1].text, block.lines[0].text, width, FULL_PRINTED_LINE)):
            joined = join_wrapped(parts[-1], text)
            if starts[block.page] is None:
                starts[block.page] = base + len(joined) - len(text)
            parts[-1] = joined
            last = block
            continue
        rows = rows_going_on(parts[-1], text) if last is not None and not last.level \
            and not block.level and last.page != block.page else None
        if rows is not None:  # a table that goes on over a page break is one table
            if starts[block.page] is None:
                starts[block.page] = base + len(parts[-1]) + 1
            parts[-1] = f"{parts[-1]}\n{rows}"
            last = block
            continue
        base = base + len(parts[-1]) + 2 if parts else 0
        if starts[block.page] is None:
            starts[block.page] = base
        parts.append(text)
        last = block
    end = base + len(parts[-1]) if parts else 0
    return PdfText("\n\n".join(parts) + "\n", "md" if markdown else "pdf",
                   _fill_starts(starts, end))


def _fill_starts(starts: list[int | None], end: int) -> tuple[int, ...]:
    """Page starts with a page without text starting where the next page does."""
    filled: list[int] = []
    following = end
    for start in reversed(starts):
        following = start if start is not None else following
        filled.append(following)
    return tuple(reversed(filled))


def _paragraph(lines: list[str], width: int) -> str:
    text = lines[0]
    for previous, line in pairwise(lines):
        text = (join_wrapped(text, line) if wrapped(previous, line, width, FULL_PRINTED_LINE)
                else f"{text}\n{line}")
    return text


def _body(lines: list[Line], width: int) -> str:
    """A paragraph block's text: its tables (`pdf_tables.table_runs`) as Markdown tables,
    the lines between them as paragraphs; one blank line between the two kinds."""
    parts: list[str] = []
    done = 0
    cells = [line.cells for line in lines]
    for start, end in [*table_runs(cells), (len(lines), len(lines))]:
        if start > done:
            parts.append(_paragraph([line.text for line in lines[done:start]], width))
        if end > start:
            parts.append(pipe_table(cells[start:end], [line.bold for line in lines[start:end]]))
        done = end
    return "\n\n".join(parts)
