"""Raw documents' structure: PDF text normalised, sections and headings, what each input is,
and chunks that keep to their section with the headings as context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hopgraph.errors import InputError
from hopgraph.ingest.documents import Chunk, chunk_documents
from hopgraph.ingest.fields import spaced_rows
from hopgraph.ingest.heading_names import heading_entity, names_something
from hopgraph.ingest.inputs import sort_inputs
from hopgraph.ingest.lines import contact
from hopgraph.ingest.offline_extractor import extract
from hopgraph.ingest.pdf import Line, pdf_text
from hopgraph.ingest.reading import Document, read_documents
from hopgraph.ingest.structure import sections
from hopgraph.records import Triplet

WRAPPED_PAGE = """Quarterly report
The Kestrel Probe was designed by Tomas Ekdahl at the Bergen workshop, where the
company has built marine instruments since 2011. Its sensor comes from a manu-
facturer in Trondheim that Ingrid Solberg chose after a long trial.
Suppliers
Halvard Optics makes the optical sensor.
2
"""


def lines(page: str) -> list[Line]:
    """A page's lines as pypdf gives them when it cannot say where they stand."""
    return [Line(line.strip()) for line in page.splitlines()]


def written(folder: Path, name: str, text: str) -> Document:
    """A file of `text` in `folder`, read as the ingest reads it."""
    (folder / name).write_text(text, encoding="utf-8")
    (doc,) = read_documents([folder / name])
    return doc


def test_pdf_text_is_joined_mended_and_paragraphed() -> None:
    text = pdf_text([lines(WRAPPED_PAGE)]).text
    paragraphs = text.strip().split("\n\n")
    assert paragraphs[0] == "Quarterly report"
    assert paragraphs[1].startswith("The Kestrel Probe was designed by Tomas Ekdahl at the "
                                    "Bergen workshop, where the company")
    assert "from a manufacturer in Trondheim" in paragraphs[1]  # hyphenation mended
    assert "\n" not in paragraphs[1]  # wrapped lines joined
    assert paragraphs[2:] == ["Suppliers", "Halvard Optics makes the optical sensor."]  # no "2"


def test_a_hyphen_before_a_capital_is_kept() -> None:
    text = pdf_text([lines("The partnership between Brightwater and the Saint-\n"
                           "Malo yard began when the first hull was laid down in 2014, a year\n"
                           "late.\n")]).text
    assert "Saint- Malo" in text  # not "SaintMalo": a name, not a broken word


def test_markdown_sections_carry_their_headings() -> None:
    doc = Document("a.md", "# Brightwater\n\nIntro line.\n\n## Leadership\n\nIngrid leads.\n\n"
                   "Team\n----\n\n- Anna Berg\n- Tomas Lind\n\n## Products\n\nProbes.\n", "md")
    found = [(s.headings, s.paragraphs) for s in sections(doc)]
    assert found == [(("Brightwater",), ["Intro line."]),
                     (("Brightwater", "Leadership"), ["Ingrid leads."]),
                     (("Brightwater", "Team"), ["- Anna Berg\n- Tomas Lind"]),
                     (("Brightwater", "Products"), ["Probes."])]


def test_plain_text_headings_and_a_title_over_them() -> None:
    doc = Document("s.txt", "Staff profiles\n\nMaria Lind\nMaria Lind joined in 2019. She "
                   "lives in Helsinki and leads sales\nfor the Nordic region, which she "
                   "built from nothing over\nfour years.\n\nContacts\nAnna Berg\nThomas Lind\n")
    found = [(s.headings, s.paragraphs) for s in sections(doc)]
    assert found[0][0] == ("Staff profiles", "Maria Lind")
    assert found[0][1][0].startswith("Maria Lind joined in 2019. She lives in Helsinki and "
                                     "leads sales for the Nordic region")  # wrapped: joined
    assert found[1] == (("Staff profiles", "Contacts"), ["Anna Berg\nThomas Lind"])  # kept


@pytest.mark.parametrize(("heading", "entity"), [
    ("Leadership", False), ("Staff profiles", False), ("Press release", False),
    ("Products", False), ("Greencreek, Idaho", True), ("The Blitz", True),
    ("Maria Lind", True), ("Riemann integral", True), (None, False), ("Sheet1", False),
    ("Slide 3", False), ("Boeing 747", True)])
