"""Raw documents: read .txt / .md / .pdf files and folders, and cut them into token chunks.

Chunks are counted with the local model's tokenizer (semantic-text-splitter keeps sentences and
Markdown sections together where it can). Extractors turn chunks into passages with triplets.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from semantic_text_splitter import MarkdownSplitter, TextSplitter

from hopgraph.embed.local import count_tokens, load_tokenizer
from hopgraph.errors import InputError, UsageError
from hopgraph.ingest.loaders import read_text
from hopgraph.records import Problem

log = logging.getLogger(__name__)

SUFFIXES = (".txt", ".md", ".pdf")
DEFAULT_CHUNK_TOKENS = 512
DEFAULT_OVERLAP_TOKENS = 64


@dataclass(frozen=True)
class Document:
    """The text of one input file."""

    path: str
    text: str


@dataclass(frozen=True)
class Chunk:
    """A piece of a document (its path, position from 0), small enough for one LLM call."""

    doc: str
    index: int
    text: str
    tokens: int

    @property
    def id(self) -> str:
        """'<doc path>#<index>': the place named in problem reports."""
        return f"{self.doc}#{self.index}"


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
        elif path.suffix.lower() not in SUFFIXES:
            raise InputError(f"unsupported file type {path.suffix or '(none)'!r}",
                             where=str(path), fix=f"expected one of {', '.join(SUFFIXES)}")
        else:
            docs.extend(_read_file(path, problems))
    return docs


def _read_folder(folder: Path, problems: list[Problem]) -> list[Document]:
    files = sorted(p for p in folder.rglob("*") if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    docs: list[Document] = []
    readable = 0
    for path in files:
        suffix = path.suffix.lower()
        if suffix not in SUFFIXES:
            _skip(problems, path, f"unsupported file type {suffix or '(none)'!r}")
        elif suffix == ".pdf" and importlib.util.find_spec("pypdf") is None:
            _skip(problems, path, "reading PDF needs pypdf (pip install pypdf)")
        else:
            readable += 1
            docs.extend(_read_file(path, problems))
    if not readable:
        raise InputError(f"no {', '.join(SUFFIXES)} files found in this folder",
                         where=str(folder))
    return docs


def _skip(problems: list[Problem], path: Path, what: str) -> None:
    log.warning("%s: skipped: %s", path, what)
    problems.append(Problem(str(path), f"skipped: {what}"))


def _read_file(path: Path, problems: list[Problem]) -> list[Document]:
    """The file as a one-item list, or an empty list when a PDF holds no text."""
    if path.suffix.lower() == ".pdf":
        text = _read_pdf(path)
        if text.strip():
            return [Document(str(path), text)]
        _skip(problems, path, "the PDF has no extractable text (a scanned image?)")
        return []
    return [Document(str(path), read_text(path))]


def _read_pdf(path: Path) -> str:
    try:
        import pypdf
    except ImportError as exc:
        raise InputError("reading PDF needs pypdf", where=str(path),
                         fix="pip install pypdf") from exc
    try:
        reader = pypdf.PdfReader(path)
        return "\n\n".join(page.extract_text() or "" for page in reader.pages)
    except Exception as exc:  # pypdf raises many types on damaged files; all mean unreadable
        raise InputError(f"cannot read PDF ({type(exc).__name__}: {exc})",
                         where=str(path)) from exc


def chunk_documents(docs: Iterable[Document], chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
                    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS) -> list[Chunk]:
    """Split documents into chunks of at most `chunk_tokens`, overlapping by <= `overlap_tokens`."""
    if chunk_tokens < 1 or not 0 <= overlap_tokens < chunk_tokens:
        raise UsageError(f"need chunk_tokens >= 1 and 0 <= overlap_tokens < chunk_tokens, got "
                         f"{chunk_tokens} and {overlap_tokens}")
    tokenizer = load_tokenizer()
    plain = TextSplitter.from_huggingface_tokenizer(tokenizer, chunk_tokens, overlap=overlap_tokens)
    markdown = MarkdownSplitter.from_huggingface_tokenizer(tokenizer, chunk_tokens,
                                                           overlap=overlap_tokens)
    chunks: list[Chunk] = []
    for doc in docs:
        splitter = markdown if doc.path.lower().endswith(".md") else plain
        pieces = [piece for piece in splitter.chunks(doc.text) if piece.strip()]
        chunks.extend(Chunk(doc.path, i, piece, count_tokens(piece))
                      for i, piece in enumerate(pieces))
    return chunks
