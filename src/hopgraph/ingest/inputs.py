"""What each input is: a file of passage/triplet rows (JSON, JSONL, HippoRAG OpenIE) or a raw
document (.txt, .md, .pdf), by suffix and, when the suffix does not say, by content.
Folders are walked; a file in a folder that is neither is skipped and reported.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from hopgraph.errors import InputError
from hopgraph.ingest.encoding import text_codec
from hopgraph.ingest.reading import folder_files, kind_of
from hopgraph.records import Problem

ROW_SUFFIXES = (".json", ".jsonl")


@dataclass
class Inputs:
    """The inputs sorted: row files, raw documents, and folder files skipped."""

    rows: list[Path] = field(default_factory=list)
    documents: list[Path] = field(default_factory=list)
    skipped: list[Problem] = field(default_factory=list)


def sort_inputs(paths: Iterable[str | Path], documents_only: bool = False) -> Inputs:
    """Sort files and folders into row files and raw documents (`documents_only`: every
    text file is a raw document, as `--extract` asks). A missing path, or a file given by
    name that is neither, is an InputError naming it."""
    found = Inputs()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = folder_files(path)
            before = len(found.rows) + len(found.documents)
            for file in files:
                _sort(file, found, documents_only, in_folder=True)
            if len(found.rows) + len(found.documents) == before:
                raise InputError("no input files found in this folder (JSON, JSONL, .txt, .md "
                                 ".pdf)", where=str(path))
        elif not path.exists():
            raise InputError("no such file or folder", where=str(path))
        else:
            _sort(path, found, documents_only, in_folder=False)
    return found


def _sort(path: Path, found: Inputs, documents_only: bool, in_folder: bool) -> None:
    if path.suffix.lower() in ROW_SUFFIXES and not documents_only:
        found.rows.append(path)
        return
    kind = kind_of(path)
    if kind is None or (documents_only and path.suffix.lower() in ROW_SUFFIXES):
        what = (f"unsupported file type {path.suffix or '(none)'!r}: neither passage/triplet "
                "rows nor a .txt, .md or .pdf document")
        if not in_folder:
            raise InputError(what, where=str(path),
                             fix="inputs are .json/.jsonl rows or .txt/.md/.pdf documents")
        found.skipped.append(Problem(str(path), f"skipped: {what}"))
    elif kind == "txt" and not documents_only and _holds_rows(path):
        found.rows.append(path)
    else:
        found.documents.append(path)


def _holds_rows(path: Path) -> bool:
    """Whether a text file (no .json suffix) holds JSON rows in our formats."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(1 << 18)  # 64k characters of at most 4 bytes
        decoder = codecs.getincrementaldecoder(text_codec(raw) or "utf-8")()
        head = decoder.decode(raw, final=False).removeprefix("\ufeff")[:1 << 16]
    except (OSError, UnicodeDecodeError):
        return False
    stripped = head.lstrip()
    if stripped[:1] not in ("{", "["):
        return False
    first = stripped.splitlines()[0]
    for candidate in (first, stripped):
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        return isinstance(value, (dict, list))
    return stripped[:1] == "[" and len(head) == 1 << 16  # a large JSON array, cut short