def test_which_headings_name_something(heading: str | None, entity: bool) -> None:
    assert names_something(heading) is entity


def test_chunks_keep_to_sections_and_carry_the_headings() -> None:
    body = " ".join(f"Sentence number {i} says that Ada met Bob in Paris." for i in range(60))
    doc = Document("d.md", f"# Acme\n\n## Leadership\n\nIngrid leads Acme.\n\n## History\n\n"
                   f"{body}\n", "md")
    chunks = chunk_documents([doc], chunk_tokens=64, overlap_tokens=0)
    start = doc.text.index("Ingrid")
    assert chunks[0] == Chunk("d.md", 0, "Ingrid leads Acme.", chunks[0].tokens,
                              "Acme › Leadership", None, None, {}, ("Acme", "Leadership"),
                              start, start + len("Ingrid leads Acme."), "md")
    assert chunks[0].passage == "Acme › Leadership\nIngrid leads Acme."
    history = chunks[1:]
    assert len(history) > 3 and all(c.context == "Acme › History" for c in history)
    assert all(c.tokens <= 64 for c in chunks)  # headings line included
    assert " ".join(c.text for c in history) == body  # cut at sentences, nothing lost
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_a_section_named_by_its_heading_gives_the_title() -> None:
    doc = Document("s.txt", "Maria Lind\nMaria Lind joined in 2019.\n", "txt")
    (chunk,) = chunk_documents([doc])
    assert (chunk.title, chunk.context, chunk.text) == ("Maria Lind", "Maria Lind",
                                                         "Maria Lind joined in 2019.")


def test_inputs_are_sorted_by_suffix_and_content(tmp_path: Path) -> None:
    row = json.dumps({"passage": "Lyon lies on the Rhone.", "triplets": []})
    (tmp_path / "rows.jsonl").write_text(row + "\n", encoding="utf-8")
    (tmp_path / "rows.txt").write_text(row + "\n", encoding="utf-8")  # rows in a .txt
    (tmp_path / "notes.txt").write_text("Plain notes.", encoding="utf-8")
    (tmp_path / "README").write_text("No suffix, plain text.", encoding="utf-8")
    (tmp_path / "page.md").write_text("# Page", encoding="utf-8")
    (tmp_path / "data.csv").write_text("x,y", encoding="utf-8")  # a table: a document
    (tmp_path / "data.dat").write_text("x y", encoding="utf-8")
    (tmp_path / "blob").write_bytes(b"\x00\x01binary")
    found = sort_inputs([tmp_path])
    assert sorted(p.name for p in found.rows) == ["rows.jsonl", "rows.txt"]
    assert sorted(p.name for p in found.documents) == ["README", "data.csv", "notes.txt",
                                                               "page.md"]
    assert sorted(Path(p.where).name for p in found.skipped) == ["blob", "data.dat"]
    forced = sort_inputs([tmp_path / "rows.txt"], documents_only=True)
    assert forced.documents == [tmp_path / "rows.txt"]
    with pytest.raises(InputError, match=r"unsupported file type '\.dat'") as caught:
        sort_inputs([tmp_path / "data.dat"])
    assert "data.dat" in str(caught.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="nothing to read in this folder: it holds no files"):
        sort_inputs([tmp_path / "empty"])


def test_a_hash_inside_a_code_fence_is_not_a_heading() -> None:
    doc = Document("a.md", "# Setup\n\n```bash\n# install deps\npip install x\n```\n\n## Next\n\n"
                   "Done.\n", "md")
    assert [s.headings for s in sections(doc)] == [("Setup",), ("Setup", "Next")]


def test_a_hash_line_of_thousands_of_characters_is_text_not_a_heading() -> None:
    """A heading travels with every chunk of its section: one as long as a paragraph (a file
    of one line that opens with "#") is read as the paragraph it is."""
    long_line = "# " + "Ada met Bob in Turin. " * 100
    found = sections(Document("a.md", f"# Title\n\n{long_line}\n\nShort.", "md"))
    assert [(s.headings, s.paragraphs) for s in found] == [
        (("Title",), [long_line.strip(), "Short."])]


