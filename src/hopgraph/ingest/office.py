"""Word and PowerPoint files as Markdown (python-docx, python-pptx; the `office` extra).

- Word (.docx): the body's paragraphs and tables in order. A paragraph in a "Heading N"
  style is a heading of level N (one deeper when the document has a "Title", which is then
  level 1); a one-line paragraph all in bold is written in bold (`structure` reads it as a
  heading when it is short: a heading set by hand); one in a "List ..." style is a list
  item; a table is a pipe table, its first row the header. Page headers, footers and
  comments are left out, as a PDF's furniture is.
- PowerPoint (.pptx): each slide is a page, its title the heading over it ("Slide N" when
  it has none, so its text is not read under the slide before). Then its shapes from top to
  bottom, left to right: a placeholder's paragraphs as list items (indented by their level;
  a placeholder of one paragraph is prose), a text box's as a paragraph, a table as a pipe
  table, a group's shapes in turn; the speaker notes last, as a paragraph.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hopgraph.errors import InputError
from hopgraph.ingest.containers import check_office, office_library
from hopgraph.ingest.markdown import MarkdownText, ReadText, one_line

_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.I)


def read_docx(path: Path) -> ReadText:
    """A Word document's text as Markdown: headings by style, lists, tables."""
    check_office(path, "docx")
    docx = office_library("docx", "python-docx", path)
    try:
        document = docx.Document(str(path))
        blocks = list(document.iter_inner_content())
    except Exception as exc:  # a damaged part raises KeyError, XMLSyntaxError...
        raise InputError(f"cannot read Word file ({type(exc).__name__}: {exc})",
                         where=str(path)) from exc
    table = office_library("docx.table", "python-docx", path).Table
    # A paragraph's style is looked up through the styles part each time it is asked for:
    # once per paragraph, here.
    styles = ["" if isinstance(block, table) else _style(block) for block in blocks]
    titled = "title" in styles
    out = MarkdownText()
    items: list[tuple[int, str]] = []
    for block, style in zip(blocks, styles, strict=True):
        if style.startswith("list"):
            items.append((0, block.text))
            continue
        out.items(items)
        items = []
        if isinstance(block, table):
            out.table([[cell.text for cell in row.cells] for row in block.rows])
        elif style == "title":
            out.heading(1, block.text)
        elif heading := _HEADING_STYLE.match(style):
            out.heading(int(heading.group(1)) + titled, block.text)
        elif _bold(block):  # a heading set by hand: `structure` reads it as one if short
            out.paragraph(f"**{one_line(block.text)}**")
        else:
            out.paragraph(block.text)
    out.items(items)
    return out.read()


def _bold(paragraph: Any) -> bool:
    """Whether every run of a paragraph that holds text is bold (a heading written in a
    Normal paragraph, as many Word documents have them), the paragraph on one line."""
    runs = [run for run in paragraph.runs if run.text.strip()]
    return bool(runs) and "\n" not in paragraph.text and all(run.bold for run in runs)


def _style(paragraph: Any) -> str:
    """A paragraph's style name in lower case ("" for none)."""
    style = paragraph.style
    return (getattr(style, "name", None) or "").strip().lower()


def read_pptx(path: Path) -> ReadText:
    """A presentation's slides as Markdown, one page each."""
    check_office(path, "pptx")
    pptx = office_library("pptx", "python-pptx", path)
    out = MarkdownText()
    try:
        presentation = pptx.Presentation(str(path))
        for number, slide in enumerate(presentation.slides, start=1):
            out.page()
            _slide(slide, number, out)
    except Exception as exc:  # a damaged part raises KeyError, XMLSyntaxError...
        raise InputError(f"cannot read PowerPoint file ({type(exc).__name__}: {exc})",
                         where=str(path)) from exc
    return out.read()


def _slide(slide: Any, number: int, out: MarkdownText) -> None:
    title_shape = slide.shapes.title
    title = title_shape.text_frame.text if title_shape is not None else ""
    out.heading(1, title if title.strip() else f"Slide {number}")
    for shape in _in_order(slide.shapes):
        if title_shape is not None and shape.shape_id == title_shape.shape_id:
            continue
        if getattr(shape, "has_table", False):
            out.table([[cell.text for cell in row.cells] for row in shape.table.rows])
        elif getattr(shape, "has_text_frame", False):
            paragraphs = [(p.level, _paragraph_text(p)) for p in shape.text_frame.paragraphs]
            if shape.is_placeholder and sum(bool(text.strip()) for _, text in paragraphs) > 1:
                out.items(paragraphs)  # bullets; one paragraph alone is prose, not a list
            else:
                out.paragraph("\n".join(text for _, text in paragraphs))
    if slide.has_notes_slide:
        notes = slide.notes_slide.notes_text_frame
        if notes is not None and notes.text.strip():
            out.paragraph(f"Notes: {notes.text}")


def _paragraph_text(paragraph: Any) -> str:
    """A paragraph's text; a line break within it ("\\v" in python-pptx) is a space."""
    text: str = paragraph.text.replace("\v", " ")
    return text


def _in_order(shapes: Any) -> Iterator[Any]:
    """Shapes top to bottom, left to right, a group's shapes in its place."""
    for shape in sorted(shapes, key=lambda s: (s.top or 0, s.left or 0)):
        if hasattr(shape, "shapes"):  # a group
            yield from _in_order(shape.shapes)
        else:
            yield shape
