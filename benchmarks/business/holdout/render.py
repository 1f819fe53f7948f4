"""Print the held-out set's PDF documents from their JSON sources.

Each source in pdf_sources/ is {"header": str, "footer": str, "items": [{"title", "text"}]}.
The PDF has the header on every page, the footer with its page number ("{page}" and
"{pages}" in the footer are replaced), each item's title in bold and its text hard-wrapped
at a fixed number of characters (lines break at spaces only, never inside a word or at a
hyphen). A "\\n" in a text starts a new line, a blank line starts a new paragraph.

The PDFs use a core font, which holds Latin-1 only: the few characters outside it (dashes,
curly quotes) are printed as their ASCII look-alikes. `hopgraph.budget.normalise` treats
both alike, so the gold paragraphs match either way.

Usage (fpdf2 must be installed):
  python benchmarks/business/holdout/render.py OUT_DIR            # the PDFs only
  python benchmarks/business/holdout/render.py OUT_DIR --with-docs  # and the .md/.txt files
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path

from fpdf import FPDF

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "pdf_sources"
DOCS = HERE / "docs"
WIDTH = 78  # characters a body line holds at most
FIXED_DATE = datetime(2025, 7, 1, tzinfo=timezone.utc)  # the same bytes on every run

_ASCII = {"\u2014": "-", "\u2013": "-", "\u2018": "'", "\u2019": "'", "\u201c": '"',
          "\u201d": '"', "\u2026": "...", "\u2022": "-", "\u00a0": " "}


def latin1(text: str) -> str:
    """The text with the characters a core font lacks replaced by ASCII look-alikes."""
    text = "".join(_ASCII.get(ch, ch) for ch in text)
    return text.encode("latin-1", "replace").decode("latin-1")


def wrap(line: str, width: int) -> list[str]:
    """One source line as printed lines; list items keep their indent on later lines."""
    if not line.strip():
        return [""]
    body = line.lstrip()
    indent = line[: len(line) - len(body)]
    hang = indent
    marker = body.split(" ", 1)[0]
    if marker in ("-", "*") or (marker[:-1].isdigit() and marker[-1] in ".)"):
        hang = indent + " " * (len(marker) + 1)
    return textwrap.wrap(line, width, subsequent_indent=hang, break_long_words=False,
                         break_on_hyphens=False) or [""]


class Document(FPDF):
    """A4 pages with a running header and a numbered footer."""

    def __init__(self, header: str, footer: str) -> None:
        super().__init__(format="A4")
        self.running_header = latin1(header)
        self.running_footer = latin1(footer)
        self.set_margins(22, 24, 22)
        self.set_auto_page_break(True, margin=22)
        self.set_creation_date(FIXED_DATE)

    def header(self) -> None:
        self.set_font("helvetica", "I", 8)
        self.set_text_color(90, 90, 90)
        self.set_y(10)
        self.cell(0, 5, self.running_header, align="L")
        self.line(22, 16, 188, 16)
        self.set_text_color(0, 0, 0)
        self.set_y(24)

    def footer(self) -> None:
        self.set_y(-15)
        self.set_font("helvetica", "", 8)
        self.set_text_color(90, 90, 90)
        text = self.running_footer.replace("{page}", str(self.page_no()))
        self.cell(0, 5, text.replace("{pages}", self.str_alias_nb_pages), align="C")
        self.set_text_color(0, 0, 0)


def render(source: Path, target: Path, width: int = WIDTH) -> int:
    """Print one JSON source to `target`; returns the number of pages."""
    doc = json.loads(source.read_text(encoding="utf-8"))
    pdf = Document(doc.get("header", ""), doc.get("footer", "page {page} of {pages}"))
    pdf.add_page()
    for item in doc["items"]:
        title = latin1(item.get("title", "")).strip()
        text = latin1(item.get("text", ""))
        if title:
            if pdf.get_y() > pdf.h - 45:  # keep a heading with the lines that follow it
                pdf.add_page()
            pdf.set_font("helvetica", "B", 11)
            for line in textwrap.wrap(title, width - 8, break_on_hyphens=False):
                pdf.cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(1)
        pdf.set_font("helvetica", "", 10)
        for source_line in text.split("\n"):
            for line in wrap(source_line, width):
                pdf.cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(4)
    target.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(target))
    return pdf.page_no()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to write the PDFs into")
    parser.add_argument("--sources", type=Path, default=SOURCES, help="folder of JSON sources")
    parser.add_argument("--width", type=int, default=WIDTH, help="characters per body line")
    parser.add_argument("--with-docs", action="store_true",
                        help="also copy the .md and .txt documents, making a complete folder")
    args = parser.parse_args(argv)
    sources = sorted(args.sources.glob("*.json"))
    if not sources:
        print(f"no JSON sources in {args.sources}", file=sys.stderr)
        return 1
    for source in sources:
        pages = render(source, args.out / f"{source.stem}.pdf", args.width)
        print(f"{source.stem}.pdf: {pages} pages")
    if args.with_docs:
        for doc in sorted(DOCS.iterdir()):
            if doc.suffix in (".md", ".txt"):
                shutil.copyfile(doc, args.out / doc.name)
        print(f"copied {sum(1 for d in DOCS.iterdir() if d.suffix in ('.md', '.txt'))} "
              "text documents")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
