"""What a file is by its bytes, before a reader opens it: a Word, PowerPoint or Excel file is
a ZIP holding its main part (`word/document.xml`...), an old binary or encrypted Office file
an OLE2 compound file, an HTML page text that opens with its markup. And the libraries the
heavy readers need, which come with the `office` extra.

A file whose name says Office but whose bytes do not is refused here with one sentence
saying what it is instead, before a library meets it (a library's own error about a bad
ZIP or a missing part names no file and says nothing of what to do).
"""

from __future__ import annotations

import importlib
import re
import zipfile
from pathlib import Path
from types import ModuleType

from hopgraph.errors import InputError, install_extra

ZIP_SIGNATURE = b"PK\x03\x04"
OLE2_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Compound File Binary: .doc, .xls,
# .ppt, and an Office file saved with a password (its encrypted package lives inside one)
MAIN_PARTS = {"docx": "word/document.xml", "pptx": "ppt/presentation.xml",
              "xlsx": "xl/workbook.xml"}
NAMES = {"docx": "Word", "pptx": "PowerPoint", "xlsx": "Excel"}
MAX_XML_BYTES = 256 * 1024 * 1024  # unpacked XML a reader loads whole (sheets are streamed)
_HTML_START = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b",
                         re.I | re.S)


def zip_kind(path: Path) -> str | None:
    """"docx", "pptx" or "xlsx" for a ZIP holding that format's main part, else None."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return None
    return next((kind for kind, part in MAIN_PARTS.items() if part in names), None)


def sniff_kind(head: bytes, path: Path) -> str | None:
    """The kind of a file with no suffix when its first bytes show a format with structure:
    an Office ZIP or an HTML page; None when they do not (it may still be text)."""
    if head.startswith(ZIP_SIGNATURE):
        return zip_kind(path)
    if _HTML_START.match(head.removeprefix(b"\xef\xbb\xbf")):
        return "html"
    return None


def check_office(path: Path, kind: str) -> None:
    """An InputError naming what is wrong when `path` is not a readable `kind` file: an OLE2
    file (encrypted, or the old binary format renamed), not a ZIP, a ZIP without the main
    part (another format renamed), or more XML than MAX_XML_BYTES to load."""
    name = f"{NAMES[kind]} (.{kind})"
    try:
        with path.open("rb") as handle:
            head = handle.read(len(OLE2_SIGNATURE))
    except OSError as exc:
        raise InputError(f"cannot read file ({exc})", where=str(path)) from exc
    if head.startswith(OLE2_SIGNATURE):
        raise InputError("encrypted or old binary Office file, not a readable " + name,
                         where=str(path), fix="remove its password, or save it again as "
                         f".{kind} (File > Save As)")
    try:
        with zipfile.ZipFile(path) as archive:
            parts = {info.filename: info.file_size for info in archive.infolist()}
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"not a {name} file: not a ZIP archive (damaged or renamed?)",
                         where=str(path)) from exc
    if MAIN_PARTS[kind] not in parts:
        found = next((NAMES[other] for other, part in MAIN_PARTS.items() if part in parts),
                     None)
        article = "an" if found and found[0] in "AEIOU" else "a"
        what = f"it is {article} {found} file" if found else "it holds no such document"
        raise InputError(f"not a {name} file: no {MAIN_PARTS[kind]} ({what})", where=str(path))
    loaded = sum(size for part, size in parts.items() if part.endswith((".xml", ".rels"))
                 and not part.startswith("xl/worksheets/"))
    if loaded > MAX_XML_BYTES:
        raise InputError(f"too large: {loaded // 2**20} MB of XML to read (at most "
                         f"{MAX_XML_BYTES // 2**20} MB)", where=str(path))


def office_library(module: str, package: str, path: Path) -> ModuleType:
    """The library a reader of `path` needs, or an InputError naming the `office` extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise InputError(f"reading {path.suffix or 'this'} files needs {package}",
                         where=str(path), fix=install_extra("office")) from exc
