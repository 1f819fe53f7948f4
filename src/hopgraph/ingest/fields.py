"""Facts a business document states by its layout rather than in sentences: key–value lines
(`Reported by: Jess Carver`), e-mail headers (`From:`, `To:`, `Subject:`) and table rows
(`| Supplier | Owner |`). `split` takes them out of a chunk's text, so the sentence rules
never read a label as a name, and says what each one relates; the offline extractor turns
that into triplets with its own mention rules (`offline_extractor.structure_triplets`).

- A key–value line is a short key (one to five words, starting with a capital) and a colon,
  then its value; a following line in lower case, or indented, continues the value (a value
  wrapped by hand). The lines of one block (between blank lines) are one record: its subject
  is the first line's value when that is one name (`Incident: IR-2322`), else the record
  before it's, else the chunk's title.
- An e-mail's header is a record whose keys include From: the sender wrote to each To and Cc,
  about what the Subject names, on its Date.
- A Markdown table row relates its first cell's name to each other cell, the column's header
  being the predicate (`Keller Polymers | owner | Priya Castell`).
- Plain text lays tables out in columns of spaces (a log exported as text): two or more
  lines cut into three or more cells by runs of two spaces (or a tab), with at least two
  cells starting at the same columns, are a table too. Its first line is the header when it
  holds no digit and a later row does, or tops a column of numbers with a word
  (`has_header`); a rule of dashes under it is skipped; a table with no header relates its
  cells as "has". (A PDF's tables are set in cells at their columns' places: `ingest.pdf`
  writes them as Markdown tables.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_FIELD = re.compile(r"^\s{0,3}(?P<key>[A-Z][\w&'’./()-]*(?:[ ][\w&'’./()-]+){0,4})\s*:\s+"
                    r"(?P<value>\S.*?)\s*$")
_TABLE_ROW = re.compile(r"^\s*\|(.+)\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_CELL = re.compile(r"\S+(?: \S+)*")  # text between runs of two or more spaces
_RULE_CELL = re.compile(r"^[-=_]+$")
_NUMBER = re.compile(r"[-–—]|[£$€]?\s?[+-]?\d[\d.,]*\s?(%|per cent)?")  # or a dash for none
MIN_COLUMNS = 3  # cells a line needs to be a row of a table laid out with spaces
MIN_ALIGNED = 2  # cell starts (past the first) two rows must share to be one table
MAX_KEY_CHARS = 40
EMAIL_KEYS = {"from": "from", "to": "wrote to", "cc": "wrote to", "subject": "wrote about",
              "re": "wrote about", "date": "wrote on", "sent": "wrote on"}
# What a reply or a forward puts before an e-mail's subject, in several languages' mail programs
REPLY_MARKS = frozenset({"re", "fw", "fwd", "aw", "sv", "tr", "wg"})
_REPLY_PREFIX = re.compile(
    rf"^\s*(?:(?:{'|'.join(sorted(REPLY_MARKS))})\s*(?:\[\d+\])?\s*:\s*)+", re.I)


_LEGEND_ENTRY = re.compile(r"^\s*(?P<code>[A-Z][A-Z0-9+/&-]{1,9})\s*=\s*(?P<meaning>\S.*?)[.\s]*$")


def legend(value: str) -> list[tuple[str, str]]:
    """The entries of a value that is a legend: a code in capitals (two characters or more)
    and what it stands for, two entries or more and nothing else ("LEE = Leeds, HUL = Hull,
    DON = Doncaster"); [] for any other value. An export writes its codes in its rows and
    what they stand for once, under a key ("Depot codes:", "Ctr:")."""
    parts = [part for part in re.split(r"[;,]", value) if part.strip()]
    entries = [found for part in parts if (found := _LEGEND_ENTRY.match(part))]
    if len(entries) < 2 or len(entries) != len(parts):
        return []
    return [(found.group("code"), found.group("meaning")) for found in entries]


def coded_names(value: str) -> list[tuple[str, str]]:
    """A legend's entries that stand for a name (a capital first: "HUL = Hull"; not "SR =
    social rent"), each code with its name."""
    return [(code, meaning) for code, meaning in legend(value) if meaning[:1].isupper()]


def bare_subject(subject: str) -> str:
    """An e-mail's subject without the "RE:", "FW:", "Fwd:" (…) a reply or a forward puts
    before it."""
    return _REPLY_PREFIX.sub("", subject).strip()


@dataclass
class Record:
    """The key–value lines of one block, in order (keys as written, values joined)."""

    fields: list[tuple[str, str]] = field(default_factory=list)

    @property
    def is_email(self) -> bool:
        """Whether these are an e-mail's headers (a From line and a To or Subject line)."""
        keys = {key.lower() for key, _ in self.fields}
        return "from" in keys and bool(keys & {"to", "subject", "cc"})


@dataclass
class Table:
    """A Markdown table: its header cells and its rows (cells by column)."""

    header: list[str]
    rows: list[list[str]] = field(default_factory=list)


@dataclass
class Layout:
    """A chunk's text taken apart: prose lines (values of key–value lines included, as
    text to read), the records of its key–value blocks, and its tables."""

    prose: list[str] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    signings: list[Signing] = field(default_factory=list)


@dataclass(frozen=True)
class Signing:
    """A line that signs a document for a party: "Signed for and on behalf of Harrowgate
    Cold Chain Ltd by Claire Ashworth, Managing Director, on 14 March 2024." gives the party
    and what follows "by" (the signer, then their role and date, as written)."""

    party: str
    signer: str


# "Signed for X by Y", "Signed for and on behalf of X by Y", "Signed on behalf of X by Y"
_SIGNING = re.compile(r"^\s*signed\s+(?:for\s+and\s+)?(?:on\s+behalf\s+of|for)\s+"
                      r"(?P<party>.+?)\s+by\s+(?P<signer>.+?)[.\s]*$", re.IGNORECASE)


def signing(line: str) -> Signing | None:
    """The signing a line is (`Signing`), else None."""
    found = _SIGNING.match(line)
    return Signing(found.group("party"), found.group("signer")) if found else None


def field_line(line: str) -> tuple[str, str] | None:
    """(key, value) of a key–value line, else None."""
    found = _FIELD.match(line)
    if not found or len(found.group("key")) > MAX_KEY_CHARS or "://" in line[:12]:
        return None
    if found.group("key").count("(") != found.group("key").count(")"):
        return None  # "Victoria Falls (Tokaleya Tonga: ...) is": prose, not a key
    return found.group("key"), found.group("value")


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in _TABLE_ROW.match(line).group(1).split("|")]  # type: ignore[union-attr]


