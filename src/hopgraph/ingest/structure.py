"""A document's structure: its sections (the headings above them) and their paragraphs.

Lines wrapped by hand or by the page are joined first (`lines.wrapped`), and only then is
anything taken for a heading, so the first line of a wrapped paragraph never is one.

- Markdown: `#` lines and setext underlines; in the body, a line standing alone that is
  numbered as a heading is ("3.2 Responsibilities", "Section 4 – Fees") or in capitals.
- Plain text (and a PDF without headings in its type): a short line standing alone (its own
  block, or the first line of a block whose next line does not go on from it) that does not
  end as a sentence; inside a block, a numbered or all-capitals line after a full stop. A
  first block made only of such lines (a letterhead, "ASHBY VALE PACKAGING LTD" over
  "INCIDENT REPORT") is the document's title: every section is under it (a letterhead's
  address lines aside). A letter's blocks before its greeting head nothing.
- Numbers nest: "3.1 Procurement Lead" is under "3. RESPONSIBILITIES". The number stays in
  the heading. A numbered line that is a sentence, or one of a list, is a list item. A
  heading with a code and no number, before any numbered one ("HS-POL-07  INCIDENT
  REPORTING AND INVESTIGATION"), is the document's title: the numbered sections after it
  at its level are under it.
- Key–value lines (a report's header, an e-mail's From/To/Subject) and table rows are never
  headings and never joined; short lines (list items, names in a column, an address) keep
  their line breaks, so nothing reads two of them as one name. A Markdown table is a
  paragraph of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hopgraph.ingest.fields import same_table, spaced_rows
from hopgraph.ingest.heading_names import heading_entity, names_something
from hopgraph.ingest.lines import (
    MD_ITEM,
    all_caps,
    body_heading,
    contact,
    dated,
    ends_sentence,
    greeting,
    heading_line,
    join_wrapped,
    key_value,
    laid_out,
    list_item,
    numbered_clause,
    salutation,
    salutation_block,
    section_number,
    strong_heading,
    width_of,
    wrapped,
)
from hopgraph.ingest.markdown import FENCE
from hopgraph.ingest.mentions import is_code
from hopgraph.ingest.reading import Document
from hopgraph.ingest.signatures import replies, signature, signs_off
from hopgraph.ingest.spans import Placed, Run, joined_runs

MAX_MARKDOWN_HEADING = 500  # a longer "# ..." line is text (a heading is in all its chunks)
MAX_TITLE_LINES = 3  # a first block of more heading-like lines is a list, not a title
MAX_FIELD_CHARS = 160  # a longer line that opens as a key–value line does is a paragraph


@dataclass
class Section:
    """Paragraphs under the same headings (outermost first; empty before any heading), where
    each lies in the document's text (`places`), and whether the innermost heading may name
    what the section is about (`named`; an e-mail's subject line never does)."""

    headings: tuple[str, ...]
    paragraphs: list[str] = field(default_factory=list)
    places: list[Placed] = field(default_factory=list)
    named: bool = True

    @property
    def heading(self) -> str | None:
        """The section's own heading: the innermost one."""
        return self.headings[-1] if self.headings else None

    @property
    def title(self) -> str | None:
        """What the section is about, when its heading names something (else None)."""
        heading = self.heading
        if not self.named or heading is None or not names_something(heading):
            return None
        return heading_entity(heading)

    def add(self, paragraph: str, place: Placed) -> None:
        """Append a paragraph that lies at `place` in the document's text."""
        self.paragraphs.append(paragraph)
        self.places.append(place)


def sections(doc: Document) -> list[Section]:
    """The document's sections, in order; those with no paragraph are left out. An e-mail's
    subject (`Document.metadata`) is the title over all of them, as context."""
    outline = _Outline()
    subject = doc.metadata.get("subject")
    if isinstance(subject, str) and subject:
        outline.title = (subject,)
        outline.found[0] = Section(outline.title, named=False)
    found = _markdown(doc.text, outline) if doc.kind == "md" else _plain(doc.text, outline)
    return [section for section in found if section.paragraphs]


@dataclass
class _Row:
    """A line as read (wrapped lines `joined`), and where its text lies in the document's."""

    runs: tuple[Run, ...]
    text: str
    joined: bool = False


class _Outline:
    """The headings open at a point of the document. A heading closes those at its level or
    deeper; within a level, a numbered heading is as deep as its number ("3.1" under "3.")."""

    def __init__(self) -> None:
        self.title: tuple[str, ...] = ()
        self.stack: list[tuple[tuple[int, int], str]] = []
        self.numbered = False  # whether a numbered heading has been opened
        self.found = [Section(())]

    def open(self, level: int, heading: str) -> None:
        number = _number_parts(heading)
        rank = (level, max(len(number), 1))
        if number:
            self.numbered = True
        elif not self.numbered and any(is_code(word) for word in heading.split()):
            rank = (level, 0)  # the document's own title: the numbered sections are under it
        while self.stack and (self.stack[-1][0] >= rank or (
                self.stack[-1][0][0] == level and number
                and number[:len(_number_parts(self.stack[-1][1]))]
                != _number_parts(self.stack[-1][1]))):
            self.stack.pop()  # same level or deeper, or a number this one does not go on
        self.stack.append((rank, heading))
        before = self.found[-1].paragraphs
        # A letter's subject line, alone after "Dear Ms Garside,", says what the letter is
        # about, as an e-mail's subject does: context, not a name for its sentences
        self.found.append(Section(self.headings(), named=not (
            before and salutation(before[-1].splitlines()[-1]))))

    def headings(self) -> tuple[str, ...]:
        return self.title + tuple(heading for _, heading in self.stack)

    def close(self) -> None:
        """Close every heading: what follows is under the title alone."""
        if self.stack:
            self.stack.clear()
            self.found.append(Section(self.headings(), named=self.found[0].named))

    def add(self, rows: list[_Row]) -> None:
        """Rows of one block, as paragraphs of the open section (a table apart)."""
        for paragraph in _paragraphs(rows):
            self.found[-1].add(paragraph.text, Placed(paragraph.runs))


def _number_parts(heading: str) -> tuple[str, ...]:
    """A numbered heading's number in parts ("3.2" is ("3", "2")); () for no number."""
    numbered = section_number(heading)
    if numbered is None:
        return ()
    return tuple(re.findall(r"\d+|\b[IVXLC]+\b|\b[A-Z]\b", numbered[0].upper()))


def _numbered_lines(text: str) -> list[_Row]:
    rows, start = [], 0
    for line in text.splitlines(keepends=True):
        text = line.strip()
        rows.append(_Row(((0, start + len(line) - len(line.lstrip()), len(text)),), text))
        start += len(line)
    return rows


def _blocks(rows: list[_Row]) -> list[list[_Row]]:
    blocks: list[list[_Row]] = [[]]
    for row in rows:
        if row.text:
            blocks[-1].append(row)
        elif blocks[-1]:
            blocks.append([])
    return [block for block in blocks if block]


def _joined(block: list[_Row], width: int) -> list[_Row]:
    """A block's lines with wrapped ones joined to the line they go on from."""
    rows: list[_Row] = []
    previous = ""
    for row in block:
        if rows and wrapped(previous, row.text, width):
            last = rows[-1]
            text = join_wrapped(last.text, row.text)
            rows[-1] = _Row(joined_runs(last.runs, row.runs, row.text, text), text, True)
        else:
            rows.append(_Row(row.runs, row.text))
        previous = row.text
    return rows


_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_TABLE_LINE = re.compile(r"^\s*\|")


def _markdown(text: str, outline: _Outline) -> list[Section]:
    lines = _numbered_lines(text)
    width = width_of(row.text for row in lines)
    block: list[_Row] = []

    def flush() -> None:
        if len(block) == 1 and (heading := body_heading(block[0].text)) is not None:
            outline.open(7, heading)  # under the `#` headings around it
        elif block:
            outline.add(_joined(block, width))
        block.clear()

    fenced = False
    for row, raw in zip(lines, text.splitlines(), strict=True):
        if FENCE.match(raw):
            fenced = not fenced
            block.append(row)
            continue
        atx = None if fenced or len(raw) > MAX_MARKDOWN_HEADING else _ATX.match(raw)
        if fenced:
            block.append(row)
        elif atx:
            flush()
            outline.open(len(atx.group(1)), _clean_heading(atx.group(2)))
        elif (_SETEXT.match(raw) and len(block) == 1 and not MD_ITEM.match(block[0].text)
              and len(block[0].text) <= MAX_MARKDOWN_HEADING):
            title = block.pop().text
            flush()
            outline.open(1 if raw.strip()[0] == "=" else 2, _clean_heading(title))
        elif not row.text:
            flush()
        else:
            block.append(row)
    flush()
    return outline.found


def _clean_heading(title: str) -> str:
    return re.sub(r"[*_`]+", "", title).strip()


def _plain(text: str, outline: _Outline) -> list[Section]:
    """Plain or PDF text: blocks between blank lines, wrapped lines joined; a heading opens
    a block, or stands inside one after a full stop when its form says it is a heading."""
    lines = _numbered_lines(text)
    width = width_of(row.text for row in lines)
    blocks = [_joined(block, width) for block in _blocks(lines)]
    salutes = salutation_block([rows[0].text if rows else "" for rows in blocks])
    # the text that opens each block (its first two lines: a reply's attribution may be
    # wrapped), that of the block after it, and whether each block signs a message
    openings = [" ".join(row.text for row in rows[:2]) for rows in blocks]
    afters = [*openings[1:], ""]
    signed = [signature([row.text for row in rows], after)
              for rows, after in zip(blocks, afters, strict=True)]
    for number, rows in enumerate(blocks):
        last = number + 1 == len(blocks)
        if not last and signed[number + 1] and len(rows) == 1 \
                and signs_off(rows[0].text, blocks[number + 1][0].text):
            outline.add(rows)  # "Tom" over his signature: the sign-off, not a heading
            continue
        if replies(openings[number]):
            outline.close()  # the message replied to: not under the reply's headings
        title = _title_lines(rows) if number == 0 and not outline.title else 0
        if 0 < number < salutes:  # a letter's addresses, date and references: no headings
            outline.add(rows)
            continue
        if title and (title < len(rows) or not last):
            # a dateline or an address under its first line ("Printed 20/03/2025", "12
            # Cotton Mill Row" over "Sheffield S3 8RT") is the first section's text, not a
            # title over every section
            heads = rows[:1] if any(contact(row.text) for row in rows[1:title]) else \
                rows[:1] + [row for row in rows[1:title] if not dated(row.text)]
            outline.title = tuple(row.text for row in heads)
            outline.found[0] = Section(outline.title, named=title == 1)
            outline.add([row for row in rows[:title] if row not in heads])
            rows = rows[title:]
        run: list[_Row] = []
        for index, row in enumerate(rows):
            following = rows[index + 1] if index + 1 < len(rows) else None
            if index == 0 and signed[number]:
                break  # read whole, with the section before it
            if _opens_section(rows, index, following is not None or not last) \
                    and not (number and _greets(rows, index)):
                outline.add(run)
                run = []
                outline.open(1, row.text)
            else:
                run.append(row)
        outline.add(run if run or not signed[number] else rows)
    return outline.found


def _titled(line: str, following: str) -> bool:
    """A title with a colon ("Jumanji: Welcome to the Jungle") over a paragraph, which a
    key–value line among others ("Incident: IR-2341" over "Date raised: 19 August") is not;
    a paragraph may open as a key–value line does ("Jumanji: Welcome to the Jungle is...")."""
    paragraph = bool(following) and not (laid_out(following)
                                         and len(following) <= MAX_FIELD_CHARS)
    return (key_value(line) and paragraph and heading_line(line.replace(":", ""))
            and line.split(":", 1)[1].strip()[:1].isupper())


def _greets(rows: list[_Row], index: int) -> bool:
    """Whether a row is an e-mail's greeting or sign-off with no paragraph under it in its
    block ("Hello Helen" alone, "Thanks, Helen" over a signature), not a title such as
    "Hello Love (song)" over its text."""
    return greeting(rows[index].text) and all(heading_line(row.text) for row in rows[index + 1:])


def _title_lines(rows: list[_Row]) -> int:
    """How many lines of a document's first block are its title: all of them when they are
    all short heading-like lines (a letterhead), or those over a key–value block; else 0."""
    count = 0
    for row in rows[:MAX_TITLE_LINES + 1]:
        if row.joined or not heading_line(row.text) or list_item(row.text):
            break
        count += 1
    if count == len(rows) and count <= MAX_TITLE_LINES:
        return count
    if 0 < count <= MAX_TITLE_LINES and laid_out(rows[count].text):
        return count
    return 0


def _opens_section(rows: list[_Row], index: int, more: bool) -> bool:
    """Whether this row of a block is a heading: short and standing alone (nothing going on
    from it), with text after it; inside a block only a numbered or capitals one after a
    sentence's end; never one item of a list ("1. Coffee" over "2. Tea")."""
    row = rows[index]
    following = rows[index + 1].text if index + 1 < len(rows) else ""
    if row.joined or not more or following[:1].islower() or same_table(row.text, following):
        return False  # a table's header row is no heading
    if not heading_line(row.text) and not (index == 0 and _titled(row.text, following)):
        return False
    if (list_item(row.text) or numbered_clause(row.text)) and not all_caps(row.text) and (
            list_item(following) or numbered_clause(following) or (
                index and (list_item(rows[index - 1].text)
                           or numbered_clause(rows[index - 1].text)))):
        return False  # one item of a numbered list
    if index == 0:
        return True
    return strong_heading(row.text) and ends_sentence(rows[index - 1].text)


@dataclass
class _Paragraph:
    text: str
    runs: tuple[Run, ...]


def _paragraphs(rows: list[_Row]) -> list[_Paragraph]:
    """Rows as paragraphs: one for the rows (line breaks kept between rows that are not one
    wrapped line), a Markdown table's rows apart."""
    found: list[_Paragraph] = []
    table = False
    for row in _spaced_as_markdown(rows):
        is_table = bool(_TABLE_LINE.match(row.text))
        if found and is_table == table:
            last = found[-1]
            text = f"{last.text}\n{row.text}"
            last.runs = joined_runs(last.runs, row.runs, row.text, text)
            last.text = text
        else:
            found.append(_Paragraph(row.text, row.runs))
        table = is_table
    return found


def _spaced_as_markdown(rows: list[_Row]) -> list[_Row]:
    """The rows, a table laid out with spaces under a header row written as a Markdown
    table (`fields.spaced_rows`): chunked and read like one, each row under its header.
    Each cell's text keeps where it lies in the document; the bars and the rule do not."""
    spaced = spaced_rows([row.text for row in rows])
    if not spaced:
        return rows
    written: list[_Row] = []
    for number, row in enumerate(rows):
        line = spaced.get(number)
        if line is None:
            written.append(row)
            continue
        if line.cells is None:
            continue  # the rule of dashes: Markdown's goes under the header
        at = Placed(row.runs)
        text, runs = "|", []
        for pieces in line.cells:
            for offset, piece in pieces:
                text += " "
                runs.append((len(text), at.start(offset), len(piece)))
                text += piece
            text += " |"
        written.append(_Row(tuple(runs), text))
        if line.header:
            written.append(_Row((), "|" + "---|" * len(line.cells)))
    return written
