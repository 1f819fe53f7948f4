"""The state of one opened graph: everything a process keeps of it, and when each part is stale.

Milvus holds the graph; this process keeps caches of it, each valid for one known state:

- **the graph** (`graph`, a `KnowledgeGraph`): read from the snapshot when the snapshot's
  stamp equals the write counter in the graph's meta row, else rebuilt from Milvus (`source`
  says which). This process's own writes change it in step with Milvus. `loaded_writes` is
  the counter it matches; -1 once another process wrote between our load and our write
  (the graph then misses rows: it is never snapshotted again).
- **the snapshot** (`store.snapshot_path()`): saved after a finished write only when no other
  process wrote since the graph was loaded, and never while a write is unfinished (a graph
  read mid-write may be partial).
- **the vector files** (`vector_files`, graph order): trusted only when the snapshot's
  recorded row count, the file's rows and the graph's size agree (`vector_rows`); appended
  by writes that started with them current, compacted by removals, discarded otherwise.
- **the retriever** (whatever `retriever(build)` built: search mirror, BM25, linker): built
  on first use from the current graph; dropped whenever a write starts (even one that
  fails), on `fork`, and when the caller says its settings changed (`forget_retriever`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np

from hopgraph.graph import KnowledgeGraph
from hopgraph.store import snapshot
from hopgraph.store.milvus import MilvusStore
from hopgraph.store.vectors import KINDS, vector_files

log = logging.getLogger(__name__)

R = TypeVar("R")


class Write:
    """One write to the graph, begun (the write counter bumped, the graph flagged as being
    written) just before its first row changes, so a run that changes nothing writes
    nothing; begun at once when the graph is flagged incomplete, so finishing clears it."""

    def __init__(self, store: MilvusStore, vectors_current: bool) -> None:
        self.store = store
        self.vectors_current = vectors_current  # the vector files matched the graph at start
        self.before: int | None = None
        self.after: int | None = None
        if store.incomplete:
            self.begin()

    def begin(self) -> None:
        """Start the write, once."""
        if self.after is None:
            self.before, self.after = self.store.begin_write()


class GraphState(Generic[R]):
    """One opened graph's in-process caches of Milvus (see the module docstring)."""

    def __init__(self, store: MilvusStore, dim: int) -> None:
        self.store = store
        self.vector_files = vector_files(store.snapshot_path(), dim)
        self.vector_rows: dict[str, int] = {}
        self.loaded_writes = -1
        self.source = ""  # where the graph was read from: "snapshot" or "Milvus"
        self._retriever: R | None = None
        self.graph = self._load()

    # --- the graph and its snapshot --------------------------------------------------------

    def _load(self) -> KnowledgeGraph:
        """The graph from its snapshot when that is current, else rebuilt from Milvus."""
        started = time.perf_counter()
        path, writes = self.store.snapshot_path(), self.store.writes
        self.loaded_writes = writes
        saved = snapshot.load(path, self.store.graph, writes)
        if saved is None:
            graph, self.source = scan_graph(self.store), "Milvus"
            for file in self.vector_files.values():  # not known to match this graph
                file.discard()
            self.vector_rows = {kind: 0 if not size else -1
                                for kind, size in sizes(graph).items()}
            self._save_snapshot(graph, writes)
        else:
            graph, self.vector_rows, self.source = saved.graph, saved.vector_rows, "snapshot"
        log.info("loaded graph %s from %s: %d entities, %d relations in %.2fs",
                 self.store.graph, self.source, len(graph.entity_ids), len(graph.relations),
                 time.perf_counter() - started)
        return graph

    def _save_snapshot(self, graph: KnowledgeGraph, writes: int) -> None:
        """Save the snapshot; a failure costs only the next open's speed, so it is logged.
        Not while a write is unfinished: the graph read may be partial."""
        if self.store.incomplete:
            return
        path = self.store.snapshot_path()
        try:
            snapshot.save(graph, path, self.store.graph, writes, self.vector_rows)
        except OSError as exc:
            log.warning("could not save the graph snapshot %s (%s); the next open rebuilds "
                        "the graph from Milvus", path, exc)

    def fork(self) -> None:
        """Give the next write its own copy of the graph: retrievers already handed out keep
        the graph they were built on, whole, while the write runs."""
        self.graph = self.graph.copy()
        self._retriever = None

    def drop(self) -> bool:
        """Delete the graph's collections, snapshot and vector files; whether it existed."""
        found = self.store.drop()
        self.store.snapshot_path().unlink(missing_ok=True)
        for file in self.vector_files.values():
            file.discard()
        self.graph = KnowledgeGraph()
        self._retriever = None
        return found

    # --- the vector files -------------------------------------------------------------------

    def vectors_current(self) -> bool:
        """Whether every vector file holds exactly the graph's rows, as the snapshot says."""
        return all(self.vector_rows.get(kind) == size == self.vector_files[kind].rows()
                   for kind, size in sizes(self.graph).items())

    def current_vectors(self) -> dict[str, np.ndarray | None]:
        """The on-disk vectors that match the graph (memory maps), by kind (None: stale)."""
        return {kind: self.vector_files[kind].read(size)
                if self.vector_rows.get(kind) == size else None
                for kind, size in sizes(self.graph).items()}

    def keep_vectors(self, matrices: dict[str, np.ndarray]) -> None:
        """Write vectors read back from Milvus (graph order, by kind) to disk, for the next
        process; not when another process wrote since the graph was loaded."""
        if self.loaded_writes < 0:
            return
        for kind, matrix in matrices.items():
            self.vector_files[kind].write(matrix)
            self.vector_rows[kind] = len(matrix)
        self._save_snapshot(self.graph, self.loaded_writes)

    # --- the retriever ----------------------------------------------------------------------

    def retriever(self, build: Callable[[], R]) -> R:
        """The retriever over the current graph, built by `build` when there is none."""
        if self._retriever is None:
            self._retriever = build()
        return self._retriever

    def forget_retriever(self) -> None:
        """Drop the retriever: the next `retriever` call builds a new one (after a change of
        the graph, or of how it should search)."""
        self._retriever = None

    # --- writes ----------------------------------------------------------------------------

    def begin(self) -> Write:
        """Prepare a write (collections loaded, the retriever dropped); it starts in
        Milvus when its first row changes (`Write.begin`)."""
        self.store.ensure_all_loaded()
        self._retriever = None
        return Write(self.store, self.vectors_current())

    def vector_sink(self, write: Write) -> Callable[[str, np.ndarray], None] | None:
        """Where a write appends the vectors of rows it adds (None: the files are stale)."""
        if not write.vectors_current:
            return None
        return lambda kind, vectors: self.vector_files[kind].append(vectors)

    def replace_graph(self, graph: KnowledgeGraph, masks: dict[str, np.ndarray],
                      write: Write) -> None:
        """After a removal: the graph without the removed rows, the vector files compacted
        with the same masks of rows kept (or discarded when they cannot be)."""
        self.graph = graph
        self._retriever = None
        for kind, mask in masks.items():
            if not (write.vectors_current and self.vector_files[kind].keep(mask)):
                self.vector_files[kind].discard()

    def finish(self, write: Write) -> None:
        """After a write: trust the vector files only if they hold the graph's rows; if
        anything was written, flush, mark the write finished and snapshot the graph."""
        for kind, size in sizes(self.graph).items():
            file = self.vector_files[kind]
            current = write.vectors_current and file.rows() == size
            self.vector_rows[kind] = size if current else -1
            if not current:
                file.discard()
        if write.after is None:  # nothing written: the snapshot stays current
            return
        self.store.flush()  # Milvus Lite searches unflushed rows ~30x slower
        self.store.end_write(write.after)
        if write.before == self.loaded_writes:  # no other process wrote since we loaded
            self._save_snapshot(self.graph, write.after)
            self.loaded_writes = write.after
        else:  # our graph misses another writer's rows: never snapshot it
            self.loaded_writes = -1


def sizes(graph: KnowledgeGraph) -> dict[str, int]:
    """Rows of each kind (entities, relations, passages) the graph holds."""
    counts = {"entities": len(graph.entity_ids), "relations": len(graph.relations),
              "passages": len(graph.passage_ids)}
    return {kind: counts[kind] for kind in KINDS}


def scan_graph(store: MilvusStore) -> KnowledgeGraph:
    """The graph read back from Milvus (every entity, relation and passage id)."""
    graph = KnowledgeGraph()
    store.ensure_all_loaded()
    for row in store.scan(store.entities, ["id", "name"]):
        graph.add_entity(row["id"], row["name"])
    for row in store.scan(store.relations,
                          ["id", "subject_id", "object_id", "text", "passage_ids"]):
        graph.add_relation(row["id"], row["subject_id"], row["object_id"], row["text"],
                           list(row["passage_ids"]))
    for row in store.scan(store.passages, ["id", "doc_id"]):
        graph.add_passage(row["id"], row["doc_id"])  # those without relations too
    return graph
