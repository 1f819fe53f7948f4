"""Raw documents → chunks: each section's paragraphs packed into chunks of at most
`chunk_tokens`, the section's headings travelling with each chunk.

A chunk never spans two sections; a paragraph longer than a chunk is cut at sentences
(semantic-text-splitter with the local model's tokenizer), and a Markdown table between
rows, its header row and rule repeated at the top of each piece so each reads as a table.
The headings are the chunk's context: the first line of its passage (so they are embedded
with it) and, when the innermost names something, the title the offline extractor links
the chunk's mentions to. They are never read as the chunk's own text (a heading is not an
entity). A chunk of a PDF knows the page it starts on; every chunk carries its document's
metadata.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from semantic_text_splitter import TextSplitter

from hopgraph.embed.local import count_tokens, load_tokenizer
from hopgraph.errors import UsageError
from hopgraph.ingest.reading import SUFFIXES, Document, read_documents
from hopgraph.ingest.structure import Section, sections

__all__ = ["DEFAULT_CHUNK_TOKENS", "DEFAULT_OVERLAP_TOKENS", "SUFFIXES", "Chunk", "Document",
           "chunk_documents", "read_documents"]

DEFAULT_CHUNK_TOKENS = 160
DEFAULT_OVERLAP_TOKENS = 0
HEADING_SEPARATOR = " › "


@dataclass(frozen=True)
class Chunk:
    """A piece of a document (its path, position from 0), small enough for one LLM call.

    `text` is the chunk's own text; `context` the headings above it (joined, "" when none);
    `title` the innermost heading when it names something (else None); `page` the page it
    starts on (from 1; None for a document without pages); `metadata` its document's."""

    doc: str
    index: int
    text: str
    tokens: int
    context: str = ""
    title: str | None = None
    page: int | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """'<doc path>#<index>': the place named in problem reports."""
        return f"{self.doc}#{self.index}"

    @property
    def passage_metadata(self) -> dict[str, object]:
        """The stored passage's metadata: where it came from (`source` file, `chunk` number,
        `section` headings, `page` when it has one) and its document's own."""
        found: dict[str, object] = {"source": self.doc, "chunk": self.index,
                                    "section": self.context}
        if self.page is not None:
            found["page"] = self.page
        return {**found, **self.metadata}

    @property
    def passage(self) -> str:
        """What is stored and embedded: the headings' line, then the text."""
        return f"{self.context}\n{self.text}" if self.context else self.text


def chunk_documents(docs: Iterable[Document], chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
                    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS) -> list[Chunk]:
    """Split documents into chunks of at most `chunk_tokens` (headings line included), the
    pieces of a paragraph cut at sentences overlapping by <= `overlap_tokens`."""
    if chunk_tokens < 1 or not 0 <= overlap_tokens < chunk_tokens:
        raise UsageError(f"need chunk_tokens >= 1 and 0 <= overlap_tokens < chunk_tokens, got "
                         f"{chunk_tokens} and {overlap_tokens}")
    tokenizer = load_tokenizer()
    splitters: dict[int, TextSplitter] = {}

    def splitter(size: int) -> TextSplitter:
        if size not in splitters:
            splitters[size] = TextSplitter.from_huggingface_tokenizer(
                tokenizer, size, overlap=min(overlap_tokens, size - 1))
        return splitters[size]

    chunks: list[Chunk] = []
    for doc in docs:
        index = 0
        for section in sections(doc):
            for text, start in _pack(section, chunk_tokens, splitter):
                context = HEADING_SEPARATOR.join(section.headings)
                title = section.title
                passage = f"{context}\n{text}" if context else text
                chunks.append(Chunk(doc.path, index, text, count_tokens(passage), context,
                                    title, doc.page_at(start), doc.metadata))
                index += 1
    return chunks


MIN_BODY_TOKENS = 32  # room left for text however long the headings are


def _pack(section: Section, chunk_tokens: int, splitter: Callable[[int], TextSplitter]
          ) -> list[tuple[str, int]]:
    """The section's paragraphs packed greedily into texts that fit beside its headings,
    each with where it starts in the document's text."""
    heading_tokens = count_tokens(HEADING_SEPARATOR.join(section.headings)) + 1 \
        if section.headings else 0
    room = max(chunk_tokens - heading_tokens, min(MIN_BODY_TOKENS, chunk_tokens))
    pieces: list[tuple[str, int, int]] = []
    for paragraph, start in zip(section.paragraphs, section.starts, strict=True):
        size = count_tokens(paragraph)
        if size <= room:
            pieces.append((paragraph, size, start))
        elif _TABLE.match(paragraph):
            pieces.extend((piece, count_tokens(piece), start)
                          for piece in _table_pieces(paragraph, room, splitter))
        else:
            pieces.extend((piece, count_tokens(piece), start + max(paragraph.find(piece), 0))
                          for piece in splitter(room).chunks(paragraph) if piece.strip())
    texts: list[tuple[str, int]] = []
    current, used, first = "", 0, 0
    for piece, size, start in pieces:
        if current and used + size + 1 <= room:
            current, used = f"{current}\n\n{piece}", used + size + 1
        else:
            if current:
                texts.append((current, first))
            current, used, first = piece, size, start
    if current:
        texts.append((current, first))
    return texts


_TABLE = re.compile(r"^\s*\|.*\|\s*\n\s*\|?\s*:?-{2,}")


def _table_pieces(table: str, room: int, splitter: Callable[[int], TextSplitter]
                  ) -> list[str]:
    """A Markdown table too long for one chunk, cut between rows: each piece opens with the
    header row and its rule. A row too long even so is cut like text."""
    header, rule, *rows = table.split("\n")
    top = f"{header}\n{rule}"
    top_tokens = count_tokens(top) + 1
    pieces: list[str] = []
    current: list[str] = []
    used = top_tokens
    for row in rows:
        size = count_tokens(row) + 1
        if current and used + size > room:
            pieces.append("\n".join([top, *current]))
            current, used = [], top_tokens
        if top_tokens + size > room:
            pieces.extend(piece for piece in splitter(room).chunks(row) if piece.strip())
            continue
        current.append(row)
        used += size
    if current:
        pieces.append("\n".join([top, *current]))
    return pieces
