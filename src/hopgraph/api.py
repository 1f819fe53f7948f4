"""The Python API: `GraphRAG` opens one graph and ingests into it and retrieves from it."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Sized
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from hopgraph.config import Settings
from hopgraph.embed import Embedder, make_embedder
from hopgraph.errors import UsageError
from hopgraph.graph import KnowledgeGraph
from hopgraph.ingest import Ingestor, Progress, load_file, prune, read_row
from hopgraph.ingest.loaders import check_record
from hopgraph.ingest.writer import Seen
from hopgraph.llm import LLMClient
from hopgraph.records import IngestSummary, LoadReport, PassageRecord, Problem, Removal, Retrieval
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
        for row in self.store.scan(self.store.passages, ["id", "doc_id"]):
            graph.add_passage(row["id"], row["doc_id"])  # those without relations too
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
            progress: Progress | None = None, doc_id: str | None = None,
            append: bool = False) -> IngestSummary:
        """Ingest `PassageRecord`s or dicts {"passage", "triplets", "doc_id"?, "id"?,
        "metadata"?}.

        An item's document is its own `doc_id`, else `doc_id`, else the item alone (its
        content key: adding the same text again changes nothing). A document already stored
        is replaced by what `items` say of it (unless `append`); if any item was skipped as
        malformed, nothing is pruned. `items` is consumed as a stream (a generator works),
        chunk by chunk: memory follows the chunk, not the input.
        """
        report = LoadReport(path="items")

        def checked() -> Iterator[PassageRecord]:
            for i, item in enumerate(items):
                if isinstance(item, PassageRecord):
                    if item.doc_id is None and doc_id is not None:
                        item = replace(item, doc_id=str(doc_id))
                    if check_record(item, f"item {i}", report):
                        yield item
                    continue
                # The same checks as a file row: bad items are skipped and reported.
                before = len(report.records)
                read_row(item, f"item {i}", report, None if doc_id is None else str(doc_id))
                yield from report.records[before:]
                del report.records[before:]

        return self._ingest(checked(), [report], progress, total=_length(items),
                            append=append)

    def add_files(self, paths: Iterable[str | Path], progress: Progress | None = None,
                  append: bool = False) -> IngestSummary:
        """Ingest input files; malformed rows are skipped and reported in the summary. Each
        file is a document (`source_doc_id`) unless its rows name theirs (`"doc_id"`); a
        stored document is replaced by its new content unless `append`."""
        return self.add_reports([load_file(path) for path in paths], progress, append)

    def add_documents(self, paths: Iterable[str | Path], extractor: str = "auto",
                      progress: Progress | None = None, append: bool = False
                      ) -> IngestSummary:
        """Ingest raw .txt/.md/.pdf files or folders: chunked, triplets by the LLM
        (`extractor="llm"`, or "auto" when this GraphRAG has one) or by the offline
        extractor ("offline", or "auto" without an LLM). Each file is a document."""
        from hopgraph.ingest.documents import chunk_documents, read_documents
        from hopgraph.ingest.offline_extractor import document_title, extract_chunks

        if extractor not in ("auto", "offline", "llm"):
            raise UsageError(f"unknown extractor {extractor!r}", fix="auto, offline or llm")
        reading = LoadReport(path="documents")
        docs = read_documents(paths, reading.problems)
        chunks = chunk_documents(docs)
        if extractor == "llm" or (extractor == "auto" and self.llm is not None):
            if self.llm is None:
                raise UsageError("extractor 'llm' needs an LLM", fix="GraphRAG(llm=...)")
            from hopgraph.ingest.llm_extractor import extract_records

            report: LoadReport = extract_records(self.llm, chunks)
        else:
            titles = {doc.path: document_title(doc.path, doc.text) for doc in docs}
            report, _ = extract_chunks(chunks, titles)
        return self.add_reports([reading, report], progress, append)

    def add_reports(self, reports: list[LoadReport], progress: Progress | None = None,
                    append: bool = False) -> IngestSummary:
        """Ingest the records of loader or extractor reports; their problems join the summary.
        Documents of a report with skipped rows are not pruned (their old passages stay)."""
        records = [record for report in reports for record in report.records]
        return self._ingest(records, reports, progress, total=len(records), append=append)

    def _ingest(self, records: Iterable[PassageRecord], reports: list[LoadReport],
                progress: Progress | None, total: int, append: bool) -> IngestSummary:
        started = time.perf_counter()
        self.store.ensure_all_loaded()
        write = _Write(self.store)
        vectors_ok = self._vectors_current()
        sink = self._append_vectors if vectors_ok else None
        ingestor = Ingestor(self.store, self.graph, self.embedder, vector_sink=sink,
                            begin=write.begin)
        try:
            summary = ingestor.ingest(records, progress, total=total)
            if not append:
                held = _held_documents(reports, ingestor.seen.docs)
                summary.problems.extend(held)
                prune = sorted(ingestor.seen.docs - {p.where for p in held})
                summary.count_removal(self._prune(prune, ingestor.seen, write, vectors_ok))
        finally:
            self._retriever = None  # the graph may have changed, even if the write failed
        summary.include(reports)
        self._finish(write, vectors_ok)
        summary.seconds = time.perf_counter() - started
        return summary

    def fork(self) -> None:
        """Give the next write its own copy of the graph: retrievers already handed out keep
        the graph they were built on, whole, while the write runs (a server swaps to the new
        retriever once the write is done)."""
        self.graph = self.graph.copy()
        self._retriever = None

    def documents(self) -> dict[str, int]:
        """Every stored document and its passage count, by document id."""
        return self.graph.documents()

    def delete(self, doc_ids: str | Iterable[str]) -> Removal:
        """Delete documents with everything only they hold: their passages, relations left
        without a passage, entities left without a relation (shared ones stay). Ids not
        stored are listed in `missing`; deleting them again is a no-op."""
        ids = [doc_ids] if isinstance(doc_ids, str) else list(dict.fromkeys(doc_ids))
        started = time.perf_counter()
        stored = self.graph.documents()
        self.store.ensure_all_loaded()
        write = _Write(self.store)
        vectors_ok = self._vectors_current()
        try:
            removal = self._prune([d for d in ids if d in stored], None, write, vectors_ok)
        finally:
            self._retriever = None
        removal.missing = [d for d in ids if d not in stored]
        self._finish(write, vectors_ok)
        removal.seconds = time.perf_counter() - started
        return removal

    def _prune(self, documents: list[str], seen: Seen | None, write: _Write,
               vectors_ok: bool) -> Removal:
        """Remove what `documents` no longer hold, in Milvus, the graph and the vector files."""
        todo = prune.plan(self.graph, documents, seen)
        self.graph, masks, removal = prune.apply(self.store, self.graph, todo, write.begin)
        for kind, mask in masks.items():  # the vector files follow graph order: compact them
            if not (vectors_ok and self.vector_files[kind].keep(mask)):
                self.vector_files[kind].discard()
        return removal

    def _finish(self, write: _Write, vectors_ok: bool) -> None:
        """After a write: trust the vector files only if they hold the graph's rows; if
        anything was written, flush, mark the write finished and snapshot the graph."""
        sizes = self._sizes(self.graph)
        for kind, file in self.vector_files.items():
            current = vectors_ok and file.rows() == sizes[kind]
            self._vector_rows[kind] = sizes[kind] if current else -1
            if not current:
                file.discard()
        if write.after is None:  # nothing written: the snapshot stays current
            return
        self.store.flush()  # Milvus Lite searches unflushed rows ~30x slower
        self.store.end_write(write.after)
        if write.before == self._loaded_writes:  # no other process wrote since we loaded
            self._save_snapshot(self.graph, write.after)
            self._loaded_writes = write.after
        else:  # our graph misses another writer's rows: never snapshot it
            self._loaded_writes = -1

    def retrieve(self, question: str, top_k: int = 5, degree: int = 1,
                 entities: list[str] | None = None, method: str = "default") -> Retrieval:
        """Graph retrieval: passages for a (multi-hop) question, best first, with evidence."""
        return self.retriever.retrieve(question, top_k=top_k, degree=degree,
                                       entities=entities, method=method)

    def compare(self, question: str, top_k: int = 5, degree: int = 1,
                entities: list[str] | None = None, method: str = "default"
                ) -> tuple[Retrieval, Retrieval]:
        """`retrieve` and `naive` side by side, the question embedded once."""
        return self.retriever.compare(question, top_k=top_k, degree=degree,
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


class _Write:
    """One write to the graph, begun (the write counter bumped, the graph flagged as being
    written) just before its first row changes, so a run that changes nothing writes
    nothing; begun at once when the graph is flagged incomplete, so finishing clears it."""

    def __init__(self, store: MilvusStore) -> None:
        self.store = store
        self.before: int | None = None
        self.after: int | None = None
        if store.incomplete:
            self.begin()

    def begin(self) -> None:
        """Start the write, once."""
        if self.after is None:
            self.before, self.after = self.store.begin_write()


def _held_documents(reports: list[LoadReport], stored: set[str]) -> list[Problem]:
    """Stored documents of sources with skipped rows: not pruned (a row that failed to load,
    or an LLM call that failed, must not delete what the document held), one problem each."""
    held: dict[str, str] = {}
    for report in reports:
        if not report.rows_skipped:
            continue
        # A streamed report (`add`) keeps no records: hold every stored document it touched.
        docs = {r.doc_id for r in report.records} if report.records else stored
        for doc in sorted(docs & stored):
            held.setdefault(doc, report.path)
    return [Problem(doc, f"not pruned: {source} had skipped rows, so passages no longer in "
                    "this document were kept (fix the rows and ingest again)")
            for doc, source in sorted(held.items())]


def _length(items: Iterable[Any]) -> int:
    """How many items, when that is known without consuming them (0 otherwise)."""
    return len(items) if isinstance(items, Sized) else 0
