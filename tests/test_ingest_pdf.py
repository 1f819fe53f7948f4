"""A PDF read page by page: running header, footer and page numbers dropped, headings found
by their type, a paragraph cut by a page break read whole, and each chunk's page kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from hopgraph.ingest.documents import chunk_documents
from hopgraph.ingest.pdf import Line, drop_furniture
from hopgraph.ingest.reading import read_documents
from hopgraph.shape import wrap

fpdf = pytest.importorskip("fpdf", reason="fpdf2 is missing: pip install -e '.[dev]'")

HEADER = "Brightwater Instruments Ltd - Annual report 2024"
SALES = ("Sales rose by nine per cent to 48 million crowns. The Kestrel Probe sold best in "
         "Norway, where Aurora Fisheries ordered forty buoys, and the Tern Logger found its "
         "first customers in Scotland after a long trial with the Marine Institute in Oban. "
         "Halvard Optics delivered every sensor on time, and Norrcell shipped the battery "
         "packs from Umeå.")
PEOPLE = ("Maria Lind opened the Helsinki office in March. Jonas Aalto leads firmware "
          "development from Tampere.")
OUTLOOK = "In 2025 the company will open a service centre in Aberdeen."


class Report(fpdf.FPDF):  # type: ignore[misc]
    """A report as companies print them: a running header and "page N of M" in the footer."""

    def header(self) -> None:
        self.set_font("Helvetica", style="I", size=8)
        self.cell(0, 5, HEADER, new_x="LMARGIN", new_y="NEXT")
        self.ln(4)

    def footer(self) -> None:
        self.set_y(-13)
        self.set_font("Helvetica", style="I", size=8)
        self.cell(0, 5, f"Confidential - page {self.page_no()} of {{nb}}", align="C")


def text_lines(pdf: fpdf.FPDF, lines: list[str]) -> None:
    pdf.set_font("Helvetica", size=10)
    for line in lines:
        pdf.cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)


def heading(pdf: fpdf.FPDF, text: str, size: int = 11) -> None:
    pdf.set_font("Helvetica", style="B", size=size)
    pdf.cell(0, 7, text, new_x="LMARGIN", new_y="NEXT")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three pages; the sales paragraph goes on from page 1 to page 2."""
    path = tmp_path_factory.mktemp("pdf") / "report.pdf"
    pdf = Report()
    pdf.add_page()
    heading(pdf, "Annual Report 2024", 16)
    text_lines(pdf, ["Prepared by: Ingrid Solberg", "Date: 20 March 2025"])
    heading(pdf, "1. SALES")
    sales = wrap(SALES, 80)
    pdf.set_font("Helvetica", size=10)
    for line in sales[:3]:
        pdf.cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
    pdf.add_page()
    text_lines(pdf, sales[3:])
    heading(pdf, "2. PEOPLE")
    text_lines(pdf, wrap(PEOPLE, 80))
    pdf.add_page()
    heading(pdf, "3. OUTLOOK")
    text_lines(pdf, wrap(OUTLOOK, 80))
    pdf.output(str(path))
    return path


def test_page_furniture_is_dropped_and_headings_found_by_their_type(report: Path) -> None:
    (doc,) = read_documents([report])
    assert "Confidential" not in doc.text and "Annual report 2024" not in doc.text
    assert doc.kind == "md"  # the bold and larger lines are headings
    assert doc.text.startswith("# Annual Report 2024\n\nPrepared by: Ingrid Solberg\n"
                               "Date: 20 March 2025\n\n## 1. SALES\n\n")
    assert SALES in doc.text  # wrapped lines joined, also over the page break
    assert len(doc.pages) == 3 and doc.pages[0] == 0
    assert doc.page_at(doc.text.index("Umeå")) == 2 and doc.page_at(doc.text.index("Scotland")) == 1
    assert doc.page_at(doc.text.index("Aberdeen")) == 3


def test_chunks_know_their_page(report: Path) -> None:
    chunks = chunk_documents(read_documents([report]))
    pages = {chunk.context: chunk.page for chunk in chunks}
    assert pages == {"Annual Report 2024": 1, "Annual Report 2024 › 1. SALES": 1,
                     "Annual Report 2024 › 2. PEOPLE": 2, "Annual Report 2024 › 3. OUTLOOK": 3}
    people = next(chunk for chunk in chunks if chunk.page == 2)
    assert people.passage_metadata == {
        "source": people.doc, "file": people.doc, "type": "pdf", "chunk": people.index,
        "section": "Annual Report 2024 › 2. PEOPLE", "page": 2,
        "headings": ["Annual Report 2024", "2. PEOPLE"], "start": people.start,
        "end": people.end}


def test_repeated_lines_at_the_edges_of_pages_are_furniture() -> None:
    words = ["Alpha", "Bravo", "Charlie"]
    pages = [[Line("Acme Ltd - Minutes of the board"), Line(f"{word} opens the page."),
              Line(f"{word} goes on."), Line(f"{word} goes on still."),
              Line(f"{word} ends the page."), Line(f"- {number} -")]
             for number, word in enumerate(words, start=1)]
    pages[1].insert(2, Line("Acme Ltd - Minutes of the board"))  # away from the edges: kept
    kept = [[line.text for line in page] for page in drop_furniture(pages)]
    assert kept[0] == ["Alpha opens the page.", "Alpha goes on.", "Alpha goes on still.",
                       "Alpha ends the page."]
    assert kept[1][1] == "Acme Ltd - Minutes of the board" and len(kept[1]) == 5


def test_chunk_spans_point_into_the_pdf_text_and_its_pages(report: Path) -> None:
    (doc,) = read_documents([report])
    chunks = chunk_documents([doc])
    for chunk in chunks:
        span = doc.text[chunk.start:chunk.end]
        assert "".join(span.split()) == "".join(chunk.text.split())
        assert chunk.page == doc.page_at(chunk.start)
    sales = next(c for c in chunks if c.headings[-1:] == ("1. SALES",))
    assert doc.text[sales.start:sales.end] == SALES  # over the page break, one span
    assert (sales.page, doc.page_at(sales.end - 1)) == (1, 2)
    outlook = next(c for c in chunks if c.page == 3)
    assert doc.text[outlook.start:outlook.end] == OUTLOOK
    assert outlook.passage_metadata["headings"] == ["Annual Report 2024", "3. OUTLOOK"]