EMAIL = """From: Jess Carver <jess.carver@bramleys.example>
To: Daniel Ferreira <d.ferreira@ashbyvale.example>
Cc: Priya Raman <p.raman@ashbyvale.example>; Priya Castell
<p.castell@ashbyvale.example>
Date: Wed, 7 May 2025 08:15:33 +0100
Subject: Fogging on salad packs

Daniel,

Bramley's Fresh Kitchen reported fogging on salad packs sealed with LF-40
Pro. The film turned white with droplets within an hour in the chiller
instead of staying clear. Twenty-two reels from one order were involved.

Grace Whitlow found that the reels had been coated on 11 August, the day
after planned maintenance of coater C1.

Regards,
Jess Carver
"""


def test_an_email_header_is_metadata_and_text_never_a_heading(tmp_path: Path) -> None:
    (tmp_path / "mail.txt").write_text(EMAIL, encoding="utf-8")
    (doc,) = read_documents([tmp_path / "mail.txt"])
    assert doc.metadata == {
        "from": "Jess Carver <jess.carver@bramleys.example>",
        "to": "Daniel Ferreira <d.ferreira@ashbyvale.example>",
        "cc": "Priya Raman <p.raman@ashbyvale.example>; Priya Castell "
              "<p.castell@ashbyvale.example>",
        "date": "2025-05-07T08:15:33+01:00", "subject": "Fogging on salad packs"}
    (section,) = sections(doc)
    assert section.headings == ("Fogging on salad packs",)  # the subject: context...
    assert section.title is None  # ...never what the chunks are about
    assert section.paragraphs[0].startswith("From: Jess Carver")  # the header stays text
    assert section.paragraphs[2].startswith(  # the first wrapped line is no heading
        "Bramley's Fresh Kitchen reported fogging on salad packs sealed with LF-40 Pro. The")
    assert "\n" not in section.paragraphs[2] and "\n" not in section.paragraphs[3]
    chunk = chunk_documents([doc])[0]
    assert chunk.passage_metadata == {
        **doc.metadata, "source": doc.path, "file": doc.path, "type": "txt", "chunk": 0,
        "section": "Fogging on salad packs", "headings": ["Fogging on salad packs"],
        "start": 0, "end": chunk.end}
    assert "".join(doc.text[chunk.start:chunk.end].split()) == "".join(chunk.text.split())
    assert chunk.page is None


def test_a_document_without_an_email_header_has_no_metadata(tmp_path: Path) -> None:
    (tmp_path / "memo.txt").write_text("From: the board\n\nWe met on Monday.\n",
                                       encoding="utf-8")
    assert read_documents([tmp_path / "memo.txt"])[0].metadata == {}


REPORT = """ASHBY VALE PACKAGING LTD
INCIDENT REPORT

Incident: IR-2341
Reported by: Jess Carver, Bramley's Fresh Kitchen

1. DESCRIPTION

Bramley's Fresh Kitchen reported fogging on salad packs sealed with LF-40
Pro. The film turned white with droplets within an hour in the chiller.
2. IMMEDIATE ACTION
The remaining reels were replaced from Daventry stock.

3. RESPONSIBILITIES

3.1 Procurement Lead

The Procurement Lead finds suppliers and keeps the approved supplier list.

3.2 Quality Manager

The Quality Manager decides whether a supplier is approved.

4. APPROVAL

4.1 A supplier of a food-contact material is audited on site before approval,
or within six months when supply is urgent.

Contents of the file
1. Questionnaire
2. Certificates

1. Check the seal.
2. Call the supplier.

5 Budget
The budget for trials is 20,000 pounds.

Section 6 – Fees
Fees are paid monthly.
"""


