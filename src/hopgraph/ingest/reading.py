"""Read raw documents into text: plain text and Markdown, PDF, Word, PowerPoint, Excel, CSV,
HTML and e-mail (.eml) files, and folders of them.

A PDF is read page by page (`ingest.pdf`): its running headers, footers and page numbers
dropped, its paragraphs and headings found from the page, and where each page starts kept,
so the chunker and the extractor read prose, not page layout, and a chunk knows its page.
The other formats with structure are written as Markdown by their readers (`ingest.office`,
`ingest.sheets`, `ingest.html_text`, `ingest.mail`): headings, lists and pipe tables, a
slide or a sheet a page (a sheet's page labelled by its name).
A document that opens with an e-mail's header (From, To, Cc, Date, Subject) has those
values as its metadata. A file with no suffix we know is read by its content: a PDF by its
signature, a Word, PowerPoint or Excel file by the main part of its ZIP, an HTML page by
its opening tag, text when it decodes as UTF-8 or is UTF-16 (`ingest.encoding`).

A file a reader cannot read (damaged, encrypted, with no text, too large, or needing a
library that is not installed) is a problem naming it, and the other files are read.
"""

from __future__ import annotations

import logging
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path

from hopgraph.errors import InputError
from hopgraph.ingest.containers import sniff_kind
from hopgraph.ingest.encoding import text_codec, universal_newlines
from hopgraph.ingest.fields import Record, field_line
from hopgraph.ingest.html_text import looks_like_html, read_html
from hopgraph.ingest.loaders import read_text
from hopgraph.ingest.mail import read_eml
from hopgraph.ingest.markdown import (
    ReadText,
    Scalar,
    front_matter,
    piped,
    without_inline_html,
)
from hopgraph.ingest.office import read_docx, read_pptx
from hopgraph.ingest.pdf import read_pdf, text_pages
from hopgraph.ingest.quoting import unquote
from hopgraph.ingest.sheets import read_csv, read_xlsx
from hopgraph.records import Problem

log = logging.getLogger(__name__)

KINDS = {".txt": "txt", ".text": "txt", ".md": "md", ".markdown": "md", ".pdf": "pdf",
         ".docx": "docx", ".pptx": "pptx", ".xlsx": "xlsx", ".xlsm": "xlsx", ".csv": "csv",
         ".html": "html",
         ".htm": "html", ".eml": "eml"}
SUFFIXES = tuple(KINDS)
TEXT_SUFFIXES = (".txt", ".text", ".md", ".markdown", ".csv", ".html", ".htm", ".eml")
PDF_SIGNATURE = b"%PDF-"
# Formats users have that we do not read, and what to do instead (docs/extraction.md says why)
UNREAD = {".doc": "an old binary Word file: save it as .docx",
          ".xls": "an old binary Excel file: save it as .xlsx",
          ".ppt": "an old binary PowerPoint file: save it as .pptx",
          ".msg": "an Outlook message: save it as .eml"}


@dataclass(frozen=True)
class Document:
    """The text of one input file.

    `kind` is how its structure is read: "md" (Markdown: a Markdown file, what the readers
    of Word, PowerPoint, Excel, CSV and HTML write, and a PDF whose headings its type
    showed), "txt", or "pdf" (a PDF's text, already in paragraphs, read as plain text).
    `pages`: where each page (a PDF's page, a slide, a sheet) starts in `text`; empty for
    a document without pages. `page_labels`: the pages' names when they have names rather
    than numbers (a workbook's sheets), else empty.
    `metadata`: what the document says of itself (an e-mail's header, see `header_metadata`),
    given to each of its passages."""

    path: str
    text: str
    kind: str = "txt"
    pages: tuple[int, ...] = ()
    metadata: Mapping[str, Scalar] = field(default_factory=dict)
    page_labels: tuple[str, ...] = ()

    def page_at(self, offset: int) -> int | str | None:
        """The page the text at `offset` is on: its label for a document whose pages have
        names (a sheet's), else its number (from 1); None for a document without pages."""
        if not self.pages:
            return None
        number = max(1, bisect_right(self.pages, offset))
        if self.page_labels:
            return self.page_labels[min(number, len(self.page_labels)) - 1]
        return number


