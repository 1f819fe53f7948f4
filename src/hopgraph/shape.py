"""A benchmark corpus shaped as the files users bring: its paragraphs, in corpus order (the
corpora group each question's paragraphs, so this is topical order), `PER_FILE` to a file,
the formats taking turns: Markdown with a `## Title` per paragraph, plain text with the title
on its own line, and PDF with a title line and the text wrapped into lines at a fixed width,
long words hyphenated at a line end, as a word processor prints it. On request also Word
(a Heading 2 per title), HTML (an `<h2>` per title in a `<main>`, beside a `<nav>` menu the
reader must drop) and PowerPoint (a slide per paragraph, its title the slide's).

A company report can be printed too (`write_report_pdf`): several pages, each with a running
header and a footer "Confidential - page N of M", its text wrapped the same way and its
tables set cell by cell, each cell where its column starts.

PDFs are written with fpdf2 (`pip install fpdf2`; in the dev extras) in a core font, which
holds Latin-1 only: characters outside it are folded (`budget.fold`: accents dropped, what
is left outside Latin-1 made a space); the budget metric folds every text it compares.
Word and PowerPoint files are written with python-docx and python-pptx (the office extra).
"""

from __future__ import annotations

import html
import importlib
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hopgraph.budget import fold
from hopgraph.errors import UsageError, install_extra

try:
    from fpdf import FPDF
except ImportError:  # fpdf2 is a dev extra; the writers below say so when it is missing
    FPDF = None  # type: ignore[assignment,misc]  # a class or None: mypy allows no such import

FORMATS = ("md", "txt", "pdf", "docx", "html", "pptx")
DEFAULT_FORMATS = ("md", "txt", "pdf")
PER_FILE = 8
LINE_CHARS = 90
HYPHENATE_FROM = 10  # letters: a word this long that would overflow is hyphenated


def write_corpus(items: Sequence[dict[str, str]], folder: Path, name: str,
                 formats: Sequence[str] = DEFAULT_FORMATS, per_file: int = PER_FILE
                 ) -> list[Path]:
    """Write `{"title", "text"}` items into `folder` as `<name>-0000.<format>` files."""
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown or not formats:
        raise UsageError(f"unknown file format {unknown[0] if unknown else '(none)'!r}",
                         fix=f"formats are {', '.join(FORMATS)}")
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for number, start in enumerate(range(0, len(items), per_file)):
        group = items[start:start + per_file]
        kind = formats[number % len(formats)]
        path = folder / f"{name}-{number:04d}.{kind}"
        if kind == "md":
            path.write_text("".join(f"## {p['title']}\n\n{p['text']}\n\n" for p in group),
                            encoding="utf-8")
        elif kind == "txt":
            path.write_text("".join(f"{p['title']}\n{p['text']}\n\n" for p in group),
                            encoding="utf-8")
        elif kind == "pdf":
            write_pdf(path, group)
        else:
            WRITERS[kind](path, group)
        written.append(path)
    return written


def write_docx(path: Path, group: Sequence[dict[str, str]]) -> None:
    """A Word file of `{"title", "text"}` items: a Heading 2 per title, a paragraph of text."""
    docx = _library("docx", "python-docx")
    document = docx.Document()
    for item in group:
        if item.get("title"):
            document.add_heading(item["title"], level=2)
        document.add_paragraph(item["text"])
    document.save(str(path))


def write_html(path: Path, group: Sequence[dict[str, str]]) -> None:
    """An HTML page of `{"title", "text"}` items: an `<h2>` per title and a `<p>` of text in
    `<main>`, after a `<nav>` menu of the titles (which a reader of the content drops)."""
    menu = "".join(f"<li><a href='#{n}'>{html.escape(item.get('title', ''))}</a></li>"
                   for n, item in enumerate(group))
    body = "".join((f"<h2 id='{n}'>{html.escape(item['title'])}</h2>\n"
                    if item.get("title") else "") + f"<p>{html.escape(item['text'])}</p>\n"
                   for n, item in enumerate(group))
    path.write_text(f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{path.stem}"
                    f"</title></head>\n<body><nav><ul>{menu}</ul></nav>\n<main>\n{body}"
                    "</main></body></html>\n", encoding="utf-8")


def write_pptx(path: Path, group: Sequence[dict[str, str]]) -> None:
    """A PowerPoint file of `{"title", "text"}` items: a slide each ("Title and Content"),
    the title the slide's, the text its body."""
    pptx = _library("pptx", "python-pptx")
    presentation = pptx.Presentation()
    layout = presentation.slide_layouts[1]
    for item in group:
        slide = presentation.slides.add_slide(layout)
        slide.shapes.title.text = item.get("title", "")
        slide.placeholders[1].text_frame.text = item["text"]
    presentation.save(str(path))


WRITERS = {"docx": write_docx, "html": write_html, "pptx": write_pptx}