def test_numbered_and_capitals_headings_and_a_letterhead_title() -> None:
    found = [(s.headings, s.paragraphs) for s in sections(Document("r.txt", REPORT))]
    title = ("ASHBY VALE PACKAGING LTD", "INCIDENT REPORT")
    assert found[0] == (title, ["Incident: IR-2341\nReported by: Jess Carver, Bramley's "
                                "Fresh Kitchen"])  # the report's header: text, not a heading
    assert found[1][0] == (*title, "1. DESCRIPTION")
    assert found[1][1][0].startswith("Bramley's Fresh Kitchen reported fogging on salad "
                                     "packs sealed with LF-40 Pro. The film")
    assert found[2] == ((*title, "2. IMMEDIATE ACTION"),  # inside a block, after a full stop
                        ["The remaining reels were replaced from Daventry stock."])
    assert [headings for headings, _ in found[3:5]] == [
        (*title, "3. RESPONSIBILITIES", "3.1 Procurement Lead"),  # numbers nest
        (*title, "3. RESPONSIBILITIES", "3.2 Quality Manager")]
    assert found[5][0] == (*title, "4. APPROVAL")
    assert found[5][1][0].startswith("4.1 A supplier of a food-contact material is audited "
                                     "on site before approval, or within")  # a clause
    assert found[6] == ((*title, "Contents of the file"), [
        "1. Questionnaire\n2. Certificates", "1. Check the seal.\n2. Call the supplier."])
    assert found[7] == ((*title, "5 Budget"), ["The budget for trials is 20,000 pounds."])
    assert found[8] == ((*title, "Section 6 – Fees"), ["Fees are paid monthly."])


def test_a_documents_coded_title_stays_over_its_numbered_sections() -> None:
    policy = """ALDERMOOR TRAVEL LTD

HS-POL-07  INCIDENT REPORTING AND INVESTIGATION
Version 2 - effective 1 June 2024
Policy owner: Safety and Compliance Manager
Approved by: Managing Director

1. PURPOSE

1.1 To make sure that all incidents involving our vehicles, passengers,
staff or premises are reported quickly, investigated in proportion to
their seriousness, and learned from.

5. INVESTIGATION

5.1 Category A incidents are investigated by the Safety and Compliance
Manager, who sends a final report to the Managing Director within 28 days.

NCR-029 - Pest control

Bait stations in the chill chamber were not checked in the week of the
audit, and the contractor's visit report was not on file.

6. REVIEW

6.1 The Safety and Compliance Manager reviews this policy every two years.
"""
    found = [s.headings for s in sections(Document("p.txt", policy))]
    title = ("ALDERMOOR TRAVEL LTD", "HS-POL-07  INCIDENT REPORTING AND INVESTIGATION")
    # the numbered sections are the coded title's own, not its siblings: a citation of
    # clause 5.1 says which policy it is
    assert found[:3] == [title, (*title, "1. PURPOSE"), (*title, "5. INVESTIGATION")]
    # a coded heading after numbered ones (a report's finding) heads only its own text
    assert found[3:] == [(*title, "NCR-029 - Pest control"), (*title, "6. REVIEW")]


def test_a_title_over_a_key_value_block_and_headings_in_capitals_name_nothing() -> None:
    doc = Document("log.txt", "DAVENTRY DISTRIBUTION CENTRE\nQuarantine bay log\n"
                   "Kept by: Owen Pryce\n\nNotes\nThe bay holds 40 pallets.\n")
    found = sections(doc)
    assert [(s.headings, s.paragraphs) for s in found] == [
        (("DAVENTRY DISTRIBUTION CENTRE", "Quarantine bay log"), ["Kept by: Owen Pryce"]),
        (("DAVENTRY DISTRIBUTION CENTRE", "Quarantine bay log", "Notes"),
         ["The bay holds 40 pallets."])]
    assert found[0].title is None  # a title of two lines is context
    assert not names_something("ACCOUNT SUMMARY (CRM export)")
    assert heading_entity("3.1 Procurement Lead") == "Procurement Lead"
    assert heading_entity("Press release: Aurora Fisheries") == "Aurora Fisheries"


def test_markdown_body_headings_by_their_form() -> None:
    doc = Document("p.md", "# Policy\n\n1. SCOPE\n\nAll sites.\n\n3.2 Responsibilities\n\n"
                   "The manager decides.\n\n3.2.1 Deputies\n\nThe deputy decides.\n\n"
                   "1. Call the supplier\n\n## Next\n\nDone.\n", "md")
    assert [(s.headings, s.paragraphs) for s in sections(doc)] == [
        (("Policy", "1. SCOPE"), ["All sites."]),
        (("Policy", "3.2 Responsibilities"), ["The manager decides."]),
        (("Policy", "3.2 Responsibilities", "3.2.1 Deputies"),
         ["The deputy decides.", "1. Call the supplier"]),  # a list item, not a heading
        (("Policy", "Next"), ["Done."])]


