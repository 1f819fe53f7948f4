"""Read passages and triplets from JSON, JSONL and HippoRAG OpenIE files.

Malformed rows and triplets are skipped and recorded with their place; only an empty,
unreadable or wholly unrecognizable file is an error.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from hopgraph.errors import InputError
from hopgraph.ingest.encoding import decode, universal_newlines
from hopgraph.ingest.triplets import read_triplets
from hopgraph.records import LoadReport, PassageRecord

__all__ = ["InputError", "check_record", "load_file", "read_items", "read_row", "read_text",
           "source_doc_id"]

def source_doc_id(path: str | Path) -> str:
    """The document id of a file given by itself: its name (`ingest.inputs` gives the
    files of a folder their path within it)."""
    return os.path.basename(os.path.normpath(str(path)))


def load_file(path: str | Path, doc_id: str | None = None) -> LoadReport:
    """Read one input file (format guessed from its content) into records and problems.

    A row's document is its `"doc_id"` field, else the file's: `doc_id`, or by default
    `source_doc_id`."""
    doc_id = source_doc_id(path) if doc_id is None else doc_id
    path = Path(path)
    raw = read_text(path)
    report = LoadReport(path=str(path))
    for where, row in _rows(path, raw, report):
        read_row(row, where, report, doc_id)
    if not report.records and report.problems:
        first = report.problems[0]
        raise InputError(f"no valid passage found ({len(report.problems)} problems; "
                         f"first at {first.where}: {first.what})", where=str(path),
                         fix="see the input file formats in docs/extraction.md")
    return report


def read_text(path: Path) -> str:
    """A text file's content: UTF-8, or UTF-16/32 (`ingest.encoding`), a byte-order mark
    dropped, line ends as "\\n"; unreadable or empty files are an InputError naming it."""
    try:
        text = universal_newlines(decode(path.read_bytes(), str(path)))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read file ({exc})", where=str(path)) from exc
    if not text.strip():
        raise InputError("file is empty", where=str(path))
    return text


def _rows(path: Path, raw: str, report: LoadReport) -> Iterable[tuple[str, Any]]:
    """Yield (place, row) pairs from a JSON document or a JSONL file."""
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError:
        doc = None
    if doc is None:
        yield from _jsonl_rows(path, raw, report)
        return
    if isinstance(doc, list):
        yield from ((f"{path}:[{i}]", row) for i, row in enumerate(doc))
    elif isinstance(doc, dict) and isinstance(doc.get("docs"), list):
        yield from ((f"{path}:docs[{i}]", row) for i, row in enumerate(doc["docs"]))
    elif isinstance(doc, dict) and isinstance(doc.get("passages"), list):
        yield from ((f"{path}:passages[{i}]", row) for i, row in enumerate(doc["passages"]))
    elif isinstance(doc, dict) and ("passage" in doc or "extracted_triples" in doc):
        yield f"{path}:line 1", doc  # a JSONL file holding a single row
    else:
        raise InputError(
            "unrecognized JSON", where=str(path),
            fix='expected a list of passages, {"passages": [...]}, {"docs": [...]} '
            "(HippoRAG OpenIE) or JSONL",
        )


def _jsonl_rows(path: Path, raw: str, report: LoadReport) -> Iterable[tuple[str, Any]]:
    parsed = 0
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:line {number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            report.skip_row(where, f"invalid JSON ({exc.msg})")
            continue
        parsed += 1
        yield where, row
    if parsed == 0:
        raise InputError("neither JSON nor JSONL (no line parses as JSON)", where=str(path))


def read_row(row: Any, where: str, report: LoadReport, doc_id: str | None = None) -> None:
    """Check one input row; append its record, or its problems, to `report`. The row's
    document is its `"doc_id"` field, else `doc_id`. A row's `"id"` is kept in its metadata.

    Everything the store would refuse is caught here, before anything is written: a row
    that failed half way through a write would fail again on every rerun.
    """
    if not isinstance(row, dict):
        report.skip_row(where, f"row is a {type(row).__name__}, expected an object")
        return
    broken = _unencodable(row)
    if broken is not None:
        report.skip_row(where, _surrogate(broken))
        return
    if "passage" in row and "extracted_triples" not in row:
        text, triplets_raw, key = row.get("passage"), row.get("triplets", []), "triplets"
        metadata = row.get("metadata", {})
    else:  # HippoRAG OpenIE doc: title + "\n" + text
        title, body = row.get("title"), row.get("text")
        if not isinstance(title, str) or not isinstance(body, str):
            report.skip_row(where, 'expected "passage", or "title" and "text" strings')
            return
        text = f"{title}\n{body}" if title else body
        triplets_raw, key = row.get("extracted_triples", []), "extracted_triples"
        metadata = {"title": title}
    if not isinstance(text, str) or not text.strip():
        report.skip_row(where, "passage text is missing or empty")
        return
    if not isinstance(triplets_raw, list):
        report.skip_row(where, f'"{key}" must be a list')
        return
    if not isinstance(metadata, dict):
        report.skip_row(where, '"metadata" must be an object')
        return
    unstorable = _json_problem(metadata, "metadata")
    if unstorable is not None:
        report.skip_row(where, unstorable)
        return
    own = row.get("doc_id")
    if own is not None:
        if isinstance(own, bool) or not isinstance(own, (str, int)) or not str(own).strip():
            report.skip_row(where, '"doc_id" must be a non-empty string (or an integer)')
            return
        doc_id = str(own)
    label = row.get("id")
    if label is not None and "id" not in metadata:
        if _json_problem(label, "id") is not None:
            report.skip_row(where, _json_problem(label, "id") or "")
            return
        metadata = {**metadata, "id": label}
    triplets = read_triplets(triplets_raw, where, report)
    report.records.append(
        PassageRecord(text=text, triplets=triplets, doc_id=doc_id, metadata=metadata,
                      source=where))


def read_items(items: Iterable[PassageRecord | dict[str, Any]], report: LoadReport,
               doc_id: str | None = None) -> Iterator[PassageRecord]:
    """`PassageRecord`s or row dicts from Python, checked as file rows are, as a stream:
    bad items are skipped and reported as "item N". An item with no document of its own
    gets `doc_id`. The report keeps no records (the stream may not fit in memory)."""
    for i, item in enumerate(items):
        if isinstance(item, PassageRecord):
            if item.doc_id is None and doc_id is not None:
                item = replace(item, doc_id=doc_id)
            if check_record(item, f"item {i}", report):
                yield item
            continue
        before = len(report.records)
        read_row(item, f"item {i}", report, doc_id)
        yield from report.records[before:]
        del report.records[before:]


def check_record(record: PassageRecord, where: str, report: LoadReport) -> bool:
    """The same store checks for a record built in Python; False (and reported) if it fails."""
    triplets = [[t.subject, t.predicate, t.object] for t in record.triplets]
    fields = {"passage": record.text, "triplets": triplets, "doc_id": record.doc_id,
              "metadata": record.metadata}
    broken = _unencodable(fields, "record")
    problem = _surrogate(broken) if broken else _json_problem(record.metadata, "metadata")
    if problem is not None:
        report.skip_row(where, problem)
        return False
    return True


_INT64 = (-(2**63), 2**63 - 1)


def _surrogate(field: str) -> str:
    return f"{field} holds an unpaired surrogate (such as \\ud800): not valid Unicode text"


def _children(value: Any, field: str) -> Iterator[tuple[str, Any]]:
    """(path, item) for each item of a dict or list; nothing for anything else."""
    if isinstance(value, dict):
        yield from ((f"{field}.{key}", item) for key, item in value.items())
    elif isinstance(value, (list, tuple)):
        yield from ((f"{field}[{i}]", item) for i, item in enumerate(value))


def _unencodable(value: Any, field: str = "row") -> str | None:
    """The first field (a path like `row.triplets[2][0]`) whose text cannot be UTF-8."""
    try:  # one pass in C for the common case: everything encodes
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return None
    except (UnicodeEncodeError, TypeError, ValueError):
        return _first_unencodable(value, field)


def _first_unencodable(value: Any, field: str) -> str | None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return field
        return None
    keys = [_first_unencodable(key, f"{field} key") for key in value] if isinstance(
        value, dict) else []
    return next((found for found in keys if found), None) or next(
        (found for path, item in _children(value, field)
         if (found := _first_unencodable(item, path))), None)


def _json_problem(value: Any, field: str) -> str | None:
    """Why `value` cannot be stored in a Milvus JSON field, or None."""
    if value is None or isinstance(value, (bool, str)):
        return None
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            return f"{field} is the integer {value}, outside the 64-bit range Milvus stores"
        return None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return f"{field} is {value}, which JSON cannot hold"
        return None
    if not isinstance(value, (dict, list, tuple)):
        return f"{field} is a {type(value).__name__}, which JSON cannot hold"
    if isinstance(value, dict):
        bad = [key for key in value if not isinstance(key, str)]
        if bad:
            return f"{field} has the key {bad[0]!r}: JSON keys are strings"
    return next((found for path, item in _children(value, field)
                 if (found := _json_problem(item, path))), None)
