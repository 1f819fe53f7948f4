"""The lexicon file: what a first query would otherwise build over the whole graph, saved
beside the snapshot (`GRAPH.lexicon.npz`, numpy arrays, no pickle).

It holds passage texts by id, stamped with the graph's write counter like the snapshot, and
whatever arrays the retrieval layer adds (its BM25 index and entity linker, see
`lexicon.saved`), stamped with that layer's own `version`. A later write may change a
passage's text under the same id, so texts saved at an earlier write are trusted only for
passages no write since touched (`lexicon.keeper`). The retrieval layer's arrays are
keyed by passage id and entity name and are brought up to date by what differs, so they
serve as a starting point at any write.

Saved atomically (temp + rename): a reader sees a whole file, old or new; any problem
(missing, another graph, another format, unreadable) reads as "nothing saved".
"""

from __future__ import annotations

import logging
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hopgraph.store.snapshot import pack_strings, unpack_strings, write_npz

log = logging.getLogger(__name__)

FORMAT = 1  # bump when the file's own layout (stamp, texts) changes
_PROBLEMS = (OSError, KeyError, ValueError, IndexError, UnicodeDecodeError, zipfile.BadZipFile)


def lexicon_path(snapshot_path: Path) -> Path:
    """The lexicon file that goes with a snapshot file."""
    return snapshot_path.with_name(f"{snapshot_path.stem}.lexicon.npz")


@dataclass
class Saved:
    """What a lexicon file holds: the write it was saved at, how many texts, and the
    strings and arrays asked for."""

    writes: int
    version: str
    texts: int
    strings: dict[str, list[str]]
    arrays: dict[str, np.ndarray]


def save(path: Path, graph: str, writes: int, version: str, texts: dict[str, str],
         strings: dict[str, list[str]], arrays: dict[str, np.ndarray]) -> None:
    """Write the file for graph `graph` (its identity) at write counter `writes`: `texts`
    (passage id -> text) and the caller's `strings` and `arrays` under its `version`."""
    stamp = {"stamp": [graph, version], "text_ids": list(texts), "texts": list(texts.values())}
    out: dict[str, np.ndarray] = {"format": np.array([FORMAT, writes], dtype=np.int64)}
    for key, values in {**stamp, **strings}.items():
        out[f"s:{key}:data"], out[f"s:{key}:offsets"] = pack_strings(values)
    out.update((f"a:{key}", value) for key, value in arrays.items())
    write_npz(path, out)


def load(path: Path, graph: str, strings: Iterable[str] = (), arrays: Iterable[str] = (),
         version: str | None = None) -> Saved | None:
    """The file's stamp and the `strings` and `arrays` asked for, or None (logged) when it
    is missing, of another graph, of another format or `version` (when given), or
    unreadable."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as npz:
            layout, saved_at = (int(v) for v in npz["format"][:2])
            name, saved_version = _strings(npz, "stamp")
            if (layout, name) != (FORMAT, graph) or (
                    version is not None and version != saved_version):
                log.info("lexicon file %s is stale (format %d, graph %s, write #%d, version "
                         "%s)", path, layout, name, saved_at, saved_version)
                return None
            count = len(npz["s:text_ids:offsets"]) - 1
            return Saved(saved_at, saved_version, count,
                         {key: _strings(npz, key) for key in strings},
                         {key: npz[f"a:{key}"] for key in arrays})
    except _PROBLEMS as exc:
        log.warning("lexicon file %s is unreadable (%s: %s); it is rebuilt when needed",
                    path, type(exc).__name__, exc)
        return None


def texts(path: Path, graph: str) -> tuple[int, dict[str, str]]:
    """The write the file was saved at and its passage texts ((-1, {}) without a file)."""
    saved = load(path, graph, ("text_ids", "texts"))
    if saved is None:
        return -1, {}
    ids, values = saved.strings["text_ids"], saved.strings["texts"]
    if len(ids) != len(values):
        log.warning("lexicon file %s has %d text ids for %d texts; not used", path,
                    len(ids), len(values))
        return -1, {}
    return saved.writes, dict(zip(ids, values, strict=True))


def _strings(npz: np.lib.npyio.NpzFile, key: str) -> list[str]:
    """Strings packed under `key`; ValueError when the offsets do not fit the data."""
    data, offsets = npz[f"s:{key}:data"], npz[f"s:{key}:offsets"]
    if len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != len(data) or np.any(
            np.diff(offsets) < 0):
        raise ValueError(f"strings {key!r} do not fit their offsets")
    return unpack_strings(data, offsets)