def test_a_clause_number_is_not_part_of_a_name() -> None:
    from hopgraph.ingest.offline_records import extract_chunks

    doc = Document("p.txt", "4. APPROVAL\n\n4.1 A supplier is approved by Priya Raman at "
                   "Coalville.\n\n4.2 Each CAR is closed by Tom Okafor.\n")
    report, _ = extract_chunks(chunk_documents([doc]))
    names = {name for record in report.records for triplet in record.triplets
             for name in (triplet.subject, triplet.object)}
    assert {"Priya Raman", "Coalville", "Tom Okafor"} <= names
    assert not [name for name in names if name[:1].isdigit()]


LOG = """\
SENTINEL SX MONITORING - DATA EXPORT
Site:     DEP-HUL-02 Hull (Sutton Fields)

Timestamp           Probe A   Probe B   Alarm   Door   Defrost
------------------  --------  --------  ------  -----  -------
22/04/2025 22:00       -22.8     -23.1  OK      OPEN   NO
22/04/2025 22:30       -21.9     -22.6  OK      OPEN   NO
23/04/2025 00:00       -14.6     -16.9  HIGH    SHUT   NO
"""


def test_an_exported_table_keeps_its_header_row_its_rule_and_its_rows_apart(
        tmp_path: Path) -> None:
    # Its header row is long and the rule under it longer: they were joined as one wrapped
    # line with the first row, and the header then read as a heading.
    doc = Document("log.txt", LOG, "txt")
    table = next(s for s in sections(doc) if any("Probe A" in p for p in s.paragraphs))
    assert "Timestamp" not in " ".join(table.headings)
    text = "\n".join(table.paragraphs)
    # read as the Markdown table it is (each row under its header when chunked)
    assert ("| Timestamp | Probe A | Probe B | Alarm | Door | Defrost |\n|---|---|---|---|---|---|"
            "\n| 22/04/2025 22:00 | -22.8 | -23.1 | OK | OPEN | NO |\n") in text
    assert "------" not in text and "NO 22/04/2025" not in text


FLEET = """\
FLEET LIST

Fleet  Reg        Make / model      Depot  Ownership
-----  ---------  ----------------  -----  ------------------------------
F204   YB19 RTO   DAF LF 230        LEE    Owned
F205   YB19 RTU   DAF LF 230        HUL    Wharfedale lease WTR-5610
"""


def test_a_table_laid_out_with_spaces_is_chunked_a_row_under_its_header() -> None:
    # The rule of dashes does not line up with the columns (exports are like that); each
    # row is still read under the header, not as "F205 | has | HUL" in a chunk of its own.
    doc = Document("fleet.txt", FLEET, "txt")
    chunks = chunk_documents([doc], chunk_tokens=256, overlap_tokens=0)
    rows = [c for c in chunks if "F20" in c.text]
    assert [c.text for c in rows] == [
        "| Fleet | Reg | Make / model | Depot | Ownership |\n|---|---|---|---|---|\n"
        "| F204 | YB19 RTO | DAF LF 230 | LEE | Owned |",
        "| Fleet | Reg | Make / model | Depot | Ownership |\n|---|---|---|---|---|\n"
        "| F205 | YB19 RTU | DAF LF 230 | HUL | Wharfedale lease WTR-5610 |"]
    # the first piece's span holds the header; the others', their own row
    assert doc.text[rows[0].start:rows[0].end].startswith("Fleet  Reg")
    assert doc.text[rows[1].start:rows[1].end] == \
        "F205   YB19 RTU   DAF LF 230        HUL    Wharfedale lease WTR-5610"
    triplets = extract(None, rows[1].text)
    assert Triplet("F205", "depot", "HUL") in triplets
    assert Triplet("F205", "ownership", "WTR-5610") in triplets
    assert not any(t.predicate == "has" for t in triplets)


