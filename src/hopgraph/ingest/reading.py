"""Read raw documents: .txt, .md and .pdf files (and folders of them) into text.

A PDF is read page by page (`ingest.pdf`): its running headers, footers and page numbers
dropped, its paragraphs and headings found from the page, and where each page starts kept,
so the chunker and the extractor read prose, not page layout, and a chunk knows its page.
A document that opens with an e-mail's header (From, To, Cc, Date, Subject) has those
values as its metadata. A file with no suffix we know is read by its content: a PDF by its
signature, text when it decodes as UTF-8 or is UTF-16 (`ingest.encoding`).
"""

from __future__ import annotations

import importlib.util
import logging
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path

from hopgraph.errors import InputError
from hopgraph.ingest.encoding import text_codec, universal_newlines
from hopgraph.ingest.fields import Record, field_line
from hopgraph.ingest.loaders import read_text
from hopgraph.ingest.pdf import read_pdf
from hopgraph.records import Problem

log = logging.getLogger(__name__)

SUFFIXES = (".txt", ".text", ".md", ".markdown", ".pdf")
PDF_SIGNATURE = b"%PDF-"


@dataclass(frozen=True)
class Document:
    """The text of one input file.

    `kind` is how its structure is read: "md" (Markdown, and a PDF whose headings its type
    showed), "txt", or "pdf" (a PDF's text, already in paragraphs, read as plain text).
    `pages`: where each page starts in `text` (a PDF's; empty for other files).
    `metadata`: what the document says of itself (an e-mail's header, see `header_metadata`),
    given to each of its passages."""

    path: str
    text: str
    kind: str = "txt"
    pages: tuple[int, ...] = ()
    metadata: Mapping[str, str] = field(default_factory=dict)

    def page_at(self, offset: int) -> int | None:
        """The page (from 1) the text at `offset` is on; None for a document without pages."""
        if not self.pages:
            return None
        return max(1, bisect_right(self.pages, offset))


def kind_of(path: Path) -> str | None:
    """"md", "txt" or "pdf" for a raw document: by suffix, or by content for a file with no
    suffix (a PDF signature, else text: UTF-8, or UTF-16/32 as `ingest.encoding` tells it);
    None for anything else."""
    suffix = path.suffix.lower()
    if suffix in (".md", ".markdown"):
        return "md"
    if suffix == ".pdf":
        return "pdf"
    if suffix in (".txt", ".text"):
        return "txt"
    if suffix:
        return None  # .csv, .html, .png...: not prose we know how to read
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError as exc:
        raise InputError(f"cannot read file ({exc})", where=str(path)) from exc
    if head.startswith(PDF_SIGNATURE):
        return "pdf"
    if text_codec(head) not in (None, "utf-8"):
        return "txt"  # UTF-16 or UTF-32 text: zero bytes, yet not binary
    if b"\x00" in head:
        return None
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not merely a character cut at the 4 kB boundary
            return None
    return "txt"


def read_documents(paths: Iterable[str | Path], problems: list[Problem] | None = None
                   ) -> list[Document]:
    """Read .txt/.md/.pdf files and folders of them; skipped files are appended to `problems`."""
    problems = [] if problems is None else problems
    docs: list[Document] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            docs.extend(_read_folder(path, problems))
        elif not path.exists():
            raise InputError("no such file or folder", where=str(path))
        else:
            kind = kind_of(path)
            if kind is None:
                raise InputError(f"unsupported file type {path.suffix or '(none)'!r}",
                                 where=str(path), fix=f"expected one of {', '.join(SUFFIXES)} "
                                 "(or a file with no suffix holding text)")
            docs.extend(read_file(path, kind, problems))
    return docs


def folder_files(folder: Path) -> list[Path]:
    """The files of a folder and its subfolders, in name order, hidden ones left out."""
    return sorted(p for p in folder.rglob("*") if p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def _read_folder(folder: Path, problems: list[Problem]) -> list[Document]:
    docs: list[Document] = []
    readable = 0
    for path in folder_files(folder):
        kind = kind_of(path)
        if kind is None:
            _skip(problems, path, f"unsupported file type {path.suffix or '(none)'!r}")
        elif kind == "pdf" and importlib.util.find_spec("pypdf") is None:
            _skip(problems, path, "reading PDF needs pypdf (pip install pypdf)")
        else:
            readable += 1
            docs.extend(read_file(path, kind, problems))
    if not readable:
        raise InputError(f"no {', '.join(SUFFIXES)} files found in this folder",
                         where=str(folder))
    return docs


def _skip(problems: list[Problem], path: Path, what: str) -> None:
    log.info("%s: not read: %s", path, what)
    problems.append(Problem(str(path), what))


def read_file(path: Path, kind: str, problems: list[Problem]) -> list[Document]:
    """The file as a one-item list, or an empty list (and a problem) when it has no text."""
    if kind == "pdf":
        read = read_pdf(path)
        if read.text.strip():
            return [Document(str(path), read.text, read.kind, read.pages,
                             header_metadata(read.text))]
        _skip(problems, path, "the PDF has no extractable text (a scanned image?)")
        return []
    text = _text(path)
    return [Document(str(path), text, kind, metadata=header_metadata(text))]


EMAIL_HEADERS = {"from": "from", "to": "to", "cc": "cc", "subject": "subject", "date": "date",
                 "sent": "date"}


def header_metadata(text: str) -> dict[str, str]:
    """An e-mail's header as metadata: the From, To, Cc, Subject and Date (or Sent) lines of
    the key–value block the text opens with, when it has From and To or Subject. Keys are
    lower case; the date is ISO 8601 when it can be read ("2025-02-27T16:42:10+00:00", so a
    filter can compare it), else as written; a value wrapped onto the next lines is joined."""
    record = Record()
    for line in text.lstrip("\ufeff\n\r\t ").splitlines():
        if not line.strip():
            break
        pair = field_line(line)
        if pair is not None:
            record.fields.append(pair)
        elif record.fields:  # a value wrapped onto the next line
            key, value = record.fields[-1]
            record.fields[-1] = (key, f"{value} {line.strip()}")
        else:
            return {}
    if not record.is_email:
        return {}
    found: dict[str, str] = {}
    for key, value in record.fields:
        name = EMAIL_HEADERS.get(key.lower())
        if name is not None and name not in found:
            found[name] = _iso_date(value) if name == "date" else value
    return found


def _iso_date(value: str) -> str:
    try:
        return parsedate_to_datetime(value).isoformat()
    except (TypeError, ValueError, IndexError):
        return value


def _text(path: Path) -> str:
    """A text document: UTF-8 or UTF-16/32 (`loaders.read_text`), else Windows-1252 (what
    older editors save; said in the log)."""
    try:
        return read_text(path)
    except InputError as exc:
        if not isinstance(exc.__cause__, UnicodeDecodeError):
            raise
    text = universal_newlines(path.read_bytes().decode("cp1252", errors="replace"))
    log.warning("%s: not UTF-8; read as Windows-1252", path)
    return text