def kind_of(path: Path) -> str | None:
    """The format of a raw document ("md", "txt", "pdf", "docx", "pptx", "xlsx", "csv",
    "html", "eml"): by suffix, or by content for a file with no suffix (a PDF signature, an
    Office ZIP's main part, an HTML page's opening tag, else text: UTF-8, or UTF-16/32 as
    `ingest.encoding` tells it); None for anything else."""
    suffix = path.suffix.lower()
    if suffix:
        return KINDS.get(suffix)  # None for .png, .doc...: not a document we read
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError as exc:
        raise InputError(f"cannot read file ({exc})", where=str(path)) from exc
    if head.startswith(PDF_SIGNATURE):
        return "pdf"
    sniffed = sniff_kind(head, path)
    if sniffed is not None:
        return sniffed
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


def unsupported(path: Path) -> str:
    """Why a file is not read: its type, and what to do for a format we know of."""
    what = f"unsupported file type {path.suffix or '(none)'!r}"
    hint = UNREAD.get(path.suffix.lower())
    return f"{what} ({hint})" if hint else what


def read_documents(paths: Iterable[str | Path], problems: list[Problem] | None = None
                   ) -> list[Document]:
    """Read raw documents (`SUFFIXES`) and folders of them; files skipped or that cannot be
    read are appended to `problems`."""
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
                raise InputError(unsupported(path), where=str(path),
                                 fix=f"expected one of {', '.join(SUFFIXES)} (or a file "
                                 "with no suffix holding text)")
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
            _skip(problems, path, unsupported(path))
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


NO_TEXT = {"pdf": "the PDF has no extractable text (a scanned image?)"}


def read_file(path: Path, kind: str, problems: list[Problem]) -> list[Document]:
    """The file of format `kind` (`kind_of`) as a one-item list, or an empty list (and a
    problem) when it cannot be read or has no text. A text file that cannot be read is an
    InputError."""
    if kind in ("md", "txt"):
        front, text = front_matter(_text(path)) if kind == "md" else ({}, unquote(_text(path)))
        text = piped(without_inline_html(text)) if kind == "md" else text
        paged = text_pages(text) if kind == "txt" else None  # pages cut by form feeds
        if paged is not None:
            return [Document(str(path), paged.text, kind, paged.pages,
                             header_metadata(paged.text))]
        return [Document(str(path), text, kind,
                         metadata={**front, **header_metadata(text)})]
    try:
        read, structure = _read_format(path, kind)
        if kind == "eml" and structure == "txt":
            read = ReadText(unquote(read.text))
    except InputError as exc:
        _skip(problems, path, f"{exc.what}; {exc.fix}" if exc.fix else exc.what)
        return []
    if not read.text.strip():
        _skip(problems, path, NO_TEXT.get(kind, f"no text found in the {kind} file"))
        return []
    return [Document(str(path), read.text, structure, read.pages, header_metadata(read.text),
                     read.labels)]


def _read_format(path: Path, kind: str) -> tuple[ReadText, str]:
    """A file with structure read by its format's reader, and how the chunker reads the
    text ("md" for what the readers write as Markdown)."""
    if kind == "pdf":
        pdf = read_pdf(path)
        return ReadText(pdf.text, pdf.pages), pdf.kind
    if kind == "eml":
        return read_eml(path)
    if kind == "html":
        with path.open("rb") as handle:
            head = handle.read(1 << 16)
        codec = text_codec(head)  # a page saved as UTF-16 has its tags in two bytes a letter
        if codec not in (None, "utf-8"):
            head = head.decode(codec, errors="ignore").encode()
        if not looks_like_html(head):  # a page saved as text, or text named .html
            log.info("%s: no HTML markup in it; read as plain text", path)
            return ReadText(_text(path)), "txt"
        return read_html(path), "md"
    readers = {"docx": read_docx, "pptx": read_pptx, "xlsx": read_xlsx, "csv": read_csv}
    return readers[kind](path), "md"


EMAIL_HEADERS = {"from": "from", "to": "to", "cc": "cc", "subject": "subject", "date": "date",
                 "sent": "date", "re": "subject"}  # "Re:", a memo's subject


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