def test_a_table_laid_out_with_tabs_keeps_where_each_cell_is() -> None:
    lines = ["Part\tSupplier\tPrice", "HP-310\tOrrin & Tate\t112", "HP-410\tOrrin & Tate\t140"]
    rows = spaced_rows(lines)
    assert rows[0].header and rows[1].cells == [[(0, "HP-310")], [(7, "Orrin & Tate")],
                                                [(20, "112")]]
    # a tab inside a cell, where it stands for one space, cannot be found again: left as is
    table = ["Part    Supplier          Price", "HP-310  Orrin_T & Tate    112",
             "HP-410  Orrin_T & Tate    140"]
    assert spaced_rows(table)[1].cells == [[(0, "HP-310")], [(8, "Orrin_T & Tate")],
                                           [(26, "112")]]
    assert spaced_rows([table[0], table[1].replace("T & ", "T\t& "), table[2]]) == {}
    assert spaced_rows([table[0], table[1].replace("&", "|"), table[2]]) == {}  # a bar


def test_a_dateline_under_the_title_is_text_not_a_heading_over_every_section() -> None:
    text = ("BRACKENRIDGE HOMES - COMPLAINT CASE RECORD\n"
            "Printed from HomeBase 7 on 28/10/2025 by J.HAIGH\n\n"
            "Case ref: CMP-2025-0318\nCase officer: Joanne Haigh\n\n"
            "SUMMARY OF COMPLAINT\nMrs Doyle says she first reported black mould in the back\n"
            "bedroom in November 2024 and was told to open the windows and wipe it down.\n")
    found = sections(Document("c.txt", text, "txt"))
    assert {s.headings for s in found if s.paragraphs} == {
        ("BRACKENRIDGE HOMES - COMPLAINT CASE RECORD",),
        ("BRACKENRIDGE HOMES - COMPLAINT CASE RECORD", "SUMMARY OF COMPLAINT")}
    assert "Printed from HomeBase 7 on 28/10/2025 by J.HAIGH" in found[0].paragraphs
    # the first line is the title even with a date in it
    notes = sections(Document("n.txt", (
        "CALL NOTES - 20 May 2025\nBeacon Fire Systems\n\n"
        "Supplier: Beacon Fire Systems Ltd\nContact: Owen Marsh\n"
        "Owen said the panel firmware will be updated across all of the sites by the\n"
        "end of June, and that he will send the schedule to the contracts manager.\n"), "txt"))
    assert notes[0].headings == ("CALL NOTES - 20 May 2025", "Beacon Fire Systems")


def test_a_letters_subject_line_after_its_greeting_is_context_not_a_title(
        tmp_path: Path) -> None:
    doc = written(tmp_path, "letter.txt",
        "Corvane Software Ltd\n12 Cotton Mill Row\nSheffield S3 8RT\n\n6 June 2025\n\n"
        "Dear Ms Garside,\n\nService credit for May 2025\n\nAs promised at our call, I am "
        "writing to confirm the service credit due to Dales & Moor.\n\nFieldDesk Pro was "
        "unavailable for 167 minutes.\n\nYours sincerely,\n\nNadia Farouk\n")
    found = [s for s in sections(doc) if s.heading == "Service credit for May 2025"]
    assert found and all(s.title is None for s in found)  # as an e-mail's subject
    assert any("FieldDesk Pro" in p for s in found for p in s.paragraphs)
    # the same heading with no greeting before it heads its section
    (tmp_path / "notes.txt").write_text(
        "Corvane Software Ltd\n\nService credit for May 2025\n\nFieldDesk Pro was "
        "unavailable for 167 minutes.\n", encoding="utf-8")
    (notes,) = read_documents([tmp_path / "notes.txt"])
    assert [s.title for s in sections(notes) if s.heading == "Service credit for May 2025"
            ] == ["Service credit for May 2025"]


LETTER = ("Aldermoor Travel Ltd\nAldermoor House, Beckside Road, Thornsby RY1 4BD\n"
          "Telephone 01632 960 200\n\n"
          "Office of the Traffic Commissioner\nNorth East of England\nHillcrest House\nLeeds\n\n"
          "3 October 2025\n\nYour ref: OTC/NE/25/1187\nOur ref: PV/OTC/0163\n\n"
          "Dear Sir or Madam,\n\nWheel detachment, coach RJ17 OUG\n\n"
          "I wrote to you on 20 June 2025 to report the loss of the rear offside\n"
          "wheels from one of our coaches while it was carrying pupils on a school\n"
          "service. In your letter of 8 July you asked us to send you the outcome.\n\n"
          "Yours faithfully,\n\nPriyesh Varma\n")