def _library(module: str, package: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise UsageError(f"writing .{module} files needs {package}",
                         fix=install_extra("office")) from exc


def wrap(text: str, width: int = LINE_CHARS) -> list[str]:
    """Lines of at most `width` characters; a long word that would overflow is hyphenated
    ("manu-" / "facturing") when both halves keep at least three letters."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line = f"{line} {word}"
        else:
            room = width - len(line) - 2  # a space and the hyphen
            if len(word) >= HYPHENATE_FROM and word.isalpha() and room >= 3 \
                    and len(word) - room >= 3:
                lines.append(f"{line} {word[:room]}-")
                line = word[room:]
            else:
                lines.append(line)
                line = word
    if line:
        lines.append(line)
    return lines


def write_pdf(path: Path, group: Sequence[dict[str, str]], width: int = LINE_CHARS) -> None:
    """A PDF of `{"title", "text"}` items: each title (if any) on a bold line, then its text
    wrapped at `width` characters."""
    if FPDF is None:
        raise UsageError("writing PDF files needs fpdf2", fix="pip install fpdf2")
    pdf = FPDF()
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    for item in group:
        if item.get("title"):
            pdf.set_font("Helvetica", style="B", size=11)
            pdf.cell(0, 6, _latin1(item["title"]), new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=9)
        for line in wrap(_latin1(item["text"]), width):
            pdf.cell(0, 4.5, line, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(3)
    pdf.output(str(path))


def _latin1(text: str) -> str:
    """What a core PDF font can print: Latin-1 as it is, anything else folded."""
    return " ".join("".join(ch if ord(ch) < 256 else fold(ch) for ch in
                            unicodedata.normalize("NFC", text)).split())


REPORT_LINE_CHARS = 84
BLOCKS = ("title", "heading", "text", "lines", "page_break")


def write_report_pdf(path: Path, source: dict[str, Any]) -> int:
    """A report printed as a company prints one; returns its number of pages.

    `source` is `{"header": str, "footer": str, "width"?: int, "blocks": [...]}`; each block
    is one of `{"title": str}` (large, bold), `{"heading": str}` (bold), `{"text": str}` (a
    paragraph wrapped at `width` characters), `{"lines": [str, ...]}` (one line each, as
    key-value lines and table rows are printed; a line too long is wrapped) and
    `{"page_break": true}`. Every page starts with the header line and ends with
    "<footer> - page N of M".

    A "lines" block whose lines are cut into two cells or more by runs of two spaces is a
    table: each cell is printed where its column starts, as a word processor prints a table,
    not padded with spaces."""
    if FPDF is None:
        raise UsageError("writing PDF files needs fpdf2", fix="pip install fpdf2")
    width = int(source.get("width", REPORT_LINE_CHARS))
    pdf = _ReportPDF(_latin1(source["header"]), _latin1(source["footer"]))
    pdf.set_auto_page_break(auto=True, margin=18)
    pdf.add_page()
    for number, block in enumerate(source["blocks"]):
        kind = next((key for key in BLOCKS if key in block), None)
        if kind is None:
            raise UsageError(f"block {number} of {path.name} has none of {', '.join(BLOCKS)}")
        if kind == "page_break":
            pdf.add_page()
        elif kind in ("title", "heading"):
            pdf.set_font("Helvetica", style="B", size=14 if kind == "title" else 11)
            pdf.cell(0, 8 if kind == "title" else 6, _latin1(block[kind]),
                     new_x="LMARGIN", new_y="NEXT")
            pdf.ln(1)
        else:
            pdf.set_font("Helvetica", size=10)
            texts = [block["text"]] if kind == "text" else block["lines"]
            rows = table_cells(texts) if kind == "lines" else None
            if rows is not None:
                _print_table(pdf, rows)
            else:
                for text in texts:
                    for line in wrap(_latin1(text), width):
                        pdf.cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
    pdf.output(str(path))
    pages: int = pdf.page_no()
    return pages


TABLE_GAP = 4.0  # millimetres between two columns of a printed table


def table_cells(lines: Sequence[str]) -> list[list[str]] | None:
    """Lines laid out in columns of spaces as rows of cells, or None when they are not a
    table: every line cut into at least two cells by runs of two spaces, and more than one."""
    rows = [[cell for cell in re.split(r"\s{2,}", line.strip()) if cell] for line in lines]
    if len(rows) < 2 or any(len(row) < 2 for row in rows):
        return None
    return rows


def _print_table(pdf: Any, rows: list[list[str]]) -> None:
    """Rows of cells, each cell at its column's start: a column is as wide as its widest cell
    and TABLE_GAP; the type is made smaller (to 7 points) until the widest row fits."""
    cells = [[_latin1(cell) for cell in row] for row in rows]
    columns = max(len(row) for row in cells)
    size = 10.0
    while True:
        pdf.set_font("Helvetica", size=size)
        widths = [max((pdf.get_string_width(row[i]) for row in cells if i < len(row)),
                      default=0.0) + TABLE_GAP for i in range(columns)]
        if sum(widths) - TABLE_GAP <= pdf.epw or size <= 7:
            break
        size -= 0.5
    for row in cells:
        x = pdf.l_margin
        for width, cell in zip(widths, row, strict=False):
            pdf.set_x(x)
            pdf.cell(width, 5, cell)
            x += width
        pdf.ln(5)
    pdf.set_font("Helvetica", size=10)


class _ReportPDF(FPDF if FPDF is not None else object):  # type: ignore[misc]
    """An FPDF whose pages carry a running header and a numbered footer."""

    def __init__(self, header_text: str, footer_text: str) -> None:
        super().__init__()
        self.header_text = header_text
        self.footer_text = footer_text

    def header(self) -> None:
        self.set_font("Helvetica", style="I", size=8)
        self.cell(0, 5, self.header_text, new_x="LMARGIN", new_y="NEXT")
        self.line(self.l_margin, self.get_y(), self.w - self.r_margin, self.get_y())
        self.ln(4)

    def footer(self) -> None:
        self.set_y(-13)
        self.set_font("Helvetica", style="I", size=8)
        self.cell(0, 5, f"{self.footer_text} - page {self.page_no()} of {{nb}}", align="C")
