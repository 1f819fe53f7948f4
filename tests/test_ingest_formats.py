"""The files users have: Word, PowerPoint, Excel, CSV, HTML and .eml, each built here with
the real library (or written as text), read into the Markdown the structure reads, and a
bad file of each kind named as a problem while the rest of its folder is read."""

from __future__ import annotations

import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from hopgraph.api import GraphRAG
from hopgraph.ingest import sheets
from hopgraph.ingest.documents import Chunk, Document, chunk_documents, read_documents
from hopgraph.ingest.markdown import TABLE_PART_CHARS, MarkdownText
from hopgraph.ingest.reading import kind_of
from hopgraph.records import Problem
from hopgraph.shape import write_corpus

docx = pytest.importorskip("docx", reason="python-docx is missing: pip install -e '.[dev]'")
pptx = pytest.importorskip("pptx", reason="python-pptx is missing: pip install -e '.[dev]'")
openpyxl = pytest.importorskip("openpyxl", reason="openpyxl is missing: pip install -e '.[dev]'")
pytest.importorskip("bs4", reason="beautifulsoup4 is missing: pip install -e '.[dev]'")

OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504

PAGE = """<!DOCTYPE html>
<html><head><title>Brightwater Instruments</title>
<script>var tracking = "Secret Tracker";</script><style>p { color: red }</style></head>
<body><header><a href="/">Home page banner</a></header>
<nav><ul><li>Menu Careers</li><li>Menu Contact</li></ul></nav>
<main><h1>About Brightwater</h1>
<p>Brightwater makes <b>ocean probes</b> in Bergen.<br>It was founded in 1999.</p>
<h2>Products</h2>
<ul><li>Kestrel Probe<ul><li>for deep water</li></ul></li><li>Tern Logger</li></ul>
<table><thead><tr><th>Product</th><th>Price</th></tr></thead>
<tbody><tr><td>Kestrel Probe</td><td>1 200 | 1 400 NOK</td></tr></tbody></table>
<form><input name="q"><button>Search the site</button></form>
</main><aside>Related: Seafood Weekly</aside><footer>Copyright Brightwater</footer>
</body></html>
"""

MAIL = """From: Jess Carver <jess@ashby.example>
To: Priya Castell <priya@keller.example>
Cc: Lars Moen <lars@ashby.example>
Subject: Resin delivery for Evesham
Date: Thu, 27 Feb 2025 16:42:10 +0000
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="part"

--part
Content-Type: text/plain; charset=utf-8

Keller Polymers will deliver the resin to Evesham on Monday.
--part
Content-Type: application/pdf
Content-Disposition: attachment; filename="order-2231.pdf"

JVBERi0xLjQK
--part--
"""