def test_a_letterheads_address_and_the_addressee_head_no_section() -> None:
    found = sections(Document("letter.txt", LETTER))
    # the sender's name is the title; the lines under it that say where it is are text
    assert {s.headings[0] for s in found} == {"Aldermoor Travel Ltd"}
    headings = {h for s in found for h in s.headings}
    assert not headings & {"Aldermoor House, Beckside Road, Thornsby RY1 4BD",
                           "Telephone 01632 960 200", "Office of the Traffic Commissioner",
                           "North East of England", "3 October 2025"}
    text = "\n".join(p for s in found for p in s.paragraphs)
    assert "Office of the Traffic Commissioner\nNorth East of England" in text
    assert "Aldermoor House, Beckside Road, Thornsby RY1 4BD" in text
    assert any(s.heading == "Wheel detachment, coach RJ17 OUG" for s in found)
    # without a greeting, a short line over text heads its section as before
    memo = sections(Document("m.txt", "Aldermoor Travel Ltd\n\nWheel checks\nEvery coach "
                                      "is checked.\n\nDepot duties\nThe depot opens at 6.\n"))
    assert [s.heading for s in memo][-2:] == ["Wheel checks", "Depot duties"]


@pytest.mark.parametrize(("line", "reaches"), [
    ("Telephone 01632 960 200", True), ("Thornsby RY1 4BD", True),
    ("accounts@aldermoor.co.uk", True), ("www.aldermoor.co.uk", True),
    ("Columbus, OH 43215", True), ("+44 (0)113 496 0000", True),
    ("INCIDENT REPORT", False), ("Operator licence OB1129384", False),
    ("ISO 9001:2015", False), ("Annual Report 2024/25", False), ("RU73 BZR", False)])
def test_contact_lines(line: str, reaches: bool) -> None:
    assert contact(line) is reaches


def test_a_markdown_line_in_bold_alone_is_a_heading_under_the_hash_headings(
        tmp_path: Path) -> None:
    doc = written(tmp_path, "policy.md",
        "# Supplier approval\n\n**1. Scope**\n\nThis policy covers every site.\n\n"
        "__2. Responsibilities:__\n\nThe Quality Manager owns it.\n\n"
        "**Do not approve a supplier by phone.**\n\n**Owner:** Priya Castell\n")
    assert [(s.headings, s.paragraphs) for s in sections(doc)] == [
        (("Supplier approval", "1. Scope"), ["This policy covers every site."]),
        (("Supplier approval", "2. Responsibilities"), [
            "The Quality Manager owns it.", "**Do not approve a supplier by phone.**",
            "**Owner:** Priya Castell"])]  # a bold sentence, a bold key: text


def test_a_markdown_table_without_outer_pipes_is_a_table(tmp_path: Path) -> None:
    doc = written(tmp_path, "suppliers.md",
        "# Suppliers\n\nSupplier | Owner | Based in\n--- | :---: | ---\n"
        "Keller Polymers | Priya Castell | Redditch\nDunmore Recycling | Tom Hessel | Dundalk"
        "\n\nPrices and terms | see the agreement\n\n```\na | b\n--- | ---\n```\n")
    assert "| Keller Polymers | Priya Castell | Redditch |" in doc.text
    assert "Prices and terms | see the agreement" in doc.text  # no delimiter row: text
    assert "```\na | b\n--- | ---\n```" in doc.text  # code is left as written
    rows = [c.text for c in chunk_documents([doc]) if "Polymers" in c.text or "Dunmore" in c.text]
    header = "| Supplier | Owner | Based in |\n| --- | :---: | --- |\n"
    assert rows == [header + "| Keller Polymers | Priya Castell | Redditch |",
                    header + "| Dunmore Recycling | Tom Hessel | Dundalk |"]
    assert Triplet("Keller Polymers", "owner", "Priya Castell") in extract("Suppliers", rows[0])


