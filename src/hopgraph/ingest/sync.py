"""The two writes: store records (replacing the documents they name), and delete documents.

Both run on a `GraphState` (store/state.py), which knows when its caches are stale, in the
order that keeps a stopped write completable by a rerun (`prune`'s module docstring).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from hopgraph.embed import Embedder
from hopgraph.ingest import prune
from hopgraph.ingest.writer import Ingestor, Progress, Seen
from hopgraph.records import IngestSummary, LoadReport, PassageRecord, Problem, Removal
from hopgraph.store.state import GraphState, Write


def store_records(state: GraphState, embedder: Embedder, records: Iterable[PassageRecord],
                  reports: list[LoadReport], progress: Progress | None = None,
                  total: int = 0, append: bool = False) -> IngestSummary:
    """Store what is new in `records`; unless `append`, then prune what the stored documents
    they name no longer hold (not for documents of a report with skipped rows). The
    reports' problems join the summary."""
    started = time.perf_counter()
    write = state.begin()
    ingestor = Ingestor(state.store, state.graph, embedder,
                        vector_sink=state.vector_sink(write), begin=write.begin)
    try:
        summary = ingestor.ingest(records, progress, total=total)
        if not append:
            held = held_documents(reports, ingestor.seen.docs)
            summary.problems.extend(held)
            documents = sorted(ingestor.seen.docs - {p.where for p in held})
            summary.count_removal(_prune(state, documents, ingestor.seen, write))
    finally:
        state.forget_retriever()  # the graph may have changed, even if the write failed
    summary.include(reports)
    state.finish(write)
    summary.seconds = time.perf_counter() - started
    return summary


def delete_documents(state: GraphState, doc_ids: list[str]) -> Removal:
    """Delete documents with everything only they hold; ids not stored are `missing`."""
    started = time.perf_counter()
    stored = state.graph.documents()
    write = state.begin()
    try:
        removal = _prune(state, [d for d in doc_ids if d in stored], None, write)
    finally:
        state.forget_retriever()
    removal.missing = [d for d in doc_ids if d not in stored]
    state.finish(write)
    removal.seconds = time.perf_counter() - started
    return removal


def _prune(state: GraphState, documents: list[str], seen: Seen | None, write: Write
           ) -> Removal:
    """Remove what `documents` no longer hold, in Milvus, the graph and the vector files."""
    todo = prune.plan(state.graph, documents, seen)
    graph, masks, removal = prune.apply(state.store, state.graph, todo, write.begin)
    state.replace_graph(graph, masks, write)
    return removal


def held_documents(reports: list[LoadReport], stored: set[str]) -> list[Problem]:
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
