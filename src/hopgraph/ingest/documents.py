"""Raw documents → chunks: each section's paragraphs packed into chunks of at most
`chunk_tokens`, the section's headings travelling with each chunk.

A chunk never spans two sections; a paragraph longer than a chunk is cut at sentences
(semantic-text-splitter with the local model's tokenizer). The headings are the chunk's
context: the first line of its passage (so they are embedded with it) and, when the
innermost names something, the title the offline extractor links the chunk's mentions to.
They are never read as the chunk's own text (a heading is not an entity).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from semantic_text_splitter import TextSplitter

from hopgraph.embed.local import count_tokens, load_tokenizer
from hopgraph.errors import UsageError
from hopgraph.ingest.reading import SUFFIXES, Document, read_documents
from hopgraph.ingest.structure import Section, heading_entity, names_something, sections

__all__ = ["DEFAULT_CHUNK_TOKENS", "DEFAULT_OVERLAP_TOKENS", "SUFFIXES", "Chunk", "Document",
           "chunk_documents", "read_documents"]

DEFAULT_CHUNK_TOKENS = 160
DEFAULT_OVERLAP_TOKENS = 0
HEADING_SEPARATOR = " › "


@dataclass(frozen=True)
class Chunk:
    """A piece of a document (its path, position from 0), small enough for one LLM call.

    `text` is the chunk's own text; `context` the headings above it (joined, "" when none);
    `title` the innermost heading when it names something (else None)."""

    doc: str
    index: int
    text: str
    tokens: int
    context: str = ""
    title: str | None = None

    @property
    def id(self) -> str:
        """'<doc path>#<index>': the place named in problem reports."""
        return f"{self.doc}#{self.index}"

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
            for text in _pack(section, chunk_tokens, splitter):
                context = HEADING_SEPARATOR.join(section.headings)
                title = (heading_entity(section.heading) if section.heading and
                         names_something(section.heading) else None)
                passage = f"{context}\n{text}" if context else text
                chunks.append(Chunk(doc.path, index, text, count_tokens(passage), context,
                                    title))
                index += 1
    return chunks


MIN_BODY_TOKENS = 32  # room left for text however long the headings are


def _pack(section: Section, chunk_tokens: int, splitter: Callable[[int], TextSplitter]
          ) -> list[str]:
    """The section's paragraphs packed greedily into texts that fit beside its headings."""
    heading_tokens = count_tokens(HEADING_SEPARATOR.join(section.headings)) + 1 \
        if section.headings else 0
    room = max(chunk_tokens - heading_tokens, min(MIN_BODY_TOKENS, chunk_tokens))
    pieces: list[tuple[str, int]] = []
    for paragraph in section.paragraphs:
        size = count_tokens(paragraph)
        if size <= room:
            pieces.append((paragraph, size))
        else:
            pieces.extend((piece, count_tokens(piece)) for piece in
                          splitter(room).chunks(paragraph) if piece.strip())
    texts: list[str] = []
    current, used = "", 0
    for piece, size in pieces:
        if current and used + size + 1 <= room:
            current, used = f"{current}\n\n{piece}", used + size + 1
        else:
            if current:
                texts.append(current)
            current, used = piece, size
    if current:
        texts.append(current)
    return texts
