"""The graph snapshot: the in-memory graph's structure saved with numpy (`npz`, no pickle), so
reopening a graph does not read every entity and relation back from Milvus.

A snapshot is stamped with the graph's write counter (kept in Milvus, in the graph's meta
row). Every write bumps the counter *before* it touches a row and saves a new snapshot only
after it finished, so a crash mid-write leaves a snapshot whose stamp is behind: it is then
rebuilt from Milvus, like a missing, foreign or corrupt one. Nothing is trusted blindly.

Strings (ids, names, relation texts, document ids) are stored as one UTF-8 byte array plus
offsets, a relation's passages as CSR rows into a table of passage ids, and each passage's
document as an index into the table of document ids.
"""

from __future__ import annotations

import logging
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hopgraph.graph import KnowledgeGraph
from hopgraph.store.atomic import replace_file

log = logging.getLogger(__name__)

FORMAT = 5  # bump when the layout changes: older files are then rebuilt
VECTOR_KINDS = ("entities", "relations", "passages")


def pack_strings(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Strings as one UTF-8 byte array and offsets (numpy can save them without pickle).
    Encoded in one piece: when every character is ASCII (ids, most names), a string's
    length in bytes is its length (much faster at 1M relations: benchmarks/RESULTS.md,
    "Figures moved from code comments")."""
    joined = "".join(strings)
    data = joined.encode("utf-8")
    if len(data) == len(joined):
        lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    else:
        lengths = np.fromiter((len(s.encode("utf-8")) for s in strings), dtype=np.int64,
                              count=len(strings))
    offsets = np.zeros(len(strings) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return np.frombuffer(data, dtype=np.uint8), offsets


def unpack_strings(data: np.ndarray, offsets: np.ndarray) -> list[str]:
    """The strings `pack_strings` packed (decoded in one piece when they are ASCII)."""
    raw = data.tobytes()
    bounds = offsets.tolist()
    if raw.isascii():
        text = raw.decode("ascii")
        return [text[bounds[i]:bounds[i + 1]] for i in range(len(bounds) - 1)]
    return [raw[bounds[i]:bounds[i + 1]].decode("utf-8") for i in range(len(bounds) - 1)]


def save(graph: KnowledgeGraph, path: Path, graph_name: str, writes: int,
         vector_rows: dict[str, int] | None = None) -> None:
    """Write the snapshot of `graph` at write counter `writes` (atomically: temp + rename).

    `vector_rows` records how many rows each vector file (`store.vectors`) held for this
    graph (-1 or absent: none trusted).
    """
    columns = graph.arrays()
    arrays: dict[str, np.ndarray] = {
        "format": np.array([FORMAT], dtype=np.int64),
        "writes": np.array([writes], dtype=np.int64),
        **columns,
        "vector_rows": np.array([(vector_rows or {}).get(kind, -1) for kind in VECTOR_KINDS],
                                dtype=np.int64),
    }
    for key, strings in (("graph_name", [graph_name]), ("entity_ids", graph.entity_ids),
                         ("entity_names", graph.entity_names),
                         ("relation_ids", graph.relation_ids),
                         ("relation_texts", graph.relation_texts),
                         ("passage_ids", graph.passage_ids), ("doc_ids", graph.doc_ids)):
        arrays[f"{key}_data"], arrays[f"{key}_offsets"] = pack_strings(strings)
    write_npz(path, arrays)


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Save `arrays` to `path` atomically (`store.atomic`)."""
    # allow_pickle: numpy's default, named so that no key of `arrays` is taken for it (mypy)
    replace_file(path, lambda out: np.savez(out, allow_pickle=True, **arrays))


@dataclass
class Snapshot:
    """A current snapshot's graph, and the vector-file row counts it recorded (-1: none)."""

    graph: KnowledgeGraph
    vector_rows: dict[str, int]


def load(path: Path, graph_name: str, writes: int) -> Snapshot | None:
    """The snapshot at `path`, or None (logged) if it is missing, of another graph, from
    another write counter, another format, or unreadable."""
    if not path.is_file():
        log.info("no graph snapshot at %s", path)
        return None
    try:
        with np.load(path, allow_pickle=False) as npz:
            # The stamp first: a stale snapshot is not decoded any further.
            name = unpack_strings(npz["graph_name_data"], npz["graph_name_offsets"])[0]
            stamp = (int(npz["format"][0]), name, int(npz["writes"][0]))
            if stamp != (FORMAT, graph_name, writes):
                log.info("graph snapshot %s is stale (format, graph, writes %s; expected %s)",
                         path, stamp, (FORMAT, graph_name, writes))
                return None
            arrays = {key: npz[key] for key in npz.files}
        strings = {key: unpack_strings(arrays[f"{key}_data"], arrays[f"{key}_offsets"])
                   for key in ("entity_ids", "entity_names", "relation_ids",
                               "relation_texts", "passage_ids", "doc_ids")}
        rows = dict(zip(VECTOR_KINDS, arrays["vector_rows"].tolist(), strict=True))
        return Snapshot(_graph(arrays, strings), rows)
    except (OSError, KeyError, ValueError, IndexError, UnicodeDecodeError,
            zipfile.BadZipFile) as exc:
        log.warning("graph snapshot %s is unreadable (%s: %s); rebuilding it from Milvus",
                    path, type(exc).__name__, exc)
        return None


def _graph(arrays: dict[str, np.ndarray], strings: dict[str, list[str]]) -> KnowledgeGraph:
    return KnowledgeGraph.from_arrays(
        strings["entity_ids"], strings["entity_names"], strings["relation_ids"],
        strings["relation_texts"], arrays["subject"], arrays["object"], strings["passage_ids"],
        arrays["passage_indptr"], arrays["passage_index"], strings["doc_ids"],
        arrays["passage_doc"])