def _columns(line: str) -> list[tuple[int, str]]:
    """(start column, cell) of a line cut at runs of two or more spaces (tabs as spaces)."""
    return [(found.start(), found.group()) for found in _CELL.finditer(line.expandtabs(8))]


def _aligned(one: list[tuple[int, str]], other: list[tuple[int, str]]) -> bool:
    """Whether two lines are rows of one table laid out with spaces."""
    if min(len(one), len(other)) < MIN_COLUMNS:
        return False
    return len({start for start, _ in one[1:]} & {start for start, _ in other[1:]}) >= MIN_ALIGNED


def same_table(line: str, following: str) -> bool:
    """Whether two lines are rows (or a header and the rule under it) of one table laid out
    with spaces: never one wrapped line."""
    if "  " not in line.expandtabs(8).strip() or "  " not in following.expandtabs(8).strip():
        return False
    return _aligned(_columns(line), _columns(following))


def _cut(lines: list[str]) -> list[list[tuple[int, str]]]:
    return [_columns(line) if "  " in line.expandtabs(8).strip() else [] for line in lines]


def _table_spans(cut: list[list[tuple[int, str]]]) -> list[tuple[int, int]]:
    """(first, end) line numbers of each table laid out with spaces (`cut`: the lines'
    cells)."""
    spans = []
    number = 0
    while number < len(cut):
        end = number + 1
        while end < len(cut):
            # a row goes on from the line above it, or from the one above a rule (a rule's
            # dashes need not line up with the columns)
            above = end - 2 if end - 1 > number and _is_rule(cut[end - 1]) else end - 1
            if not (_aligned(cut[above], cut[end])
                    or (_is_rule(cut[end]) and end + 1 < len(cut)
                        and _aligned(cut[end - 1], cut[end + 1]))):
                break
            end += 1
        if end - number >= 2:
            spans.append((number, end))
        number = end
    return spans


def _spaced_tables(lines: list[str]) -> dict[int, Table | None]:
    """The lines that belong to tables laid out with spaces: line number -> its table (None
    for the header and the rule under it, which are read as the table's header)."""
    cut = _cut(lines)
    found: dict[int, Table | None] = {}
    for first, end in _table_spans(cut):
        found.update(_spaced_table(lines, cut, first, end))
    return found


Cells = list[list[tuple[int, str]]]  # a row's cells by column: (offset in its line, text)


@dataclass
class SpacedRow:
    """A line of a table laid out with spaces, as a Markdown table holds it: its cells by
    column (`header`: the table's header row), or no cells for a rule of dashes."""

    cells: Cells | None
    header: bool = False


def spaced_rows(lines: list[str]) -> dict[int, SpacedRow]:
    """The lines of the tables laid out with spaces that have a header row (`has_header`),
    cut into columns as `_spaced_table` cuts them, each piece with where it is in its line.

    A table laid out with spaces is cut into chunks between its lines like any text, so a
    row would go without its header: "F205 | has | HUL" where the header says that HUL is
    the van's depot. As a Markdown table it is chunked as one: a row a piece, under its
    header. A table whose cells cannot be found in their lines again (a tab inside one), or
    that holds a bar, is left as it is."""
    cut = _cut(lines)
    found: dict[int, SpacedRow] = {}
    for first, end in _table_spans(cut):
        rows = [n for n in range(first, end) if not _is_rule(cut[n])]
        if not has_header([[cell for _, cell in cut[n]] for n in rows]):
            continue
        starts = [start for start, _ in cut[rows[0]]]
        table: dict[int, SpacedRow] = {}
        for n in range(first, end):
            placed = _placed(lines[n], cut[n])
            if placed is None or any("|" in cell for _, cell in placed):
                break  # (a bar inside a cell would cut it in two as Markdown)
            if n not in rows:
                table[n] = SpacedRow(None)
                continue
            cells: Cells = [[] for _ in starts]
            for (start, _), piece in zip(cut[n], placed, strict=True):
                cells[_column(starts, start)].append(piece)
            table[n] = SpacedRow(cells, header=n == rows[0])
        else:
            found.update(table)
    return found


