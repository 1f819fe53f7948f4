"""Read raw documents: .txt, .md and .pdf files (and folders of them) into text.

PDF text is normalised before anything else sees it: lines wrapped by the page are joined,
words hyphenated at a line end are mended ("manu-" + "facturing"), page numbers dropped, and
paragraphs separated by a blank line, so the chunker and the extractor read prose, not page
layout. A file with no suffix we know is read by its content: a PDF by its signature, text
when it decodes as UTF-8 or is UTF-16 (`ingest.encoding`).
"""

from __future__ import annotations

import importlib.util
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hopgraph.errors import InputError
from hopgraph.ingest.encoding import text_codec, universal_newlines
from hopgraph.ingest.loaders import read_text
from hopgraph.records import Problem

log = logging.getLogger(__name__)

SUFFIXES = (".txt", ".text", ".md", ".markdown", ".pdf")
PDF_SIGNATURE = b"%PDF-"


@dataclass(frozen=True)
class Document:
    """The text of one input file; `kind` is how its structure is read: "md", "txt" or
    "pdf" (already normalised to paragraphs)."""

    path: str
    text: str
    kind: str = "txt"


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
        text = pdf_paragraphs(_pdf_pages(path))
        if text.strip():
            return [Document(str(path), text, "pdf")]
        _skip(problems, path, "the PDF has no extractable text (a scanned image?)")
        return []
    return [Document(str(path), _text(path), kind)]


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


def _pdf_pages(path: Path) -> list[str]:
    try:
        import pypdf
    except ImportError as exc:
        raise InputError("reading PDF needs pypdf", where=str(path),
                         fix="pip install pypdf") from exc
    try:
        return [page.extract_text() or "" for page in pypdf.PdfReader(path).pages]
    except Exception as exc:  # pypdf raises many types on damaged files; all mean unreadable
        raise InputError(f"cannot read PDF ({type(exc).__name__}: {exc})",
                         where=str(path)) from exc


_PAGE_NUMBER = re.compile(r"^\s*(?:page\s+)?\d{1,4}(?:\s*(?:/|of)\s*\d{1,4})?\s*$", re.I)
_ENDS_SENTENCE = (".", "!", "?", ":", ";")
_CLOSING = "\"'”’)]»"
SHORT_LINE = 0.7  # a line shorter than this share of the page's line width ends its paragraph


def pdf_paragraphs(pages: list[str]) -> str:
    """PDF page texts as paragraphs separated by blank lines: wrapped lines joined,
    hyphenation at line ends mended, page numbers dropped. A line well short of the page's
    line width ends a paragraph (a heading, a list item, a paragraph's last line)."""
    lines = [line.strip() for page in pages for line in page.splitlines()]
    lines = [line for line in lines if not _PAGE_NUMBER.match(line)]
    lengths = [len(line) for line in lines if line]
    if not lengths:
        return ""
    width = sorted(lengths)[int(0.9 * (len(lengths) - 1))]  # a full line, long ones aside
    paragraphs: list[str] = []
    current = ""
    for line in lines:
        if not line:
            if current:
                paragraphs.append(current)
            current = ""
            continue
        short = len(line) < SHORT_LINE * width
        if current and (_bullet(line) or (short and ends_sentence(current)
                                          and not ends_sentence(line) and line[:1].isupper())):
            paragraphs.append(current)  # a list item, or a heading after a full stop
            current = ""
        current = join_wrapped(current, line)
        if short:
            paragraphs.append(current)
            current = ""
    if current:
        paragraphs.append(current)
    return "\n\n".join(paragraphs) + "\n"


_HYPHENATED = re.compile(r"[^\W\d_]-$")


def join_wrapped(text: str, line: str) -> str:
    """`line` appended to `text` as the continuation of a wrapped line: a word broken with a
    hyphen at the line end is mended when the next line goes on in lower case."""
    if not text:
        return line
    if _HYPHENATED.search(text) and line[:1].islower():
        return text[:-1] + line
    return f"{text} {line}"


_BULLET = re.compile(r"^(?:[-*•‣▪–]\s+|\d{1,3}[.)]\s+)")


def _bullet(line: str) -> bool:
    return bool(_BULLET.match(line))


def ends_sentence(line: str) -> bool:
    """Whether a line ends as a sentence does (so it is not a heading)."""
    line = line.rstrip().rstrip(_CLOSING)
    if _ABBREVIATION.search(line):
        return False  # "Moerlein Brewing Co.", "Smith Jr.": a name, not a sentence
    return line.endswith(_ENDS_SENTENCE)


_ABBREVIATION = re.compile(r"(?:^|\s)[A-Z][a-z]{0,2}\.$")
