"""Raw documents: reading files and folders (txt, md, pdf) and cutting them into token chunks."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from hopgraph.embed.local import count_tokens
from hopgraph.errors import InputError, UsageError
from hopgraph.ingest.documents import Document, chunk_documents, read_documents
from hopgraph.records import Problem


def test_read_documents_from_folder_and_files(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "b.txt").write_text("Bob lives in Bern.", encoding="utf-8")
    (tmp_path / "sub" / "a.md").write_text("# Alice\n\nAlice lives in Arles.", encoding="utf-8")
    (tmp_path / "data.csv").write_text("x,y\n", encoding="utf-8")
    (tmp_path / ".hidden.txt").write_text("ignored", encoding="utf-8")
    problems: list[Problem] = []
    docs = read_documents([tmp_path], problems)
    assert [Path(d.path).relative_to(tmp_path).as_posix() for d in docs] == ["b.txt", "sub/a.md"]
    assert docs[0].text == "Bob lives in Bern."
    assert len(problems) == 1 and problems[0].where.endswith("data.csv")
    assert "unsupported" in problems[0].what
    assert read_documents([tmp_path / "b.txt"]) == [docs[0]]


@pytest.mark.parametrize(("name", "content", "message"), [
    ("empty.txt", "  \n", "empty"),
    ("table.csv", "x,y", "unsupported file type"),
])
def test_bad_named_files_raise_input_error(tmp_path: Path, name: str, content: str | bytes,
                                           message: str) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message) as caught:
        read_documents([path])
    assert name in str(caught.value)


def test_text_that_is_not_utf8_is_read_as_windows_1252(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes("Café Müller, Zürich — 2019".encode("cp1252"))
    assert read_documents([tmp_path / "latin.txt"])[0].text == "Café Müller, Zürich — 2019"


def test_missing_path_and_folder_without_documents_raise(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_documents([tmp_path / "nope.txt"])
    (tmp_path / "only.csv").write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match=r"no \.txt"):
        read_documents([tmp_path])


def test_pdf_without_text_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    pypdf = pytest.importorskip("pypdf", reason="pypdf is missing: pip install -e .")
    writer = pypdf.PdfWriter()
    writer.add_blank_page(200, 200)
    with open(tmp_path / "scan.pdf", "wb") as out:
        writer.write(out)
    (tmp_path / "note.txt").write_text("Carol met Dan.", encoding="utf-8")
    problems: list[Problem] = []
    docs = read_documents([tmp_path], problems)
    assert [Path(d.path).name for d in docs] == ["note.txt"]
    assert problems[0].where.endswith("scan.pdf") and "no extractable text" in problems[0].what
    (tmp_path / "broken.pdf").write_bytes(b"not a pdf at all")
    with pytest.raises(InputError, match=r"broken\.pdf"):
        read_documents([tmp_path / "broken.pdf"])


def test_long_text_becomes_overlapping_chunks_within_the_limit() -> None:
    text = " ".join(f"Fact {i}: Alice {i} met Bob {i} in town {i}." for i in range(80))
    chunks = chunk_documents([Document("long.txt", text),
                              Document("short.md", "# Hi\n\nYo.", "md")],
                             chunk_tokens=60, overlap_tokens=25)
    long = [c for c in chunks if c.doc == "long.txt"]
    assert len(long) > 3
    assert [c.index for c in long] == list(range(len(long)))
    assert all(0 < c.tokens <= 60 and c.tokens == count_tokens(c.text) for c in long)
    for before, after in itertools.pairwise(long):
        first_sentence = after.text.split(".")[0] + "."
        assert first_sentence in before.text  # the next chunk starts inside this one
    assert [(c.doc, c.index, c.context, c.text) for c in chunks if c.doc == "short.md"] == [
        ("short.md", 0, "Hi", "Yo.")]
    with pytest.raises(UsageError, match="overlap"):
        chunk_documents([], chunk_tokens=10, overlap_tokens=10)


def test_a_long_table_is_cut_between_rows_with_its_header_in_every_piece() -> None:
    from hopgraph.ingest.fields import split

    header = "| Serial | Model | Where | Installed |\n|---|---|---|---|"
    rows = [f"| SW-K4-{1000 + i} | KX-4 Pro | Bramley's Fresh Kitchen, line {i} | 20{10 + i} |"
            for i in range(30)]
    text = "# Machines\n\nThe machines in the field.\n\n" + "\n".join([header, *rows]) + "\n"
    chunks = chunk_documents([Document("m.md", text, "md")], chunk_tokens=120)
    tables = [c for c in chunks if "|" in c.text]
    assert len(tables) > 2 and all(c.tokens <= 120 for c in chunks)
    assert all(c.text.split("\n\n")[-1].startswith(header + "\n") for c in tables)
    assert [row for c in tables for row in c.text.split("\n\n")[-1].split("\n")[2:]] == rows
    for chunk in tables:
        (table,) = split(chunk.text).tables
        assert table.header == ["Serial", "Model", "Where", "Installed"] and table.rows