def _placed(line: str, cells: list[tuple[int, str]]) -> list[tuple[int, str]] | None:
    """Each cell of a line with where it is in the line itself (tabs not expanded), or None
    if one cannot be found there."""
    if "\t" not in line:
        return cells
    placed, at = [], 0
    for _, cell in cells:
        where = line.find(cell, at)
        if where < 0:
            return None
        placed.append((where, cell))
        at = where + len(cell)
    return placed


def _column(starts: list[int], start: int) -> int:
    """The column a cell starting at `start` is under: the last that starts at or just
    before it (`starts`: the header's cells' starts)."""
    return max([i for i, s in enumerate(starts) if s <= start + 1] or [0])


def _is_rule(cells: list[tuple[int, str]]) -> bool:
    return bool(cells) and all(_RULE_CELL.match(cell) for _, cell in cells)


def _spaced_table(lines: list[str], cut: list[list[tuple[int, str]]], first: int, end: int
                  ) -> dict[int, Table | None]:
    """One table laid out with spaces, lines first..end-1: each cell under the column whose
    start is the last at or before it."""
    rows = [n for n in range(first, end) if not _is_rule(cut[n])]
    header = has_header([[cell for _, cell in cut[n]] for n in rows])
    starts = [start for start, _ in cut[rows[0]]]
    table = Table([cell for _, cell in cut[rows[0]]] if header else [""] * len(starts))
    found: dict[int, Table | None] = {n: None for n in range(first, end)}
    for n in rows[1:] if header else rows:
        row = [""] * len(starts)
        for start, cell in cut[n]:
            column = _column(starts, start)
            row[column] = f"{row[column]} {cell}".strip()
        table.rows.append(row)
        found[n] = table
    return found


def has_header(rows: list[list[str]]) -> bool:
    """Whether a table's first row (cells by column) is its header: it holds no digit and a
    later row does, or a column holds only numbers under a top cell with a letter in it
    ("Q2 2025" over "96", "71", "-")."""
    if len(rows) < 2:
        return False
    first, body = rows[0], rows[1:]
    if all(_NUMBER.fullmatch(cell.strip()) or not cell.strip() for cell in first[1:]):
        return False  # "Dunmore Recycling | - | -": a row whose values are all missing
    if not any(ch.isdigit() for cell in first for ch in cell) \
            and any(ch.isdigit() for row in body for cell in row for ch in cell):
        return True
    for column, top in enumerate(first):
        cells = [row[column] for row in body if column < len(row) and row[column].strip()]
        if any(ch.isalpha() for ch in top) and any(any(ch.isdigit() for ch in c) for c in cells) \
                and all(_NUMBER.fullmatch(cell.strip()) for cell in cells):
            return True
    return False


def split(text: str) -> Layout:
    """The chunk's text as prose, key–value records and tables."""
    layout = Layout()
    record: Record | None = None
    table: Table | None = None
    lines = text.split("\n")
    spaced = _spaced_tables(lines)
    for number, line in enumerate(lines):
        if not line.strip():
            record = table = None
            layout.prose.append("")
            continue
        if number in spaced:
            record = table = None
            made = spaced[number]
            if made is not None and made not in layout.tables:
                layout.tables.append(made)
            continue
        if _TABLE_ROW.match(line):
            record = None
            following = lines[number + 1] if number + 1 < len(lines) else ""
            if _TABLE_RULE.match(line):
                continue
            if table is None or (_TABLE_RULE.match(following) and table.rows):
                table = Table(_cells(line))
                layout.tables.append(table)
            else:
                table.rows.append(_cells(line))
            continue
        table = None
        pair = field_line(line)
        if pair is not None:
            if record is None:
                record = Record()
                layout.records.append(record)
            record.fields.append(pair)
            layout.prose.append(pair[1])
            continue
        if record is not None and record.fields and (
                line[:1].isspace() or line.lstrip()[:1].islower()
                or record.fields[-1][1].endswith(",")):  # a list goes on: "HSM = Hollins,"
            key, value = record.fields[-1]
            record.fields[-1] = (key, f"{value} {line.strip()}")
            layout.prose[-1] = f"{layout.prose[-1]} {line.strip()}"
            continue
        record = None
        layout.prose.append(line)
    # a legend's value is no sentence: "SR = social rent, AR = ..." relates SR to AR
    layout.prose = ["" if "=" in line and legend(line) else line for line in layout.prose]
    # nor is a signing: read as one, its words would relate the role to the date
    layout.signings = [found for line in layout.prose if (found := signing(line)) is not None]
    if layout.signings:
        layout.prose = ["" if signing(line) else line for line in layout.prose]
    return layout
