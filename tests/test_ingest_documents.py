"""Raw documents: reading files and folders (txt, md, pdf; the other formats in
test_ingest_formats.py) and cutting them into token chunks."""

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
    (tmp_path / "data.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (tmp_path / ".hidden.txt").write_text("ignored", encoding="utf-8")
    problems: list[Problem] = []
    docs = read_documents([tmp_path], problems)
    assert [Path(d.path).relative_to(tmp_path).as_posix() for d in docs] == ["b.txt", "sub/a.md"]
    assert docs[0].text == "Bob lives in Bern."
    assert len(problems) == 1 and problems[0].where.endswith("data.png")
    assert "unsupported" in problems[0].what
    assert read_documents([tmp_path / "b.txt"]) == [docs[0]]


@pytest.mark.parametrize(("name", "content", "message"), [
    ("empty.txt", "  \n", "empty"),
    ("photo.png", b"\x89PNG\r\n\x1a\n", "unsupported file type"),
    ("letter.doc", b"\xd0\xcf\x11\xe0", r"old binary Word file: save it as \.docx"),
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
    (tmp_path / "only.png").write_bytes(b"\x89PNG\r\n\x1a\n")
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
    (tmp_path / "broken.pdf").write_bytes(b"not a pdf at all")  # a problem, not a crash
    assert read_documents([tmp_path / "broken.pdf"], problems) == []
    assert problems[-1].where.endswith("broken.pdf") and "cannot read PDF" in problems[-1].what


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


def one_line(sentences: int, start: int = 0) -> str:
    """A paragraph of made-up sentences with no line break."""
    return " ".join(f"Person {i} met Ada {i % 7} in Town {i % 13} on {1 + i % 28} May."
                    for i in range(start, start + sentences))


@pytest.mark.slow
def test_a_long_one_line_paragraph_is_cut_a_window_at_a_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Never tokenised whole: every piece fits the limit, the text comes back in order, and
    the chunker reports its progress between pieces."""
    from hopgraph.ingest import documents

    counted: list[int] = []

    def counting(text: str) -> int:
        counted.append(len(text))
        return count_tokens(text)

    monkeypatch.setattr(documents, "count_tokens", counting)
    text = one_line(4000)  # ~170k characters, 14 windows
    told: list[tuple[str, int, int]] = []
    chunks = chunk_documents([Document("long.md", f"# Notes\n\n{text}\n", "md")],
                             progress=lambda *event: told.append(event))
    assert len(text) > 10 * documents.WINDOW_CHARS
    assert max(counted) <= documents.WINDOW_CHARS
    assert all(0 < c.tokens <= 160 and c.tokens == count_tokens(c.passage) for c in chunks)
    assert " ".join(c.text for c in chunks).split() == text.split()
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert len(told) > 10 and {stage for stage, _, _ in told} == {"chunk"}
    assert [done for _, done, _ in told] == sorted(done for _, done, _ in told)
    assert told[-1][1] == told[-1][2] == len(f"# Notes\n\n{text}\n")


@pytest.mark.parametrize(("size", "overlap"), [(160, 0), (60, 20)])
def test_a_paragraph_cut_by_windows_is_cut_as_the_splitter_cuts_it_whole(
        size: int, overlap: int) -> None:
    from semantic_text_splitter import TextSplitter

    from hopgraph.embed.local import load_tokenizer
    from hopgraph.ingest.documents import WINDOW_CHARS

    text = one_line(1200)
    assert len(text) > 3 * WINDOW_CHARS
    whole = TextSplitter.from_huggingface_tokenizer(load_tokenizer(), size, overlap=overlap)
    chunks = chunk_documents([Document("long.txt", text)], size, overlap)
    assert [c.text for c in chunks] == whole.chunks(text)


def test_a_progress_that_raises_stops_the_chunking_between_pieces() -> None:
    class Stop(Exception):
        pass

    told: list[int] = []

    def stop_at_the_second(stage: str, done: int, total: int) -> None:
        told.append(done)
        if len(told) == 2:
            raise Stop

    text = one_line(2000)
    with pytest.raises(Stop):
        chunk_documents([Document("long.txt", text)], progress=stop_at_the_second)
    assert len(told) == 2 and 0 < told[0] < told[1] < len(text)


@pytest.mark.parametrize(("name", "data"), [
    ("le.txt", "\ufeffGrace Hopper worked at Harvard.\r\n\r\nShe wrote COBOL.".encode(
        "utf-16-le")),
    ("be.md", "\ufeff# Hopper\r\n\r\nGrace Hopper worked at Harvard.".encode("utf-16-be")),
    ("bare-le.txt", "Grace Hopper worked at Harvard.\n".encode("utf-16-le")),
    ("bare-be", "Grace Hopper worked at Harvard.\n".encode("utf-16-be")),
    ("marked", "Grace Hopper worked at Harvard.".encode("utf-16")),
])
def test_utf16_text_is_read_as_text(tmp_path: Path, name: str, data: bytes) -> None:
    """What Windows editors save as "Unicode": with a byte-order mark (little or big end),
    or without one when its zero bytes show it; line ends as "\\n"."""
    from hopgraph.ingest.inputs import sort_inputs

    path = tmp_path / name
    path.write_bytes(data)
    assert sort_inputs([path]).documents == [path]
    [doc] = read_documents([path])
    assert "Grace Hopper worked at Harvard." in doc.text
    assert "\x00" not in doc.text and "\r" not in doc.text and "\ufeff" not in doc.text


def test_binary_data_with_no_suffix_is_still_not_text(tmp_path: Path) -> None:
    (tmp_path / "blob").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00")
    (tmp_path / "note.txt").write_text("Carol met Dan.", encoding="utf-8")
    problems: list[Problem] = []
    assert [Path(d.path).name for d in read_documents([tmp_path], problems)] == ["note.txt"]
    assert problems[0].where.endswith("blob")


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


def test_a_short_tables_rows_are_a_chunk_each_apart_from_the_text_around_it() -> None:
    header = "| Supplier | Contract | Owner |\n|---|---|---|"
    rows = ["| Keller Polymers B.V. | MSA-2023-014 | Priya Castell |",
            "| Dunmore Recycling Ltd | MSA-2025-003 | Priya Castell |"]
    text = ("# Approved suppliers\n\nThe register lists every approved supplier.\n\n"
            + "\n".join([header, *rows]) + "\n\nReviewed each quarter.\n")
    chunks = chunk_documents([Document("s.md", text, "md")])
    assert [c.text for c in chunks] == ["The register lists every approved supplier.",
                                        f"{header}\n{rows[0]}", f"{header}\n{rows[1]}",
                                        "Reviewed each quarter."]
    assert {c.context for c in chunks} == {"Approved suppliers"}
    _spans_hold_their_chunks(text, chunks)


def _squeezed(text: str) -> str:
    """Text without what joining lines changes: whitespace and hyphens."""
    return "".join(text.replace("-", "").split())


def _spans_hold_their_chunks(text: str, chunks: list) -> None:
    """Each chunk's span is the part of `text` it was cut from: the same words in the same
    order, lines joined aside (a table's later piece without its repeated header)."""
    for chunk in chunks:
        span = text[chunk.start:chunk.end]
        assert 0 <= chunk.start < chunk.end <= len(text)
        own = chunk.text
        if own.startswith("|") and not span.startswith(own.split("\n", 1)[0]):
            own = own.split("\n", 2)[2]  # the header and rule are repeated, not cut from here
        assert _squeezed(span) == _squeezed(own), (chunk.index, span, own)


def test_chunk_spans_in_markdown_are_the_chunk_text() -> None:
    text = ("# Safety\n\nRead this first.\n\n## Battery\n\nCharge the pack at room temperature."
            "\n\n## Storage\n\nKeep it dry. Ærø and Zoë store theirs in 東京.\n")
    chunks = chunk_documents([Document("s.md", text, "md")])
    assert [(c.headings, text[c.start:c.end]) for c in chunks] == [
        (("Safety",), "Read this first."),
        (("Safety", "Battery"), "Charge the pack at room temperature."),
        (("Safety", "Storage"), "Keep it dry. Ærø and Zoë store theirs in 東京.")]
    assert chunks[1].passage_metadata["headings"] == ["Safety", "Battery"]
    assert chunks[1].passage_metadata["type"] == "md"


def test_chunk_spans_cover_hard_wrapped_lines_they_joined() -> None:
    text = ("SAFETY NOTICE\n\n"
            "  The battery pack of the unit must be charged at room temperature and\n"
            "  never left on a charger overnight, because the cells warm up when they\n"
            "  are full and the case is not vent-\n"
            "  ed for that heat at all.\n\n"
            "CONTACTS\n\nContact: Grace Whitlow\nPhone: 0123 456\n")
    chunks = chunk_documents([Document("n.txt", text, "txt")], chunk_tokens=64)
    wrapped = chunks[0]
    assert wrapped.headings == ("SAFETY NOTICE",)
    assert "\n" not in wrapped.text and "vented" in wrapped.text  # joined, hyphen mended
    assert text[wrapped.start:wrapped.end] == text[text.index("The battery"):
                                                   text.index("at all.") + len("at all.")]
    assert chunks[1].headings == ("SAFETY NOTICE", "CONTACTS")
    assert text[chunks[1].start:chunks[1].end] == "Contact: Grace Whitlow\nPhone: 0123 456"
    _spans_hold_their_chunks(text, chunks)
    # Cut at sentences into several chunks, each span still its own words.
    long = "\n".join(f"Line {i} of the notice says the pack was charged\nin the lab"
                     f" on day {i}." for i in range(80)) + "\n"
    _spans_hold_their_chunks(long, chunk_documents([Document("l.txt", long, "txt")],
                                                   chunk_tokens=40, overlap_tokens=8))


def test_a_table_cut_in_pieces_spans_its_own_rows() -> None:
    header = "| Serial | Model | Where |\n|---|---|---|"
    rows = [f"| SW-{1000 + i} | KX-4 Pro | Bramley's, line {i} |" for i in range(40)]
    text = "# Machines\n\n" + "\n".join([header, *rows]) + "\n"
    chunks = chunk_documents([Document("m.md", text, "md")], chunk_tokens=80)
    assert len(chunks) > 2
    assert text[chunks[0].start:].startswith(header)  # the first piece holds the header
    for chunk in chunks[1:]:
        span = text[chunk.start:chunk.end]
        assert span.startswith("| SW-") and span == "\n".join(chunk.text.split("\n")[2:])
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)
    _spans_hold_their_chunks(text, chunks)


def test_a_numbered_list_too_long_for_the_chunk_before_it_starts_a_chunk() -> None:
    opening = ("I wrote to you in June to report the loss of a wheel from one of our coaches. "
               "You asked for the outcome of the audit, which I now enclose. " * 3).strip()
    items = [f"{n}. Point {n} of the plan: " + "the work was done and checked. " * 4
             for n in range(1, 6)]
    text = "\n\n".join([opening, "In summary:", *items, "Yours faithfully,"])
    chunks = chunk_documents([Document("letter.txt", text, "txt")], chunk_tokens=160)
    first = next(c for c in chunks if "1. Point 1" in c.text)
    assert first.text.startswith("1. Point 1") and "2. Point 2" in first.text
    assert opening[:40] not in first.text
    _spans_hold_their_chunks(text, chunks)
    # a list that fits with the text before it stays with it
    short = "\n\n".join(["In summary:", "1. Indicators fitted.", "2. Drivers briefed."])
    assert [c.text for c in chunk_documents([Document("s.txt", short, "txt")])] == [
        "In summary:\n\n1. Indicators fitted.\n\n2. Drivers briefed."]

