"""A PDF's tables: cells set at their columns' places are read back as a Markdown table (a
header row when there is one), cut one row a chunk and related row by row, as a Markdown
file's table is; prose, even set in two columns, is not a table."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from hopgraph.ingest import fields
from hopgraph.ingest.documents import chunk_documents
from hopgraph.ingest.offline_extractor import extract
from hopgraph.ingest.pdf import Line, rows_rejoined
from hopgraph.ingest.pdf_tables import pipe_table, rows_going_on, table_runs
from hopgraph.ingest.reading import read_documents
from hopgraph.records import Triplet

fpdf = pytest.importorskip("fpdf", reason="fpdf2 is missing: pip install -e '.[dev]'")

SCORES = [["Supplier", "Q1 2025", "Q2 2025"], ["Vantor Films NV", "95", "96"],
          ["Dunmore Recycling Ltd", "-", "90"], ["Keller Polymers B.V.", "88", "71"]]
INTRO = "Scores are out of 100 and are worked out under QP-07 from deliveries and audits."


def numbered(count: int) -> list[list[str]]:
    """A header row and `count` rows of supplier scores."""
    return [["Supplier", "Q1 2025", "Q2 2025"],
            *[[f"Supplier {n}", str(60 + n), str(70 + n)] for n in range(1, count + 1)]]


def new_pdf() -> fpdf.FPDF:
    """A PDF with one page begun, in 10-point Helvetica."""
    pdf = fpdf.FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    return pdf


def read_back(pdf: fpdf.FPDF, path: Path) -> str:
    """The text the product reads from `pdf` written to `path`."""
    pdf.output(str(path))
    [document] = read_documents([path])
    return document.text


def drawn_table(rows: Sequence[Sequence[str]], path: Path, **options: Any) -> str:
    """Rows as fpdf2 draws a table (cell by cell, `options` to `FPDF.table`), read back."""
    pdf = new_pdf()
    with pdf.table(**options) as drawn:
        for cells in rows:
            row = drawn.row()
            for cell in cells:
                row.cell(cell)
    return read_back(pdf, path)


def table(pdf: fpdf.FPDF, rows: list[list[str]], bold_header: bool = False) -> None:
    """Rows printed as a word processor prints a table: each cell at its column's place."""
    widths = [max(pdf.get_string_width(row[i]) for row in rows) + 8 for i in range(len(rows[0]))]
    for number, row in enumerate(rows):
        pdf.set_font("Helvetica", style="B" if bold_header and number == 0 else "", size=10)
        x = pdf.l_margin
        for width, cell in zip(widths, row, strict=True):
            pdf.set_x(x)
            pdf.cell(width, 5, cell)
            x += width
        pdf.ln(5)
    pdf.set_font("Helvetica", size=10)
    pdf.ln(3)


