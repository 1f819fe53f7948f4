"""What each input is: a file of passage/triplet rows (JSON, JSONL, HippoRAG OpenIE) or a raw
document (.txt, .md, .pdf, .docx, .html...: `reading.SUFFIXES`), by suffix and, when the
suffix does not say, by content.
Folders are walked; a file in a folder that is neither is skipped and reported.

Each file also gets its document id here, one way for the CLI, the API and uploads: its
path relative to the folder it was found in (`hr/policy.md` of `hopgraph ingest docs/`),
or, for a file given by itself, its name (`policy.md`), whatever the current directory or
however the path was typed. `root` makes every id relative to one folder instead. The ids
earlier versions gave the same file (the path as typed, or absolute) are its `aliases`: a
write retires the stored documents of those ids (`ingest.sync`).
"""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from hopgraph.errors import InputError
from hopgraph.ingest.encoding import text_codec
from hopgraph.ingest.reading import SUFFIXES, folder_files, kind_of, unsupported
from hopgraph.records import Problem

ROW_SUFFIXES = (".json", ".jsonl")


def readable_kinds() -> str:
    """The inputs hopgraph reads, for messages: "JSON/JSONL rows, .txt, .md, ... documents"."""
    return f"JSON/JSONL rows or {', '.join(SUFFIXES)} documents"


@dataclass
class Inputs:
    """The inputs sorted: row files, raw documents, folder files skipped, and each file's
    document id (by the path it was found at) with the older ids of the same file."""

    rows: list[Path] = field(default_factory=list)
    documents: list[Path] = field(default_factory=list)
    skipped: list[Problem] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)  # str(path) -> document id
    aliases: dict[str, str] = field(default_factory=dict)  # older id -> document id
    named: set[Path] = field(default_factory=set)  # the files given ids, resolved


def sort_inputs(paths: Iterable[str | Path], documents_only: bool = False,
                root: str | Path | None = None) -> Inputs:
    """Sort files and folders into row files and raw documents (`documents_only`: every
    text file is a raw document, as `--extract` asks), each with its document id. A missing
    path, a file given by name that is neither, a file outside `root` or two files with
    one id is an InputError naming them."""
    found = Inputs()
    base = None if root is None else Path(root).resolve()
    if base is not None and not base.is_dir():
        raise InputError("the root of document ids is not a folder", where=str(root))
    owners: dict[str, Path] = {}  # document id -> the file that has it
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            readable = 0
            for file in folder_files(path):
                if file.resolve() in found.named:
                    readable += 1  # given twice (a folder and a file in it): the first id holds
                elif _sort(file, found, documents_only, in_folder=True):
                    readable += 1
                    _name(file, base or path.resolve(), found, owners)
            if not readable:
                raise _nothing_readable(path, found.skipped)
        elif not path.exists():
            raise InputError("no such file or folder", where=str(path))
        elif path.resolve() in found.named:
            continue
        elif _sort(path, found, documents_only, in_folder=False):
            _name(path, base or path.resolve().parent, found, owners)
    return found


def _nothing_readable(folder: Path, skipped: list[Problem]) -> InputError:
    here = [p for p in skipped if Path(p.where).is_relative_to(folder)]
    kinds = sorted({Path(p.where).suffix.lower() or "(no suffix)" for p in here})
    seen = (f": {len(here)} files of other types ({', '.join(kinds)})" if here
            else ": it holds no files")
    return InputError(f"nothing to read in this folder{seen}", where=str(folder),
                      fix=f"hopgraph reads {readable_kinds()}")


def _name(path: Path, base: Path, found: Inputs, owners: dict[str, Path]) -> None:
    """Give `path` its document id, relative to `base`, and note its older ids."""
    resolved = path.resolve()
    try:
        doc = resolved.relative_to(base).as_posix()
    except ValueError:
        raise InputError(f"this file is outside the root of document ids ({base})",
                         where=str(path), fix="give a --root that holds every input") from None
    other = owners.get(doc)
    if other is not None and other != resolved:
        raise InputError(f"two files would be one document {doc!r}: {other} and {resolved}",
                         where=str(path), fix="ingest them separately (each replaces the "
                         "other), or give --root, a folder holding both, so that ids keep "
                         "their folders")
    owners[doc] = resolved
    found.named.add(resolved)
    found.ids[str(path)] = doc
    for older in (os.path.normpath(str(path)), str(resolved)):
        if older != doc:
            found.aliases[older] = doc


def _sort(path: Path, found: Inputs, documents_only: bool, in_folder: bool) -> bool:
    """File `path` among the rows, documents or skipped files; whether it will be read."""
    if path.suffix.lower() in ROW_SUFFIXES and not documents_only:
        found.rows.append(path)
        return True
    kind = kind_of(path)
    if kind is None or (documents_only and path.suffix.lower() in ROW_SUFFIXES):
        what = unsupported(path)
        if not in_folder:
            raise InputError(what, where=str(path), fix=f"hopgraph reads {readable_kinds()}")
        found.skipped.append(Problem(str(path), f"{what} (not read)"))
        return False
    if kind == "txt" and not documents_only and _holds_rows(path):
        found.rows.append(path)
    else:
        found.documents.append(path)
    return True


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
