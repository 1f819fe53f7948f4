"""Raw documents' structure: PDF text normalised, sections and headings, what each input is,
and chunks that keep to their section with the headings as context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hopgraph.errors import InputError
from hopgraph.ingest.documents import Chunk, chunk_documents
from hopgraph.ingest.inputs import sort_inputs
from hopgraph.ingest.reading import Document, pdf_paragraphs
from hopgraph.ingest.structure import names_something, sections

WRAPPED_PAGE = """Quarterly report
The Kestrel Probe was designed by Tomas Ekdahl at the Bergen workshop, where the
company has built marine instruments since 2011. Its sensor comes from a manu-
facturer in Trondheim that Ingrid Solberg chose after a long trial.
Suppliers
Halvard Optics makes the optical sensor.
2
"""


def test_pdf_text_is_joined_mended_and_paragraphed() -> None:
    text = pdf_paragraphs([WRAPPED_PAGE])
    paragraphs = text.strip().split("\n\n")
    assert paragraphs[0] == "Quarterly report"
    assert paragraphs[1].startswith("The Kestrel Probe was designed by Tomas Ekdahl at the "
                                    "Bergen workshop, where the company")
    assert "from a manufacturer in Trondheim" in paragraphs[1]  # hyphenation mended
    assert "\n" not in paragraphs[1]  # wrapped lines joined
    assert paragraphs[2:] == ["Suppliers", "Halvard Optics makes the optical sensor."]  # no "2"


def test_a_hyphen_before_a_capital_is_kept() -> None:
    text = pdf_paragraphs(["The partnership between Brightwater and the Saint-\n"
                           "Malo yard began when the first hull was laid down in 2014, a year\n"
                           "late.\n"])
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
    ("Maria Lind", True), ("Riemann integral", True), (None, False)])
def test_which_headings_name_something(heading: str | None, entity: bool) -> None:
    assert names_something(heading) is entity


def test_chunks_keep_to_sections_and_carry_the_headings() -> None:
    body = " ".join(f"Sentence number {i} says that Ada met Bob in Paris." for i in range(60))
    doc = Document("d.md", f"# Acme\n\n## Leadership\n\nIngrid leads Acme.\n\n## History\n\n"
                   f"{body}\n", "md")
    chunks = chunk_documents([doc], chunk_tokens=64, overlap_tokens=0)
    assert chunks[0] == Chunk("d.md", 0, "Ingrid leads Acme.", chunks[0].tokens,
                              "Acme › Leadership", None)
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
    (tmp_path / "data.csv").write_text("x,y", encoding="utf-8")
    (tmp_path / "blob").write_bytes(b"\x00\x01binary")
    found = sort_inputs([tmp_path])
    assert sorted(p.name for p in found.rows) == ["rows.jsonl", "rows.txt"]
    assert sorted(p.name for p in found.documents) == ["README", "notes.txt", "page.md"]
    assert sorted(Path(p.where).name for p in found.skipped) == ["blob", "data.csv"]
    forced = sort_inputs([tmp_path / "rows.txt"], documents_only=True)
    assert forced.documents == [tmp_path / "rows.txt"]
    with pytest.raises(InputError, match=r"unsupported file type '\.csv'") as caught:
        sort_inputs([tmp_path / "data.csv"])
    assert "data.csv" in str(caught.value)
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
