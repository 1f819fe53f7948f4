"""Tables as Markdown: an Excel workbook (openpyxl, the `office` extra) and a CSV file.

- Excel (.xlsx): each sheet is a page labelled by its name and a section headed by it; its
  used range (rows and columns with a value, the ones in between too) is one pipe table,
  the first row with a value its header. Formulas give the value Excel saved with them.
- CSV: one pipe table, its first non-empty row the header; the delimiter and quoting are
  sniffed from the file's start, the encoding read as text files are (`ingest.encoding`).

Both are streamed: a workbook is opened read-only and its rows read one at a time, and a
file with more than MAX_CELLS filled cells is refused when the count passes it, not after
loading it all. MAX_SCANNED bounds the empty cells looked at on the way (a sheet may say it
is far larger than what it holds).
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterable, Sequence
from pathlib import Path

from hopgraph.errors import InputError
from hopgraph.ingest.containers import check_office, office_library
from hopgraph.ingest.encoding import text_codec
from hopgraph.ingest.markdown import MarkdownText, ReadText

MAX_CELLS = 200_000  # filled cells of one workbook or CSV file
MAX_SCANNED = 2_000_000  # cells looked at, empty ones included
SNIFF_CHARS = 16_384  # of a CSV file, to tell its delimiter and quoting
_TEXT_CODECS = {"utf-8": "utf-8-sig", "utf-16-le": "utf-16", "utf-16-be": "utf-16",
                "utf-32-le": "utf-32", "utf-32-be": "utf-32"}  # the byte-order mark dropped


class _Count:
    """Cells read so far from one file; an InputError when a limit is passed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.filled = self.scanned = 0

    def row(self, values: Sequence[str]) -> bool:
        """Count a row's cells; whether it has a value."""
        self.scanned += len(values)
        filled = sum(1 for value in values if value)
        self.filled += filled
        if self.filled > MAX_CELLS or self.scanned > MAX_SCANNED:
            limit = (f"more than {MAX_CELLS:,} filled cells" if self.filled > MAX_CELLS
                     else f"more than {MAX_SCANNED:,} cells")
            raise InputError(f"too large: {limit} (the most one file may have)",
                             where=str(self.path), fix="split it, or save the part that "
                             "matters as a file of its own")
        return filled > 0


def used_range(rows: Iterable[Sequence[str]], count: _Count) -> list[list[str]]:
    """The rows with a value, cut to the columns from the first to the last with one."""
    kept = [list(row) for row in rows if count.row(row)]
    used = [i for row in kept for i, value in enumerate(row) if value]
    if not used:
        return []
    first, last = min(used), max(used)
    return [row[first:last + 1] for row in kept]


def read_xlsx(path: Path) -> ReadText:
    """A workbook's sheets as Markdown tables, one page (labelled by name) per sheet."""
    check_office(path, "xlsx")
    openpyxl = office_library("openpyxl", "openpyxl", path)
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # a damaged part raises KeyError, XMLSyntaxError...
        raise InputError(f"cannot read Excel file ({type(exc).__name__}: {exc})",
                         where=str(path)) from exc
    out = MarkdownText()
    count = _Count(path)
    try:
        for sheet in book.worksheets:
            if not hasattr(sheet, "iter_rows"):
                continue  # a chart sheet
            sheet.reset_dimensions()  # rows as long as their data, not as the sheet claims
            rows = ([cell_text(value) for value in row]
                    for row in sheet.iter_rows(values_only=True))
            out.page(sheet.title)
            out.heading(1, sheet.title)
            out.table(used_range(rows, count))
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"cannot read Excel file ({type(exc).__name__}: {exc})",
                         where=str(path)) from exc
    finally:
        book.close()
    return out.read()


def cell_text(value: object) -> str:
    """A cell's value as text: a date without a time as the date, a whole float as an
    integer, nothing as ""."""
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        return (value.date().isoformat() if value.time() == dt.time()
                else value.isoformat(sep=" "))
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value).strip()


def read_csv(path: Path) -> ReadText:
    """A CSV file as one Markdown table."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4 * SNIFF_CHARS)
        codec = _codec(head)
        with path.open(encoding=codec, errors="replace", newline="") as handle:
            sample = handle.read(SNIFF_CHARS)
            handle.seek(0)
            rows = used_range(([value.strip() for value in row]
                               for row in csv.reader(handle, _dialect(sample))), _Count(path))
    except (OSError, csv.Error) as exc:
        raise InputError(f"cannot read CSV file ({exc})", where=str(path)) from exc
    out = MarkdownText()
    out.table(rows)
    return out.read()


def _codec(head: bytes) -> str:
    """The codec of a CSV file from its first bytes: a byte-order mark's, UTF-16 told by
    its zero bytes, UTF-8, else Windows-1252."""
    codec = text_codec(head)
    if codec is not None:
        return _TEXT_CODECS.get(codec, codec)
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not merely a character cut at the end of the head
            return "cp1252"
    return "utf-8"


def _dialect(sample: str) -> type[csv.Dialect] | csv.Dialect:
    """The sample's delimiter and quoting (comma, semicolon, tab or bar), else Excel's."""
    sample = sample[:sample.rfind("\n") + 1] or sample  # whole lines only
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        return csv.excel
