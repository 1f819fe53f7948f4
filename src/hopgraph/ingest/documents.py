"""Raw documents → chunks: each section's paragraphs packed into chunks of at most
`chunk_tokens`, the section's headings travelling with each chunk.

A chunk never spans two sections, and a numbered list that will not fit in the chunk it
would start in begins a chunk of its own (`_list_overflows`): its items are read together,
not the first glued to the text before. A paragraph longer than a chunk is cut at sentences
(semantic-text-splitter with the local model's tokenizer). A Markdown table is cut between
rows, one row a chunk (`TABLE_ROWS`), its header row and rule repeated at the top of each so
each reads as a table: a row is a record, found and cited on its own.
The headings are the chunk's context: the first line of its passage (so they are embedded
with it) and, when the innermost names something, the title the offline extractor links
the chunk's mentions to. They are never read as the chunk's own text (a heading is not an
entity). A chunk knows where it came from: its document, the page (or slide, or sheet) it
starts on, its headings and its span in the document's text; every chunk carries its
document's metadata.

A chunk's span (`start`, `end`) is the part of the document's text (`Document.text`) it was
cut from: `text[start:end]` holds the chunk's words in order. It is the chunk's text itself
unless the text was normalised: lines wrapped by hand or by the page are joined with a space
(a hyphen that broke a word mended), lines lose their indentation, and a piece of a table cut
in pieces repeats the table's header row and rule, which the span covers only for the first
piece (the others span their own rows).

A paragraph of more than `window_chars` characters (a file with no line break) is never
tokenised whole: the splitter reads it a window at a time, and the end of each window, which
may have cut a piece short, is read again at the start of the next, so the pieces are those
the splitter would cut from the whole paragraph. The cost is linear in its length, memory
stays bounded, and no call into the tokenizer is given more than one window: a call can hold
the interpreter lock throughout (a server answered nothing while one counted a very long
paragraph whole). Between windows the chunker tells `progress`, where a job can stop.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from semantic_text_splitter import TextSplitter

from hopgraph.embed.local import count_tokens, load_tokenizer
from hopgraph.errors import UsageError
from hopgraph.ingest.markdown import Scalar
from hopgraph.ingest.reading import SUFFIXES, Document, read_documents
from hopgraph.ingest.spans import Placed
from hopgraph.ingest.structure import Section, sections

Progress = Callable[[str, int, int], None]  # (stage, done, total), as `ingest.writer`'s

__all__ = ["DEFAULT_CHUNK_TOKENS", "DEFAULT_OVERLAP_TOKENS", "SUFFIXES", "Chunk", "Document",
           "chunk_documents", "read_documents"]

DEFAULT_CHUNK_TOKENS = 160
DEFAULT_OVERLAP_TOKENS = 0
HEADING_SEPARATOR = " › "
WINDOW_CHARS = 4_000  # a paragraph longer than this is split a window at a time


@dataclass(frozen=True)
class Chunk:
    """A piece of a document (its path, position from 0), small enough for one LLM call.

    `text` is the chunk's own text; `context` the headings above it (joined, "" when none;
    `headings` one by one); `title` the innermost heading when it names something (else
    None); `page` the page it starts on (from 1; a slide's number, a sheet's name; None for
    a document without pages); `metadata` its document's; `start`/`end` its span in the
    document's text (see the module's docstring); `kind` the document's format when its
    name has no suffix to tell it ("pdf", "md", "txt")."""

    doc: str
    index: int
    text: str
    tokens: int
    context: str = ""
    title: str | None = None
    page: int | str | None = None
    metadata: Mapping[str, Scalar] = field(default_factory=dict)
    headings: tuple[str, ...] = ()
    start: int = 0
    end: int = 0
    kind: str = "txt"

    @property
    def id(self) -> str:
        """'<doc path>#<index>': the place named in problem reports."""
        return f"{self.doc}#{self.index}"

    @property
    def type(self) -> str:
        """The document's format: its name's suffix in lower case without the dot ("pdf",
        "md", "docx"), else `kind`."""
        suffix = PurePosixPath(self.doc.replace("\\", "/")).suffix.lower()[1:]
        return suffix if suffix.isalnum() else self.kind

    @property
    def passage_metadata(self) -> dict[str, object]:
        """The stored passage's metadata: its document's own (an e-mail's header), then where
        it came from, flat so a filter reaches each: `file` (the document, also `source` as
        before), `type`, `page` when it has one, `headings` (and `section`, joined), `start`
        and `end` in the document's text, `chunk` number. Where it came from wins a name
        clash (docs/filters.md)."""
        found: dict[str, object] = {"source": self.doc, "file": self.doc, "type": self.type,
                                    "chunk": self.index, "section": self.context,
                                    "headings": list(self.headings), "start": self.start,
                                    "end": self.end}
        if self.page is not None:
            found["page"] = self.page
        return {**self.metadata, **found}

    @property
    def passage(self) -> str:
        """What is stored and embedded: the headings' line, then the text."""
        return f"{self.context}\n{self.text}" if self.context else self.text


def chunk_documents(docs: Iterable[Document], chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
                    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS,
                    progress: Progress | None = None) -> list[Chunk]:
    """Split documents into chunks of at most `chunk_tokens` (headings line included), the
    pieces of a paragraph cut at sentences overlapping by <= `overlap_tokens`.

    `progress("chunk", characters done, characters in all)` is called between pieces, every
    WINDOW_CHARS characters at most: a caller that must stop (a cancelled job) raises there."""
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

    docs = list(docs)
    meter = _Meter(progress, sum(len(doc.text) for doc in docs))
    chunks: list[Chunk] = []
    for doc in docs:
        index, start = 0, meter.done
        kind = "pdf" if doc.pages and doc.kind in ("md", "pdf") else doc.kind
        for section in sections(doc):
            for text, tokens, first, last in _pack(section, chunk_tokens, splitter,
                                                   overlap_tokens > 0, meter):
                context = HEADING_SEPARATOR.join(section.headings)
                passage = f"{context}\n{text}" if context else text
                if context or tokens is None:
                    tokens = count_tokens(passage)
                chunks.append(Chunk(doc.path, index, text, tokens, context, section.title,
                                    doc.page_at(first), doc.metadata, section.headings,
                                    first, last, kind))
                index += 1
        meter.reach(start + len(doc.text))
    meter.tell()
    return chunks


MIN_BODY_TOKENS = 32  # room left for text however long the headings are


class _Meter:
    """Characters of the documents chunked so far, told to `progress` every WINDOW_CHARS."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress, self.total = progress, total
        self.done = self.told = 0

    def reach(self, done: int, tell: bool = False) -> None:
        """`done` characters are chunked; tell if asked, or WINDOW_CHARS more than last time."""
        self.done = min(done, self.total)
        if tell or self.done - self.told >= WINDOW_CHARS:
            self.tell()

    def tell(self) -> None:
        """Call `progress` with the characters done (it may raise to stop the chunking)."""
        if self.progress is not None and self.total:
            self.told = self.done
            self.progress("chunk", self.done, self.total)


def window_chars(room: int) -> int:
    """Characters of a paragraph read by one call of the splitter: WINDOW_CHARS, or more
    when a piece may hold that many (a window holds several pieces)."""
    return max(WINDOW_CHARS, 16 * room)


Piece = tuple[str, int | None, int, int]  # text, tokens (None: to count), start, end


def _pack(section: Section, chunk_tokens: int, splitter: Callable[[int], TextSplitter],
          overlap: bool, meter: _Meter) -> list[Piece]:
    """The section's paragraphs packed greedily into texts that fit beside its headings,
    each with its tokens when one piece is the whole text (else None: to be counted) and
    its span in the document's text."""
    heading_tokens = count_tokens(HEADING_SEPARATOR.join(section.headings)) + 1 \
        if section.headings else 0
    room = max(chunk_tokens - heading_tokens, min(MIN_BODY_TOKENS, chunk_tokens))
    pieces: list[tuple[str, int, int, int, bool]] = []  # ..., whether it stands alone

    def place(at: Placed, found: Iterable[tuple[int, str]]) -> None:
        pieces.extend((piece, count_tokens(piece), at.start(offset),
                       at.end(offset + len(piece)), False) for offset, piece in found)

    for paragraph, at in zip(section.paragraphs, section.places, strict=True):
        if len(paragraph) > window_chars(room):
            place(at, _windows(paragraph, splitter(room), room, overlap, meter))
            continue
        size = count_tokens(paragraph)
        if _TABLE.match(paragraph):  # a table is never packed with the text around it
            pieces.extend((piece, count_tokens(piece), at.start(first), at.end(last), True)
                          for piece, first, last in _table_pieces(paragraph, room, splitter))
        elif size <= room:
            pieces.append((paragraph, size, at.start(0), at.end(len(paragraph)), False))
        else:
            place(at, ((offset, piece) for offset, piece
                       in splitter(room).chunk_indices(paragraph) if piece.strip()))
        meter.reach(meter.done + len(paragraph))
    texts: list[Piece] = []
    current, used, joined, first, last, apart = "", 0, False, 0, 0, False
    for k, (piece, size, start, end, alone) in enumerate(pieces):
        if current and used + size + 1 <= room and not (alone or apart) \
                and not (_FIRST_ITEM.match(piece) and _list_overflows(pieces, k, used, room)):
            current, used, joined = f"{current}\n\n{piece}", used + size + 1, True
            last = max(last, end)
        else:
            if current:
                texts.append((current, None if joined else used, first, last))
            current, used, joined, first, last, apart = piece, size, False, start, end, alone
    if current:
        texts.append((current, None if joined else used, first, last))
    return texts


# A list item's marker: "3.", "3)", "(3)", "b)", "(b)", "(iv)"; the first item's: "1.", "a)", "(i)"
_ITEM = re.compile(r"^\s*\(?(?:\d{1,2}|[a-z]|i{1,3}|iv|v|vi{1,3}|ix|x)[.)]\s")
_FIRST_ITEM = re.compile(r"^\s*\(?(?:1|a|i)[.)]\s")


def _list_overflows(pieces: list[tuple[str, int, int, int, bool]], k: int, used: int,
                    room: int) -> bool:
    """Whether the numbered list whose first item is `pieces[k]` (one paragraph an item)
    would not fit in `room` after the `used` tokens of the chunk so far: the list then
    starts a chunk.

    A letter's "In summary:" over five numbered points, packed greedily, kept point 1 with
    the letter's opening paragraphs and the rest a chunk apart: a question about point 1
    found a chunk about something else, headed by it only in its last lines."""
    total = used
    for text, tokens, *_ in pieces[k:]:
        if not _ITEM.match(text) or total > room:
            break
        total += tokens + 1
    return total > room


def _windows(paragraph: str, splitter: TextSplitter, room: int, overlap: bool,
             meter: _Meter) -> Iterator[tuple[int, str]]:
    """An overlong paragraph's pieces of at most `room` tokens (with where each starts in
    it), as the splitter cuts it whole, read one window of `window_chars(room)` at a time.
    A window's last piece may have been cut short by the window's end, so the next window
    starts with it; with `overlap`, where that piece begins depends on the one before, so
    the next window starts there."""
    size = window_chars(room)
    back = 2 if overlap else 1
    start = 0
    while start < len(paragraph):
        end = _window_end(paragraph, start, size)
        found = splitter.chunk_indices(paragraph[start:end])
        if end >= len(paragraph) or len(found) < 2:
            kept, step = found, end - start
        else:
            kept = found[:-back] if len(found) > back else found[:1]
            step = found[len(kept)][0]
        yield from ((start + offset, piece) for offset, piece in kept if piece.strip())
        meter.reach(meter.done + step, tell=True)  # one window's work between two calls
        start += step


def _window_end(text: str, start: int, size: int) -> int:
    """Where the window from `start` ends: at the last space or line break in its second
    half (a word is never cut), else after `size` characters."""
    end = start + size
    if end >= len(text):
        return len(text)
    cut = max(text.rfind(" ", start + size // 2, end), text.rfind("\n", start + size // 2, end))
    return cut if cut > start else end


_TABLE = re.compile(r"^\s*\|.*\|\s*\n\s*\|?\s*:?-{2,}")
# Rows of a Markdown table per chunk. A row is a record (a supplier, a part, an asset): on
# its own under the table's header row, it is found, cited and embedded as that record, not
# as an average of all the table's rows.
TABLE_ROWS = 1


def _table_pieces(table: str, room: int, splitter: Callable[[int], TextSplitter]
                  ) -> list[tuple[str, int, int]]:
    """A Markdown table cut between rows, TABLE_ROWS a piece (fewer when they do not fit):
    each piece opens with the header row and its rule. A row too long even so is cut like
    text. Each piece comes with the span of the table it was cut from (the first's holds the
    header; the others', their own rows only)."""
    header, rule, *rows = table.split("\n")
    top = f"{header}\n{rule}"
    top_tokens = count_tokens(top) + 1
    pieces: list[tuple[str, int, int]] = []
    current: list[str] = []
    used, first, last = top_tokens, 0, 0
    at = len(top) + 1  # where the next row starts in the table
    for row in rows:
        size = count_tokens(row) + 1
        if current and (used + size > room or len(current) >= TABLE_ROWS):
            pieces.append(("\n".join([top, *current]), first, last))
            current, used = [], top_tokens
        if top_tokens + size > room:
            pieces.extend((piece, at + offset, at + offset + len(piece)) for offset, piece
                          in splitter(room).chunk_indices(row) if piece.strip())
        else:
            if not current and pieces:
                first = at
            current.append(row)
            used += size
            last = at + len(row)
        at += len(row) + 1
    if current:
        pieces.append(("\n".join([top, *current]), first, last))
    return pieces
