"""The Python API: `GraphRAG` opens one graph and ingests into it and retrieves from it."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Sized
from pathlib import Path
from typing import Any

import numpy as np

from hopgraph.config import Settings
from hopgraph.embed import Embedder, make_embedder
from hopgraph.graph import KnowledgeGraph
from hopgraph.ingest import Ingestor, Progress, load_file, read_row
from hopgraph.ingest.loaders import check_record
from hopgraph.llm import LLMClient
from hopgraph.records import IngestSummary, LoadReport, PassageRecord, Retrieval
from hopgraph.retrieve import Retriever
from hopgraph.retrieve.search import MemorySearcher, make_searcher
from hopgraph.store import MilvusStore, snapshot
from hopgraph.store.vectors import vector_files

log = logging.getLogger(__name__)


class GraphRAG:
    """One graph in one Milvus database: ingest passages with triplets, retrieve multi-hop."""

    def __init__(
        self, uri: str | None = None, graph: str | None = None, token: str | None = None,
        embedder: str | Embedder | None = None, create: bool = True,
        memory_limit: int | None = None, llm: LLMClient | None = None,
        mirror_scan: bool = True,
    ) -> None:
        spec = embedder if isinstance(embedder, str) or embedder is None else None
        self.settings = Settings.load(uri=uri, graph=graph, token=token, embedder=spec,
                                      memory_limit=memory_limit)
        self._owns_embedder = embedder is None or isinstance(embedder, str)
        self.embedder = (make_embedder(self.settings.embedder, self.settings.embed_base_url,
                                       self.settings.embed_runtime)
                         if self._owns_embedder else embedder)
        self.store = MilvusStore(self.settings.uri, self.settings.graph, self.settings.token,
                                 create=create)
        try:
            self.store.open(self.embedder.name, self.embedder.dim, create=create)
            self.vector_files = vector_files(self.store.snapshot_path(), self.embedder.dim)
            self.graph = self._load_graph()
        except BaseException:
            self.close()  # a Milvus Lite file stays locked while a client holds it
            raise
        self.llm = llm  # enables method "llm"; the caller owns and closes it
        # Whether the mirror may read vectors back from Milvus when the vector files are not
        # current (seconds to minutes; worth it over many questions, not for one).
        self.mirror_scan = mirror_scan
        self._retriever: Retriever | None = None

    def _load_graph(self) -> KnowledgeGraph:
        """The graph from its snapshot when that is current, else rebuilt from Milvus."""
        started = time.perf_counter()
        path, writes = self.store.snapshot_path(), self.store.writes
        self._loaded_writes = writes
        saved = snapshot.load(path, self.store.graph, writes)
        source = "snapshot"
        if saved is None:
            graph, source = self._scan_graph(), "Milvus"
            for file in self.vector_files.values():  # not known to match this graph
                file.discard()
            self._vector_rows = {kind: 0 if not size else -1
                                 for kind, size in self._sizes(graph).items()}
            self._save_snapshot(graph, writes)
        else:
            graph, self._vector_rows = saved.graph, saved.vector_rows
        log.info("loaded graph %s from %s: %d entities, %d relations in %.2fs",
                 self.store.graph, source, len(graph.entity_ids), len(graph.relations),
                 time.perf_counter() - started)
        return graph

    def _scan_graph(self) -> KnowledgeGraph:
        graph = KnowledgeGraph()
        self.store.ensure_all_loaded()
        for row in self.store.scan(self.store.entities, ["id", "name"]):
            graph.add_entity(row["id"], row["name"])
        for row in self.store.scan(self.store.relations,
                                   ["id", "subject_id", "object_id", "text", "passage_ids"]):
            graph.add_relation(row["id"], row["subject_id"], row["object_id"], row["text"],
                               list(row["passage_ids"]))
        for row in self.store.scan(self.store.passages, ["id"]):  # those without relations too
            graph.add_passage(row["id"])
        return graph

    @staticmethod
    def _sizes(graph: KnowledgeGraph) -> dict[str, int]:
        return {"entities": len(graph.entity_ids), "relations": len(graph.relations),
                "passages": len(graph.passage_ids)}

    def _vectors_current(self) -> bool:
        """Whether every vector file holds exactly the graph's rows, as the snapshot says."""
        return all(self._vector_rows.get(kind) == size == self.vector_files[kind].rows()
                   for kind, size in self._sizes(self.graph).items())

    def _current_vectors(self) -> dict[str, np.ndarray | None]:
        """The on-disk vectors that match the graph (memory maps), by kind."""
        return {kind: self.vector_files[kind].read(size)
                if self._vector_rows.get(kind) == size else None
                for kind, size in self._sizes(self.graph).items()}

    def _save_snapshot(self, graph: KnowledgeGraph, writes: int) -> None:
        """Save the snapshot; a failure costs only the next open's speed, so it is logged.
        Not while a write is unfinished: the graph read may be partial."""
        if self.store.incomplete:
            return
        path = self.store.snapshot_path()
        try:
            snapshot.save(graph, path, self.store.graph, writes, self._vector_rows)
        except OSError as exc:
            log.warning("could not save the graph snapshot %s (%s); the next open rebuilds "
                        "the graph from Milvus", path, exc)

    @property
    def retriever(self) -> Retriever:
        """The query pipeline over the current graph (rebuilt after ingestion)."""
        if self._retriever is None:
            searcher = make_searcher(self.store, self.graph, self.settings.memory_limit,
                                     self._current_vectors(), scan=self.mirror_scan)
            if isinstance(searcher, MemorySearcher) and searcher.scanned:
                self._keep_vectors(searcher)
            self._retriever = Retriever(self.graph, self.embedder, searcher, self.llm)
        return self._retriever

    def _append_vectors(self, kind: str, vectors: np.ndarray) -> None:
        self.vector_files[kind].append(vectors)

    def _keep_vectors(self, mirror: MemorySearcher) -> None:
        """Write the vectors a mirror scanned from Milvus to disk, for the next process."""
        if self._loaded_writes < 0:  # another process wrote: this graph is not current
            return
        for kind, matrix in mirror.matrices().items():
            if kind in mirror.scanned:
                self.vector_files[kind].write(matrix)
                self._vector_rows[kind] = len(matrix)
        self._save_snapshot(self.graph, self._loaded_writes)

    def add(self, items: Iterable[PassageRecord | dict[str, Any]],
            progress: Progress | None = None) -> IngestSummary:
        """Ingest `PassageRecord`s or dicts {"passage", "triplets", "id"?, "metadata"?}.

        `items` is consumed as a stream (a generator works), chunk by chunk: memory follows
        the chunk, not the input.
        """
        report = LoadReport(path="items")

        def checked() -> Iterator[PassageRecord]:
            for i, item in enumerate(items):
                if isinstance(item, PassageRecord):
                    if check_record(item, f"item {i}", report):
                        yield item
                    continue
                # The same checks as a file row: bad items are skipped and reported.
                before = len(report.records)
                read_row(item, f"item {i}", report)
                yield from report.records[before:]
                del report.records[before:]

        return self._ingest(checked(), [report], progress, total=_length(items))

    def add_files(self, paths: Iterable[str | Path], progress: Progress | None = None
                  ) -> IngestSummary:
        """Ingest input files; malformed rows are skipped and reported in the summary."""
        return self.add_reports([load_file(path) for path in paths], progress)

    def add_reports(self, reports: list[LoadReport], progress: Progress | None = None
                    ) -> IngestSummary:
        """Ingest the records of loader or extractor reports; their problems join the summary."""
        records = [record for report in reports for record in report.records]
        return self._ingest(records, reports, progress, total=len(records))

    def _ingest(self, records: Iterable[PassageRecord], reports: list[LoadReport],
                progress: Progress | None, total: int) -> IngestSummary:
        self.store.ensure_all_loaded()
        # Bump the write counter first: a crash below leaves the snapshot behind, not wrong.
        before, after = self.store.begin_write()
        sink = self._append_vectors if self._vectors_current() else None
        try:
            summary = Ingestor(self.store, self.graph, self.embedder, vector_sink=sink
                               ).ingest(records, progress, total=total)
        finally:
            self._retriever = None  # the graph may have grown, even if the write failed
        sizes = self._sizes(self.graph)
        for kind, file in self.vector_files.items():
            current = sink is not None and file.rows() == sizes[kind]
            self._vector_rows[kind] = sizes[kind] if current else -1
            if not current:
                file.discard()
        summary.include(reports)
        self.store.flush()  # Milvus Lite searches unflushed rows ~30x slower
        self.store.end_write(after)
        if before == self._loaded_writes:  # no other process wrote since we loaded
            self._save_snapshot(self.graph, after)
            self._loaded_writes = after
        else:  # our graph misses another writer's rows: never snapshot it
            self._loaded_writes = -1
        return summary

    def retrieve(self, question: str, top_k: int = 5, degree: int = 1,
                 entities: list[str] | None = None, method: str = "default") -> Retrieval:
        """Graph retrieval: passages for a (multi-hop) question, best first, with evidence."""
        return self.retriever.retrieve(question, top_k=top_k, degree=degree,
                                       entities=entities, method=method)

    def naive(self, question: str, top_k: int = 5) -> Retrieval:
        """Plain dense passage retrieval, for comparison."""
        return self.retriever.retrieve(question, top_k=top_k, method="naive")

    def stats(self) -> dict[str, Any]:
        """Row counts and the graph's settings."""
        return self.store.stats()

    def drop(self) -> bool:
        """Delete this graph's collections."""
        found = self.store.drop()
        self.store.snapshot_path().unlink(missing_ok=True)
        for file in self.vector_files.values():
            file.discard()
        self.graph = KnowledgeGraph()
        self._retriever = None
        return found

    def close(self) -> None:
        """Release the database (Milvus Lite allows one process per file) and own clients."""
        self.store.close()
        if self._owns_embedder and hasattr(self.embedder, "close"):
            self.embedder.close()

    def __enter__(self) -> GraphRAG:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _length(items: Iterable[Any]) -> int:
    """How many items, when that is known without consuming them (0 otherwise)."""
    return len(items) if isinstance(items, Sized) else 0