def write(path: Path, rows: list[list[str]], bold_header: bool = False) -> Path:
    pdf = new_pdf()
    pdf.set_font("Helvetica", style="B", size=14)
    pdf.cell(0, 8, "Quarterly quality report", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=10)
    pdf.cell(0, 5, INTRO, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)
    table(pdf, rows, bold_header)
    pdf.cell(0, 5, "Keller Polymers fell below 75 after incident IR-2330.",
             new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


@pytest.mark.parametrize("bold_header", [False, True])
def test_a_pdf_table_is_read_as_a_markdown_table(tmp_path: Path, bold_header: bool) -> None:
    [document] = read_documents([write(tmp_path / "scores.pdf", SCORES, bold_header)])
    assert ("| Supplier | Q1 2025 | Q2 2025 |\n|---|---|---|\n"
            "| Vantor Films NV | 95 | 96 |\n| Dunmore Recycling Ltd | - | 90 |\n"
            "| Keller Polymers B.V. | 88 | 71 |") in document.text
    assert INTRO in document.text  # the prose around it stays prose
    assert "# Supplier" not in document.text  # a bold header row is no heading


def test_a_pdf_tables_rows_are_chunked_and_related_one_by_one(tmp_path: Path) -> None:
    rows = [*SCORES, *numbered(8)[1:]]
    documents = read_documents([write(tmp_path / "scores.pdf", rows)])
    chunks = [c.text for c in chunk_documents(documents)]
    keller = [text for text in chunks if "Keller Polymers B.V. | 88 | 71" in text]
    assert len(keller) == 1 and keller[0].count("Supplier 3") == 0  # a row, not the table
    assert "| Supplier | Q1 2025 | Q2 2025 |" in keller[0]  # under the header row
    triplets = extract(None, keller[0])
    assert Triplet("Keller Polymers", "q2 2025", "71") in triplets


def test_a_table_without_a_header_row_relates_its_cells_as_has(tmp_path: Path) -> None:
    rows = [["IR-2319", "minor", "closed", "DP-150 cartons with a wrong batch code"],
            ["IR-2330", "critical", "open", "Black specks in VT-220 trays, lot KP-5562"]]
    [document] = read_documents([write(tmp_path / "incidents.pdf", rows)])
    assert "|  |  |  |  |\n|---|---|---|---|\n| IR-2319 | minor | closed |" in document.text
    assert Triplet("IR-2330", "has", "KP-5562") in extract(None, document.text)


def test_two_columns_of_prose_are_no_table() -> None:
    left, right = 20.0, 110.0
    page = [((left, a), (right, b)) for a, b in [
        ("The plant at Coalville runs four lines", "and the Evesham depot ships the"),
        ("of thermoformed trays for the dairies", "trays to the supermarkets in the"),
        ("of the north and the Midlands all year", "south, three times a week, by road")]]
    assert table_runs(page) == []
    # ... while short cells at the same places are
    rows = [((left, a), (right, b)) for a, b in [("Bramley's Fresh Kitchen", "3"),
                                                 ("Hollis and Grant Foods", "1")]]
    assert table_runs(rows) == [(0, 2)]
    assert pipe_table(rows, [False, False]).splitlines()[2] == "| Bramley's Fresh Kitchen | 3 |"


def test_a_header_is_found_over_a_column_of_numbers() -> None:
    assert fields.has_header([["Supplier", "Q1 2025", "Q2 2025"], ["Vantor Films", "95", "-"]])
    assert fields.has_header([["Job", "Site"], ["JB-40512", "S-CAR-003"]])
    assert not fields.has_header([["IR-2319", "minor"], ["IR-2322", "major"]])
    assert not fields.has_header([["Bramley's Fresh Kitchen", "3"], ["Hollis and Grant", "1"]])
    # in plain text laid out with spaces too
    triplets = extract(None, "Supplier          Q1 2025   Q2 2025\n"
                             "Vantor Films NV   95        96\n"
                             "Keller Polymers   88        71\n")
    assert Triplet("Keller Polymers", "q2 2025", "71") in triplets


def test_a_table_going_on_over_a_page_break_is_one_table(tmp_path: Path) -> None:
    pdf = new_pdf()
    table(pdf, numbered(59))
    pdf.output(str(tmp_path / "long.pdf"))
    [document] = read_documents([tmp_path / "long.pdf"])
    assert document.text.count("| Supplier | Q1 2025 | Q2 2025 |") == 1
    assert "| Supplier 59 | 119 | 129 |" in document.text
    assert "|  |  |  |" not in document.text  # the rows on page 2 are under the same header
    assert len(document.pages) == 2
    assert document.text[document.pages[1]:].startswith("| Supplier ")  # page 2: its first row


def test_a_cell_wrapped_within_its_column_stays_in_its_row(tmp_path: Path) -> None:
    pdf = new_pdf()
    rows = [("Part", "Supplier", "Note"), ("HP-310", "Orrin & Tate", "fits the KX-4"),
            ("HP-410", "Orrin & Tate", "fits the KX-4 Pro only,"), ("", "", "not the KX-4"),
            ("GS-207", "Pelham's Rubber Works", "silicone")]
    for part, supplier, note in rows:
        for x, cell in ((10, part), (40, supplier), (95, note)):
            if cell:
                pdf.set_x(x)
                pdf.cell(50, 5, cell)
        pdf.ln(5)
    assert ("| Part | Supplier | Note |\n|---|---|---|\n| HP-310 | Orrin & Tate | fits the KX-4 |\n"
            "| HP-410 | Orrin & Tate | fits the KX-4 Pro only, not the KX-4 |\n"
            "| GS-207 | Pelham's Rubber Works | silicone |") in read_back(pdf, tmp_path / "w.pdf")


def test_prose_set_word_by_word_is_no_table() -> None:
    # Some PDFs place every word on its own: lines of prose then line up at a few places
    # by chance (here "the" and "from" start together on both lines), never in columns.
    def words(text: str, widths: list[float]) -> tuple[tuple[float, str], ...]:
        starts = [20.0 + sum(widths[:n]) for n in range(len(widths))]
        return tuple(zip(starts, text.split(), strict=True))

    first = words("Keller Polymers ships the flake from Rotterdam at dawn",
                  [33, 43, 28, 18, 28, 25, 45, 13, 25])
    second = words("Dunmore Recycling sent the lots from Dundalk in June",
                   [38, 48, 18, 18, 23, 25, 38, 13, 20])
    shared = {x for x, _ in first[1:]} & {x for x, _ in second[1:]}
    assert len(shared) >= 2  # aligned by the rule for two lines...
    assert table_runs([first, second]) == []  # ...but most words stand in no column


def test_a_table_drawn_cell_by_cell_is_read_row_by_row(tmp_path: Path) -> None:
    # fpdf2's tables, like a word processor's, draw a row cell by cell: pypdf gives a cell's
    # second line before the next cell's first. Cells set at the top of their row (the
    # usual setting) are read back into their rows.
    rows = [("Supplier", "Supplies", "Contract"),
            ("Keller Polymers B.V.", "Recycled PET flake and polypropylene granulate for the "
             "thermoforming lines", "MSA-2023-014"),
            ("Orrin & Tate Engineering", "Heating plates", "MSA-2024-002")]
    assert ("| Supplier | Supplies | Contract |\n|---|---|---|\n| Keller Polymers B.V. | "
            "Recycled PET flake and polypropylene granulate for the thermoforming lines | "
            "MSA-2023-014 |\n| Orrin & Tate Engineering | Heating plates | MSA-2024-002 |"
            ) in drawn_table(rows, tmp_path / "drawn.pdf", v_align="TOP")


def test_keys_or_list_markers_at_a_tab_stop_are_no_table() -> None:
    keys = [((20.0, key), (90.0, value)) for key, value in [
        ("Supplier:", "Dunmore Recycling Ltd"), ("Site:", "Dundalk"), ("Auditor:", "Priya Raman")]]
    bullets = [((20.0, "●"), (30.0, item)) for item in ["Black specks", "Wrong batch code"]]
    assert table_runs(keys) == [] and table_runs(bullets) == []


def test_a_block_set_beside_another_keeps_its_order() -> None:
    # A letterhead: the address on the left, the reference lines on the right at the same
    # heights, drawn after it. They are not one table's rows.
    left = [Line(text, 700.0 - 12 * n, 10.0, False, ((20.0, text),))
            for n, text in enumerate(["Dunmore Recycling Ltd", "Unit 4 Harbour Road", "Dundalk"])]
    right = [Line(text, 700.0 - 12 * n, 10.0, False, ((300.0, text),))
             for n, text in enumerate(["Our ref: DR-2025-114", "Date: 14 July 2025",
                                       "Contact: Priya Raman"])]
    assert [line.text for line in rows_rejoined(left + right)] == [
        line.text for line in left + right]


def test_a_header_row_repeated_on_every_page_is_no_furniture(tmp_path: Path) -> None:
    text = drawn_table(numbered(119), tmp_path / "repeated.pdf", repeat_headings=1)
    assert text.count("| Supplier | Q1 2025 | Q2 2025 |") == 1  # one table, its header
    assert "| Supplier 119 | 179 | 189 |" in text


def test_a_page_of_rows_opening_with_a_row_of_dashes_goes_on_with_the_table() -> None:
    before = "| Supplier | Q1 2025 | Q2 2025 |\n|---|---|---|\n| Vantor Films | 95 | 96 |"
    after = "| Dunmore Recycling | - | - |\n|---|---|---|\n| Orrin & Tate | 70 | 72 |"
    assert fields.has_header([["Dunmore Recycling", "-", "-"], ["Orrin & Tate", "70", "72"]]) \
        is False
    assert rows_going_on(before, after) == (
        "| Dunmore Recycling | - | - |\n| Orrin & Tate | 70 | 72 |")