def write_docx(path: Path) -> Path:
    document = docx.Document()
    document.add_paragraph("Supplier review 2025", style="Title")
    document.add_heading("Keller Polymers", 1)
    document.add_paragraph("Keller Polymers supplies resin to the Evesham plant.")
    document.add_heading("Contacts", 2)
    document.add_paragraph("Priya Castell, account owner", style="List Bullet")
    document.add_paragraph("Lars Moen, buyer", style="List Bullet")
    table = document.add_table(rows=3, cols=2)
    for r, row in enumerate([("Supplier", "Owner"), ("Keller Polymers", "Priya Castell"),
                             ("Norrcell", "Jonas Aalto")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.save(str(path))
    return path


def write_pptx(path: Path) -> Path:
    from pptx.util import Inches

    deck = pptx.Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = "Kestrel Probe"
    body = first.placeholders[1].text_frame
    body.text = "Sold best in Norway"
    item = body.add_paragraph()
    item.text, item.level = "Aurora Fisheries ordered forty buoys", 1
    first.notes_slide.notes_text_frame.text = "Mention the trial in Oban."
    second = deck.slides.add_slide(deck.slide_layouts[5])
    second.shapes.title.text = "Suppliers"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(6), Inches(1)).table
    for (r, c), value in {(0, 0): "Supplier", (0, 1): "Part", (1, 0): "Halvard Optics",
                          (1, 1): "sensors"}.items():
        table.cell(r, c).text = value
    third = deck.slides.add_slide(deck.slide_layouts[6])  # blank: no title
    box = third.shapes.add_textbox(Inches(1), Inches(1), Inches(6), Inches(1))
    box.text_frame.text = "Norrcell ships the battery packs from Umeå."
    deck.save(str(path))
    return path


def write_xlsx(path: Path) -> Path:
    book = openpyxl.Workbook()
    orders = book.active
    orders.title = "Orders"
    orders["B3"], orders["C3"] = "Customer", "Units"  # the data starts at B3
    orders["B4"], orders["C4"] = "Aurora Fisheries", 40
    orders["B5"], orders["C5"] = "Marine Institute", 2.0
    staff = book.create_sheet("Staff")
    staff.append(["Name", "Office"])
    staff.append(["Maria Lind", "Helsinki"])
    book.save(str(path))
    return path


def contexts(chunks: list[Chunk], name: str) -> list[str]:
    return [c.context for c in chunks if Path(c.doc).name == name]


def read_one(path: Path) -> tuple[Document, list[Chunk]]:
    problems: list[Problem] = []
    (doc,) = read_documents([path], problems)
    assert problems == []
    return doc, chunk_documents([doc])


def test_word_headings_are_the_section_path_and_tables_stay_tables(tmp_path: Path) -> None:
    doc, chunks = read_one(write_docx(tmp_path / "review.docx"))
    assert doc.kind == "md" and doc.pages == ()
    assert doc.text.startswith("# Supplier review 2025\n\n## Keller Polymers\n\n")
    assert "- Priya Castell, account owner\n- Lars Moen, buyer" in doc.text
    contacts = "Supplier review 2025 › Keller Polymers › Contacts"
    assert [c.context for c in chunks] == ["Supplier review 2025 › Keller Polymers",
                                           contacts, contacts, contacts]
    # The list is a chunk; the table's rows are one a chunk, each under the header row.
    assert chunks[1].text == "- Priya Castell, account owner\n- Lars Moen, buyer"
    assert [c.text for c in chunks[2:]] == [
        "| Supplier | Owner |\n|---|---|\n| Keller Polymers | Priya Castell |",
        "| Supplier | Owner |\n|---|---|\n| Norrcell | Jonas Aalto |"]


def test_a_word_paragraph_set_in_bold_alone_is_a_heading(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("Kestrel supply agreement")
    for heading, text in [("1. Scope", "Harlow Plastics supplies PX-310 housings."),
                          ("2. Payment", "Invoices are paid within 30 days.")]:
        document.add_paragraph().add_run(heading).bold = True  # Normal style, bold by hand
        document.add_paragraph(text)
    mixed = document.add_paragraph()
    mixed.add_run("Note: ").bold = True  # bold in part: text
    mixed.add_run("prices exclude VAT.")
    document.save(str(tmp_path / "agreement.docx"))
    doc, chunks = read_one(tmp_path / "agreement.docx")
    assert "**1. Scope**" in doc.text and "Note: prices exclude VAT." in doc.text
    assert [(c.context, c.text) for c in chunks] == [
        ("", "Kestrel supply agreement"),
        ("1. Scope", "Harlow Plastics supplies PX-310 housings."),
        ("2. Payment", "Invoices are paid within 30 days.\n\nNote: prices exclude VAT.")]


def test_each_slide_is_a_page_under_its_title(tmp_path: Path) -> None:
    doc, chunks = read_one(write_pptx(tmp_path / "deck.pptx"))
    assert len(doc.pages) == 3
    assert [(c.context, c.page) for c in chunks] == [
        ("Kestrel Probe", 1), ("Suppliers", 2), ("Slide 3", 3)]
    assert "- Sold best in Norway\n  - Aurora Fisheries ordered forty buoys" in doc.text
    assert "Notes: Mention the trial in Oban." in chunks[0].text
    assert "| Supplier | Part |\n|---|---|\n| Halvard Optics | sensors |" in chunks[1].text
    assert "Umeå" in chunks[2].text  # an untitled slide is not read under the one before


def test_each_sheet_is_a_page_labelled_by_its_name(tmp_path: Path) -> None:
    doc, chunks = read_one(write_xlsx(tmp_path / "book.xlsx"))
    assert doc.page_labels == ("Orders", "Staff")
    assert [(c.context, c.page) for c in chunks] == [("Orders", "Orders"), ("Orders", "Orders"),
                                                     ("Staff", "Staff")]
    assert [c.text for c in chunks[:2]] == [
        "| Customer | Units |\n|---|---|\n| Aurora Fisheries | 40 |",
        "| Customer | Units |\n|---|---|\n| Marine Institute | 2 |"]
    assert doc.page_at(0) == "Orders" and doc.page_at(len(doc.text)) == "Staff"


def test_page_at_gives_a_label_a_number_or_none() -> None:
    assert Document("a", "x" * 30, pages=(0, 10, 20)).page_at(15) == 2
    assert Document("a", "x" * 30, pages=(0, 10), page_labels=("Q1", "Q2")).page_at(15) == "Q2"
    assert Document("a", "x" * 30).page_at(15) is None


def test_html_keeps_the_main_content_and_drops_the_rest(tmp_path: Path) -> None:
    (tmp_path / "about.html").write_text(PAGE, encoding="utf-8")
    doc, chunks = read_one(tmp_path / "about.html")
    for dropped in ("Secret Tracker", "color", "Menu Careers", "Home page banner",
                    "Search the site", "Seafood Weekly", "Copyright"):
        assert dropped not in doc.text
    assert doc.text.startswith("# About Brightwater\n\nBrightwater makes ocean probes in "
                               "Bergen.\nIt was founded in 1999.\n\n## Products\n\n")
    assert "- Kestrel Probe\n  - for deep water\n- Tern Logger" in doc.text
    assert "| Product | Price |\n|---|---|\n| Kestrel Probe | 1 200 \\| 1 400 NOK |" in doc.text
    # the table of one row is a chunk of its own, not packed with the list before it
    assert [c.context for c in chunks] == ["About Brightwater",
                                           "About Brightwater › Products",
                                           "About Brightwater › Products"]
    assert chunks[2].text.startswith("| Product | Price |")


def test_an_html_page_without_h1_is_titled_by_its_title(tmp_path: Path) -> None:
    (tmp_path / "page.htm").write_text(
        "<html><head><title>Norrcell AB</title></head><body><article><h2>Batteries</h2>"
        "<p>Norrcell ships battery packs from Umeå.</p></article></body></html>",
        encoding="utf-8")
    _, chunks = read_one(tmp_path / "page.htm")
    assert [c.context for c in chunks] == ["Norrcell AB › Batteries"]


@pytest.mark.parametrize("title", ["norrcell-notes", "Norrcell Notes", "Untitled"])
def test_a_title_that_is_the_file_name_or_a_placeholder_is_no_heading(tmp_path: Path,
                                                                       title: str) -> None:
    (tmp_path / "norrcell_notes.html").write_text(
        f"<html><head><title>{title}</title></head><body><h2>Batteries</h2>"
        "<p>Norrcell ships battery packs from Umeå.</p></body></html>", encoding="utf-8")
    _, chunks = read_one(tmp_path / "norrcell_notes.html")
    assert [c.context for c in chunks] == ["Batteries"]  # as a file name is never a title


def test_a_page_nested_deeper_than_recursion_allows_is_read(tmp_path: Path) -> None:
    depth = 5 * sys.getrecursionlimit()
    (tmp_path / "deep.html").write_text(
        "<html><body>" + "<div><span>" * depth + "Deep <i>inside</i> the page."
        + "</span></div>" * depth + "<ul><li>a" * 50 + "</li></ul>" * 50 + "</body></html>",
        encoding="utf-8")
    doc, _ = read_one(tmp_path / "deep.html")
    assert doc.text.startswith("Deep inside the page.\n\n- a\n  - a")


def test_a_page_saved_as_utf16_is_read_as_html(tmp_path: Path) -> None:
    (tmp_path / "unicode.html").write_bytes(PAGE.encode("utf-16"))
    doc, _ = read_one(tmp_path / "unicode.html")
    assert doc.kind == "md" and doc.text.startswith("# About Brightwater\n")


def test_a_csv_is_one_table_whatever_its_delimiter(tmp_path: Path) -> None:
    path = tmp_path / "staff.csv"
    path.write_bytes("\ufeffname;office\nMaria Lind;Helsinki\n\nJonas Aalto;\"Tampere; FI\"\n"
                     .encode())
    doc, chunks = read_one(path)
    assert doc.text == ("| name | office |\n|---|---|\n| Maria Lind | Helsinki |\n"
                        "| Jonas Aalto | Tampere; FI |\n")
    top = "| name | office |\n|---|---|\n"
    assert [c.text for c in chunks] == [f"{top}| Maria Lind | Helsinki |",
                                        f"{top}| Jonas Aalto | Tampere; FI |"]
    assert doc.text[chunks[1].start:chunks[1].end] == "| Jonas Aalto | Tampere; FI |"
    latin = tmp_path / "latin.csv"
    latin.write_bytes("Stadt,Land\nZürich,Schweiz\n".encode("cp1252"))
    assert "| Zürich | Schweiz |" in read_one(latin)[0].text


def test_a_long_table_is_written_in_parts_that_each_repeat_the_header() -> None:
    out = MarkdownText()
    out.table([["Supplier", "Owner"], *([f"Supplier {i}", f"Owner {i}"] for i in range(400))])
    parts = out.read().text.strip().split("\n\n")
    assert len(parts) > 1 and all(len(part) <= TABLE_PART_CHARS for part in parts)
    assert all(part.startswith("| Supplier | Owner |\n|---|---|\n") for part in parts)
    assert sum(part.count("\n| Supplier ") for part in parts) == 400


def test_an_eml_gives_its_header_as_metadata_and_names_attachments(tmp_path: Path) -> None:
    (tmp_path / "resin.eml").write_text(MAIL, encoding="utf-8")
    doc, chunks = read_one(tmp_path / "resin.eml")
    assert dict(doc.metadata) == {
        "from": "Jess Carver <jess@ashby.example>", "to": "Priya Castell <priya@keller.example>",
        "cc": "Lars Moen <lars@ashby.example>", "subject": "Resin delivery for Evesham",
        "date": "2025-02-27T16:42:10+00:00"}
    assert "Keller Polymers will deliver the resin to Evesham on Monday." in doc.text
    assert doc.text.rstrip().endswith("Attachments: order-2231.pdf")
    assert "JVBER" not in doc.text
    assert {c.context for c in chunks} == {"Resin delivery for Evesham"}


def test_an_eml_with_only_html_is_read_through_the_html_reader(tmp_path: Path) -> None:
    (tmp_path / "news.eml").write_text(
        "From: news@brightwater.example\nTo: all@brightwater.example\nSubject: News\n"
        "Content-Type: text/html; charset=utf-8\n\n<html><body><nav>Menu</nav><h2>Bergen"
        "</h2><p>The Bergen office <i>opens</i> in May.</p></body></html>\n", encoding="utf-8")
    doc, chunks = read_one(tmp_path / "news.eml")
    assert doc.kind == "md" and doc.metadata["subject"] == "News"
    assert "Menu" not in doc.text and "The Bergen office opens in May." in doc.text
    assert chunks[-1].context == "News › Bergen"


def test_bad_files_are_named_problems_and_the_good_ones_are_read(tmp_path: Path) -> None:
    write_docx(tmp_path / "good.docx")
    (tmp_path / "notes.docx").write_text("just some text", encoding="utf-8")
    (tmp_path / "locked.xlsx").write_bytes(OLE2)
    write_xlsx(tmp_path / "renamed.docx")
    with zipfile.ZipFile(tmp_path / "empty.pptx", "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
    (tmp_path / "cut.pptx").write_bytes(write_pptx(tmp_path / "x.pptx").read_bytes()[:900])
    (tmp_path / "x.pptx").unlink()
    (tmp_path / "scripts.html").write_text("<html><script>go()</script><style>p{}</style>"
                                           "<nav>Home</nav></html>", encoding="utf-8")
    (tmp_path / "plain.html").write_text("Maria Lind works in Helsinki.", encoding="utf-8")
    (tmp_path / "old.doc").write_bytes(OLE2)
    write_docx(tmp_path / "no-suffix-word")
    (tmp_path / "no-suffix-page").write_text(PAGE, encoding="utf-8")
    problems: list[Problem] = []
    docs = read_documents([tmp_path], problems)
    assert sorted(Path(d.path).name for d in docs) == [
        "good.docx", "no-suffix-page", "no-suffix-word", "plain.html"]
    assert next(d for d in docs if d.path.endswith("plain.html")).kind == "txt"
    said = {Path(p.where).name: p.what for p in problems}
    assert set(said) == {"notes.docx", "locked.xlsx", "renamed.docx", "empty.pptx", "cut.pptx",
                         "scripts.html", "old.doc"}
    assert "not a Word (.docx) file: not a ZIP archive" in said["notes.docx"]
    assert "encrypted or old binary Office file" in said["locked.xlsx"]
    assert "no word/document.xml (it is an Excel file)" in said["renamed.docx"]
    assert "no ppt/presentation.xml" in said["empty.pptx"]
    assert "not a ZIP archive" in said["cut.pptx"]
    assert "no text in the HTML page" in said["scripts.html"]
    assert "old binary Word file: save it as .docx" in said["old.doc"]


def test_files_with_no_suffix_are_told_by_their_content(tmp_path: Path) -> None:
    write_pptx(tmp_path / "deck")
    write_xlsx(tmp_path / "book")
    (tmp_path / "page").write_text(PAGE, encoding="utf-8")
    (tmp_path / "text").write_text("<b>bold</b> is a tag in a note", encoding="utf-8")
    assert [kind_of(tmp_path / n) for n in ("deck", "book", "page", "text")] == [
        "pptx", "xlsx", "html", "txt"]


def test_a_spreadsheet_past_the_cell_limit_is_refused_as_it_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sheets, "MAX_CELLS", 50)
    book = openpyxl.Workbook()
    for row in range(40):
        book.active.append([f"r{row}", row])
    book.save(str(tmp_path / "big.xlsx"))
    (tmp_path / "big.csv").write_text("\n".join(f"r{i},{i}" for i in range(40)),
                                      encoding="utf-8")
    (tmp_path / "small.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    problems: list[Problem] = []
    docs = read_documents([tmp_path], problems)
    assert [Path(d.path).name for d in docs] == ["small.csv"]
    assert {Path(p.where).name for p in problems} == {"big.xlsx", "big.csv"}
    assert all("too large: more than 50 filled cells" in p.what for p in problems)


def test_a_missing_library_names_the_office_extra(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    write_docx(tmp_path / "review.docx")
    (tmp_path / "note.txt").write_text("Maria Lind works in Helsinki.", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "docx", None)  # what an import finds without the extra
    problems: list[Problem] = []
    docs = read_documents([tmp_path], problems)
    assert [Path(d.path).name for d in docs] == ["note.txt"]
    (problem,) = problems
    assert "reading .docx files needs python-docx" in problem.what
    assert 'install the "office" extra' in problem.what and "\n" not in problem.what


def test_the_corpus_writers_write_files_the_readers_read_back(tmp_path: Path) -> None:
    items = [{"title": f"Place {i}", "text": f"Place {i} is a town near Bergen."}
             for i in range(3)]
    files = write_corpus(items * 3, tmp_path, "demo", ["docx", "html", "pptx"], per_file=3)
    assert [f.name for f in files] == ["demo-0000.docx", "demo-0001.html", "demo-0002.pptx"]
    problems: list[Problem] = []
    chunks = chunk_documents(read_documents(files, problems))
    assert problems == []
    for name in ("demo-0000.docx", "demo-0001.html", "demo-0002.pptx"):
        found = [c for c in chunks if c.doc.endswith(name)]
        assert [c.context.split(" › ")[-1] for c in found] == ["Place 0", "Place 1", "Place 2"]
        assert all("is a town near Bergen" in c.text and "Place 1Place" not in c.text
                   for c in found)
    assert "demo-0001" not in " ".join(c.text for c in chunks)  # the nav menu is dropped


@pytest.mark.slow
def test_a_folder_of_every_format_is_stored(tmp_path: Path,
                                            open_graph: Callable[..., GraphRAG]) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    write_docx(folder / "review.docx")
    write_pptx(folder / "deck.pptx")
    write_xlsx(folder / "book.xlsx")
    (folder / "about.html").write_text(PAGE, encoding="utf-8")
    (folder / "staff.csv").write_text("name,office\nMaria Lind,Helsinki\n", encoding="utf-8")
    (folder / "resin.eml").write_text(MAIL, encoding="utf-8")
    (folder / "notes.md").write_text("# Notes\n\nTomas Ekdahl lives in Stavanger.\n",
                                     encoding="utf-8")
    (folder / "memo.txt").write_text("Ingrid Solberg visited Kiel.\n", encoding="utf-8")
    rag = open_graph("formats")
    summary = rag.add_files([folder])
    assert summary.problems == [] and summary.extractor == "offline"
    stored = rag.documents()
    assert set(stored) == {"review.docx", "deck.pptx", "book.xlsx", "about.html", "staff.csv",
                           "resin.eml", "notes.md", "memo.txt"}
    assert all(count > 0 for count in stored.values())
    found = rag.retrieve("Who ordered forty buoys?", method="naive", top_k=3).passages
    assert any("Aurora Fisheries ordered forty buoys" in p.text for p in found)
