"""Read passages and triplets from JSON, JSONL and HippoRAG OpenIE files.

Malformed rows and triplets are skipped and recorded with their place; only an empty,
unreadable or wholly unrecognizable file is an error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hopgraph.identity import normalize
from hopgraph.records import LoadReport, PassageRecord, Problem, Triplet


class InputError(ValueError):
    """A file that cannot be read as input at all."""


def load_file(path: str | Path) -> LoadReport:
    """Read one input file (format guessed from its content) into records and problems."""
    path = Path(path)
    raw = read_text(path)
    report = LoadReport(path=str(path))
    for where, row in _rows(path, raw, report):
        read_row(row, where, report)
    if not report.records and report.problems:
        first = report.problems[0]
        raise InputError(
            f"{path}: no valid passage found ({len(report.problems)} problems; "
            f"first at {first.where}: {first.what})"
        )
    return report


def read_text(path: Path) -> str:
    """A UTF-8 text file's content; unreadable or empty files are an InputError naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read file ({exc})") from exc
    if not text.strip():
        raise InputError(f"{path}: file is empty")
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
            f"{path}: unrecognized JSON; expected a list of passages, "
            '{"passages": [...]}, {"docs": [...]} (HippoRAG OpenIE) or JSONL'
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
            report.problems.append(Problem(where, f"invalid JSON ({exc.msg})"))
            report.rows_skipped += 1
            continue
        parsed += 1
        yield where, row
    if parsed == 0:
        raise InputError(f"{path}: neither JSON nor JSONL (no line parses as JSON)")


def _skip_row(report: LoadReport, where: str, what: str) -> None:
    report.problems.append(Problem(where, what))
    report.rows_skipped += 1


def read_row(row: Any, where: str, report: LoadReport) -> None:
    """Check one input row; append its record, or its problems, to `report`."""
    if not isinstance(row, dict):
        _skip_row(report, where, f"row is a {type(row).__name__}, expected an object")
        return
    if "passage" in row and "extracted_triples" not in row:
        text, triplets_raw, key = row.get("passage"), row.get("triplets", []), "triplets"
        metadata = row.get("metadata", {})
        doc_id = row.get("id")
    else:  # HippoRAG OpenIE doc: title + "\n" + text
        title, body = row.get("title"), row.get("text")
        if not isinstance(title, str) or not isinstance(body, str):
            _skip_row(report, where, 'expected "passage", or "title" and "text" strings')
            return
        text = f"{title}\n{body}" if title else body
        triplets_raw, key = row.get("extracted_triples", []), "extracted_triples"
        metadata, doc_id = {"title": title}, None
    if not isinstance(text, str) or not text.strip():
        _skip_row(report, where, "passage text is missing or empty")
        return
    if not isinstance(triplets_raw, list):
        _skip_row(report, where, f'"{key}" must be a list')
        return
    if not isinstance(metadata, dict):
        _skip_row(report, where, '"metadata" must be an object')
        return
    if doc_id is not None and not isinstance(doc_id, (str, int)):
        _skip_row(report, where, '"id" must be a string')
        return
    triplets = _read_triplets(triplets_raw, where, report)
    report.records.append(
        PassageRecord(
            text=text,
            triplets=triplets,
            doc_id=str(doc_id) if doc_id is not None else None,
            metadata=metadata,
            source=where,
        )
    )


def _read_triplets(items: list[Any], where: str, report: LoadReport) -> list[Triplet]:
    triplets: list[Triplet] = []
    seen: set[tuple[str, str, str]] = set()
    for i, item in enumerate(items):
        problem = _triplet_problem(item)
        if problem is None:
            key = tuple(normalize(part) for part in item)
            if key in seen:
                problem = "duplicate of an earlier triplet"
        if problem is not None:
            report.problems.append(Problem(f"{where} triplet {i}", problem))
            report.triplets_skipped += 1
            continue
        seen.add(key)
        triplets.append(Triplet(*(part.strip() for part in item)))
    return triplets


def _triplet_problem(item: Any) -> str | None:
    if not isinstance(item, (list, tuple)):
        return f"expected [subject, predicate, object], got {type(item).__name__}"
    if len(item) != 3:
        return f"expected 3 parts, got {len(item)}"
    for name, part in zip(("subject", "predicate", "object"), item, strict=True):
        if not isinstance(part, str):
            return f"{name} is {type(part).__name__}, expected a string"
        if not part.strip():
            return f"{name} is empty"
    return None