def test_plain_text_cut_into_pages_by_form_feeds_loses_its_page_furniture(
        tmp_path: Path) -> None:
    page = ("ASHBY VALE PACKAGING LTD - QUALITY MANUAL\n\n{}\n\n"
            "Confidential - page {} of 3\n")
    texts = ["1. SCOPE\nThe manual covers the Coalville and Evesham sites.",
             "2. SUPPLIERS\nSuppliers are approved by Priya Castell after an audit.",
             "3. RECORDS\nRecords are kept for six years by the Quality Manager."]
    doc = written(tmp_path, "manual.txt",
        "\f".join(page.format(text, n) for n, text in enumerate(texts, start=1)))
    assert "QUALITY MANUAL" not in doc.text and "Confidential" not in doc.text
    assert "\f" not in doc.text and len(doc.pages) == 3
    chunks = chunk_documents([doc])
    assert [(c.context, c.page) for c in chunks] == [("1. SCOPE", 1), ("2. SUPPLIERS", 2),
                                                     ("3. RECORDS", 3)]
    assert chunks[1].text == "Suppliers are approved by Priya Castell after an audit."
    # one page: the text as it was
    one = written(tmp_path, "one.txt", page.format(texts[0], 1) + "\f")
    assert one.pages == () and "QUALITY MANUAL" in one.text


def test_markdown_front_matter_is_metadata_and_a_header_to_read(tmp_path: Path) -> None:
    doc = written(tmp_path, "policy.md",
        "---\ntitle: Supplier approval policy\nowner: Priya Castell\nversion: 3\n"
        "review_date: 2025-09-30\napproved: true\ntags: [quality, suppliers]\n"
        "history:\n  v2: 2024-01-10\n---\n\n# Supplier approval\n\n"
        "Every supplier is audited before approval.\n")
    assert doc.metadata == {"title": "Supplier approval policy", "owner": "Priya Castell",
                            "version": 3, "review_date": "2025-09-30", "approved": True}
    assert doc.text.startswith(
        "Title: Supplier approval policy\nOwner: Priya Castell\nVersion: 3\n"
        "Review date: 2025-09-30\nApproved: True\nTags: quality, suppliers\n\n")
    assert "history" not in doc.text and "---" not in doc.text
    header, body = chunk_documents([doc])
    assert header.metadata["owner"] == "Priya Castell" and body.metadata["version"] == 3
    assert body.context == "Supplier approval"
    assert Triplet("Supplier approval policy", "owner", "Priya Castell") in extract(
        None, header.text)


@pytest.mark.parametrize("text", [
    "---\n: not yaml [\n---\n\nText.\n",  # not YAML
    "---\n- a list\n---\n\nText.\n",  # YAML, but no mapping
    "Intro\n---\nowner: Tom\n---\n"])  # not at the top: a setext heading and text
def test_text_without_front_matter_is_read_as_written(tmp_path: Path, text: str) -> None:
    doc = written(tmp_path, "note.md", text)
    assert doc.text == text and doc.metadata == {}


def test_inline_html_in_markdown_is_read_as_text(tmp_path: Path) -> None:
    doc = written(tmp_path, "contacts.md",
        "# Contacts\n\n<!-- exported from the wiki -->\n"
        "Tom Hessel is the buyer at <b>Keller Polymers</b> in "
        "<a href=\"https://example.com\">Redditch</a>.<br>He joined in 2021.\n\n"
        "| Name | Role |\n|---|---|\n| Tom Hessel | Buyer<br/>Evesham &amp; Redditch |\n\n"
        "```\n<b>kept</b> <!-- kept -->\n```\n")
    assert "Tom Hessel is the buyer at Keller Polymers in Redditch.\nHe joined in 2021." \
        in doc.text
    assert "| Tom Hessel | Buyer; Evesham & Redditch |" in doc.text
    assert "wiki" not in doc.text and "```\n<b>kept</b> <!-- kept -->\n```" in doc.text
    found = [t for c in chunk_documents([doc]) for t in extract("Contacts", c.text)]
    assert Triplet("Tom Hessel", "role", "Buyer") in found  # a part of its own
    assert not [t for t in found if "<" in t.subject + t.object + t.predicate]
