"""A PDF page's tables. A word processor sets each cell of a table where its column starts,
and pypdf says where each piece of a line stands (`pdf.page_lines`: a line's cells, each
`(x, text)`). Lines whose pieces start at the same places, in columns that most of their
cells keep, are a table's rows; they are written as a Markdown table, which the rest of
the ingest reads as any table (cut one row a chunk, related row by row). Prose set word by
word lines up here and there by chance, never in columns; two columns of prose on a page
have long cells.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

from hopgraph.ingest import fields

ALIGN = 1.5  # points within which two cells start at one column
MAX_CELL_CHARS = 30  # a table's cells past the first are this long or shorter (the median)
COLUMN_SHARE = 0.8  # of a table's cells past the first, the share that start in its columns

Cells = tuple[tuple[float, str], ...]  # (x, text) of each piece set apart on a line
_MARKER = re.compile(r"[-–—•●○◦▪■□►✓*>o]|\(?[0-9]{1,3}[.)]|\(?[a-zA-Z][.)]")  # a list item's


def table_runs(lines: Sequence[Cells]) -> list[tuple[int, int]]:
    """(first, end) of each run of two rows or more, among lines given by their cells, set
    in aligned cells (`_aligned`) that stand in columns (`_columns_hold`). A line under a
    row whose pieces all start where the row's cells past the first do holds those cells
    wrapped within their columns (`_goes_on`): it is part of the run."""
    runs: list[tuple[int, int]] = []
    start = row = 0
    rows = [0]
    for end in range(1, len(lines) + 1):
        if end < len(lines) and _aligned(lines[row], lines[end]):
            row = end
            rows.append(end)
            continue
        if end < len(lines) and _goes_on(lines[row], lines[end]):
            continue
        if len(rows) >= 2 and _columns_hold([lines[n] for n in rows]):
            runs.append((start, end))
        start = row = end
        rows = [end]
    return runs


def pipe_table(lines: Sequence[Cells], bold: Sequence[bool]) -> str:
    """A run of table rows (`table_runs`; `bold`: whether each line is set in bold) as a
    Markdown table. A column starts where cells of two rows start together; a cell goes
    under the last column starting at or before it. The first row is the header when it
    alone is bold, or by `fields.has_header`; a table without one gets an empty header
    row."""
    starts = [lines[0][0][0]]
    for line in lines:
        for x, _ in line[1:]:
            if not any(_starts_at(x, s) for s in starts) and sum(
                    any(_starts_at(x, y) for y, _ in other[1:]) for other in lines) >= 2:
                starts.append(x)
    starts.sort()
    rows: list[list[str]] = []
    row_bold: list[bool] = []
    for line, is_bold in zip(lines, bold, strict=True):
        if not rows or _starts_at(line[0][0], starts[0]):
            rows.append([""] * len(starts))  # a row; else the last row's cells go on
            row_bold.append(is_bold)
        row = rows[-1]
        for x, text in line:
            column = max([i for i, s in enumerate(starts) if s <= x + ALIGN] or [0])
            row[column] = f"{row[column]} {text.replace('|', '/')}".strip()
    header = (row_bold[0] and not any(row_bold[1:])) or fields.has_header(rows)
    top = rows.pop(0) if header else [""] * len(starts)
    return "\n".join(["| " + " | ".join(top) + " |", "|" + "---|" * len(top)]
                     + ["| " + " | ".join(row) + " |" for row in rows])


def rows_going_on(before: str, text: str) -> str | None:
    """The text of a block that opens with a Markdown table of as many columns as the table
    `before` ends with (a table going on over a page break), from its rows on: its header
    row goes when it is empty or that table's own, repeated, and is a row of the table
    else (a row read as a header on a page of its own); None when it does not."""
    table = before.rsplit("\n\n", 1)[-1].split("\n")
    opening, _, rest = text.partition("\n\n")
    going = opening.split("\n")
    if not (table_text(table[0]) and table_text(going[0])) or len(going) < 3 \
            or going[0].count("|") != table[0].count("|"):
        return None
    rows = going[2:] if not going[0].replace("|", "").strip() or going[0] == table[0] \
        else [going[0], *going[2:]]
    return "\n".join(rows) + (f"\n\n{rest}" if rest else "")


def table_text(text: str) -> bool:
    """Whether a text opens with a Markdown table's row."""
    return text.lstrip().startswith("|")


def _starts_at(x: float, other: float) -> bool:
    return abs(x - other) <= ALIGN


def _aligned(one: Cells, other: Cells) -> bool:
    """Whether two lines are rows of one table: each set in two cells or more, the first
    ones starting together and as many of the others as the narrower row has (two at most)."""
    if min(len(one), len(other)) < 2 or not _starts_at(one[0][0], other[0][0]):
        return False
    shared = sum(any(_starts_at(x, y) for y, _ in other[1:]) for x, _ in one[1:])
    return shared >= min(2, len(one) - 1, len(other) - 1)


def _columns_hold(rows: Sequence[Cells]) -> bool:
    """Whether rows make a table: their first cells are not all keys or list markers
    (`Supplier:` and its value at a tab stop are a key–value line, `●` and its item a list
    item), their cells past the first are short (a median of at most MAX_CELL_CHARS: two
    columns of prose are not a table) and nearly all (COLUMN_SHARE) start where cells of at
    least half the rows (and two) start."""
    firsts = [row[0][1].strip() for row in rows]
    if all(first.endswith(":") for first in firsts) \
            or all(_MARKER.fullmatch(first) for first in firsts):
        return False
    later = [(x, text) for row in rows for x, text in row[1:]]
    if statistics.median(len(text) for _, text in later) > MAX_CELL_CHARS:
        return False
    needed = max((len(rows) + 1) // 2, 2)
    in_columns = sum(sum(any(_starts_at(x, y) for y, _ in row[1:]) for row in rows) >= needed
                     for x, _ in later)
    return in_columns >= COLUMN_SHARE * len(later)


def _goes_on(row: Cells, line: Cells) -> bool:
    """Whether `line` holds cells of `row` wrapped within their columns: each of its pieces
    starts where one of the row's cells past the first does."""
    return len(row) >= 2 and bool(line) and all(
        any(_starts_at(x, y) for y, _ in row[1:]) for x, _ in line)
