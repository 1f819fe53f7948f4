"""The two writes: store records (replacing the documents they name), and delete documents.

Both run on a `GraphState` (state/opened.py), on the graph it gives the write, under the
graph's writer lease: plan what changes (`writer`, `prune`), then commit it, announcing
every change in the change log before making it (`store.writes`), in the order that keeps
a stopped write completable by a rerun (`prune`'s module docstring); closing the write
makes the graph's next version. A write that fails leaves its documents unfinished until
a later write completes or removes them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from hopgraph.embed import Embedder
from hopgraph.graph import KnowledgeGraph
from hopgraph.ingest import prune
from hopgraph.ingest.batch import StoredDocsSeen, collect
from hopgraph.ingest.writer import Ingestor, Progress, Waiting
from hopgraph.records import IngestSummary, LoadReport, PassageRecord, Problem, Removal
from hopgraph.state import GraphState
from hopgraph.store.writes import Write

AHEAD_TEXTS = 2_000  # texts a group embeds in one call at most (`_embedded_ahead`)


@dataclass
class Part:
    """One add of a group written in one write (`store_parts`): its records, the reports
    they came from, and the options a single `store_records` call takes."""

    records: Iterable[PassageRecord]
    reports: list[LoadReport]
    total: int = 0
    append: bool = False
    aliases: dict[str, str] | None = None
    progress: Progress | None = None


def store_records(state: GraphState[Any], embedder: Embedder, records: Iterable[PassageRecord],
                  reports: list[LoadReport], progress: Progress | None = None,
                  total: int = 0, append: bool = False,
                  waiting: Waiting | None = None,
                  aliases: dict[str, str] | None = None) -> IngestSummary:
    """Store what is new in `records`; unless `append`, then prune what the stored documents
    they name no longer hold (not for documents of a report with skipped rows), and retire
    the stored documents of `aliases` (older ids of documents `records` name: the same file
    as an earlier version named it). The reports' problems join the summary. `waiting` is
    told whom we wait for, if another process holds the writer lease."""
    part = Part(records, reports, total, append, aliases, progress)
    return store_parts(state, embedder, [part], waiting)[0]


def store_parts(state: GraphState[Any], embedder: Embedder,
                parts: Sequence[Part] | Callable[[], Sequence[Part]],
                waiting: Waiting | None = None, done: list[IngestSummary] | None = None,
                until: Callable[[], bool] | None = None) -> list[IngestSummary]:
    """Several adds in one write (group commit): one lease round, one catch-up, one number
    in the change log, one meta update, one new version. Each part is stored as
    `store_records` would store it alone, in order, on the graph the parts before it left,
    and gets its own summary (the `seconds` of each are the group's).

    If any part raises, the write stops there, as a failed `store_records` does: what the
    group wrote stays, its documents unfinished, until a later write completes or removes
    them (`hopgraph.serve.service` then writes each part alone, so that only a bad one
    fails). `done`, if given, is the (empty) list the summaries are appended to as the
    parts are stored, and returned: after a failure it says what the parts before the
    failing one did. `parts` may be a function
    that gives them, called once the write holds the lease: a server takes the adds queued
    by then, and more of them have come while the lease was taken. `until`, asked before
    each part: when true, the parts left are not written (the write ends with those
    before; fewer summaries come back): an upload job's stop between two files."""
    started = time.perf_counter()
    if callable(parts):
        ahead = _Taken(parts, embedder, state)
        try:
            write = state.begin("ingest", waiting, ahead.start)
        except BaseException:
            ahead.join()
            raise
        try:
            ahead.join()
            parts, embedder = ahead.result()
        except BaseException as exc:
            state.stop(write, str(exc) or type(exc).__name__)
            raise
    else:
        embedder = _embedded_ahead(embedder, parts, state.version.graph)
        write = state.begin("ingest", waiting)
    summaries: list[IngestSummary] = [] if done is None else done
    completed: set[str] = set()
    try:
        for part in parts:
            if until is not None and until():
                break
            summary, whole = _store_part(state, embedder, part, write)
            summary.include(part.reports)
            summaries.append(summary)
            completed |= whole  # as separate adds: a later part's hold undoes nothing
        _close_unfinished(state, write, completed)
    except BaseException as exc:
        state.stop(write, str(exc) or type(exc).__name__)
        raise
    state.finish(write, completed)
    for summary in summaries:
        summary.seconds = time.perf_counter() - started
    return summaries


class _Taken:
    """The parts of a group, taken (`take`) once the write holds the lease and embedded
    ahead on a thread of their own while the write catches up (its first read waits for
    the server's time tick)."""

    def __init__(self, take: Callable[[], Sequence[Part]], embedder: Embedder,
                 state: GraphState[Any]) -> None:
        self.take, self.embedder, self.state = take, embedder, state
        self.thread: threading.Thread | None = None
        self.parts: Sequence[Part] = ()
        self.ready: Embedder = embedder
        self.error: BaseException | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, name="hopgraph-group", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.parts = self.take()
            self.ready = _embedded_ahead(self.embedder, self.parts, self.state.version.graph)
        except BaseException as exc:  # given to the writing thread (`result`)
            self.error = exc

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()

    def result(self) -> tuple[Sequence[Part], Embedder]:
        if self.error is not None:
            raise self.error
        return self.parts, self.ready


class _Ahead:
    """An embedder that answers from texts embedded ahead, in one batch, and embeds the
    rest as the embedder it wraps (`_embedded_ahead`)."""

    def __init__(self, inner: Embedder, vectors: dict[str, np.ndarray]) -> None:
        self.inner, self.vectors = inner, vectors
        self.name, self.dim = inner.name, inner.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if missing:
            self.vectors.update(zip(missing, self.inner.embed(missing), strict=True))
        return np.vstack([self.vectors[t] for t in texts]) if texts else (
            np.zeros((0, self.dim), dtype=np.float32))


def _embedded_ahead(embedder: Embedder, parts: Sequence[Part], graph: KnowledgeGraph
                    ) -> Embedder:
    """The texts a group's parts will likely embed (those of passages, entities and
    relations the current graph does not hold), embedded in one batch: many small adds make
    one model call, not three each. The write still decides what is new; a text it does
    not need was embedded for nothing (a part that repeats stored rows the graph has not
    seen yet). Only for groups of at most AHEAD_TEXTS texts: a big group (an upload's
    files) embeds part by part, its memory following the chunk as one add's does."""
    if len(parts) < 2 or not all(isinstance(part.records, list) for part in parts):
        return embedder  # one add embeds in one batch anyway; a stream is read once
    texts: dict[str, None] = {}
    for part in parts:
        batch = collect(cast(list[PassageRecord], part.records), IngestSummary())
        texts.update(dict.fromkeys(record.text for pid, record in batch.passages.items()
                                   if pid not in graph.passage_index))
        texts.update(dict.fromkeys(name for eid, name in batch.entity_names.items()
                                   if eid not in graph.entity_index))
        texts.update(dict.fromkeys(text for rid, (_, _, text) in batch.relations.items()
                                   if rid not in graph.relation_index))
    wanted = list(texts)
    if not wanted or len(wanted) > AHEAD_TEXTS:
        return embedder
    vectors = embedder.embed(wanted)
    return _Ahead(embedder, dict(zip(wanted, vectors, strict=True)))


def _store_part(state: GraphState[Any], embedder: Embedder, part: Part, write: Write
                ) -> tuple[IngestSummary, set[str]]:
    """One part of a write: its summary and the documents it completed."""
    ingestor = Ingestor(state.store, write.graph, embedder,
                        vector_sink=state.vector_sink(write), touch=write.touch,
                        stored_texts=write.texts.update)
    stored_before = ingestor.stored_docs
    summary = ingestor.ingest(part.records, part.progress, total=part.total)
    held: list[Problem] = []
    retired: list[str] = []
    changed = set(ingestor.changed_docs)
    if not part.append:
        held = held_documents(part.reports, ingestor.seen.docs)
        summary.problems.extend(held)
        kept = {p.where for p in held}
        retired = sorted(old for old, doc in (part.aliases or {}).items()
                         if old in stored_before and old not in ingestor.written_docs
                         and doc in ingestor.written_docs and doc not in kept)
        summary.documents_retired = len(retired)
        documents = sorted(ingestor.seen.docs - kept) + retired
        removal, lost = _prune(state, documents, ingestor.seen, write)
        summary.count_removal(removal)
        changed |= lost
    named = ingestor.written_docs
    summary.documents_added = len(named - stored_before)
    summary.documents_replaced = len(named & stored_before & changed)
    summary.documents_unchanged = len((named & stored_before) - changed)
    return summary, (named - {p.where for p in held}) | set(retired)


def delete_documents(state: GraphState[Any], doc_ids: list[str],
                     waiting: Waiting | None = None) -> Removal:
    """Delete documents with everything only they hold; ids not stored are `missing`.
    Deleting an unfinished document (a write that stopped) completes its removal."""
    started = time.perf_counter()
    write = state.begin("delete", waiting)
    try:
        stored = write.graph.documents()
        removal, _ = _prune(state, [d for d in doc_ids if d in stored], None, write)
        _close_unfinished(state, write, set(doc_ids))
    except BaseException as exc:
        state.stop(write, str(exc) or type(exc).__name__)
        raise
    removal.missing = [d for d in doc_ids if d not in stored]
    state.finish(write, doc_ids)
    removal.seconds = time.perf_counter() - started
    return removal


def _close_unfinished(state: GraphState[Any], write: Write, docs: set[str]) -> None:
    """Documents left unfinished by a stopped write that this one completes are cleared
    when it ends, even if it found nothing left to change (its end must then be logged);
    so is an earlier version's unfinished-write flag, as that version's next write did."""
    meta = write.session.meta
    done = docs & set(meta.get("unfinished", {}))
    if (done or meta.get("writing")) and write.session.seq is None:
        write.touch("passages", [], done)


def _prune(state: GraphState[Any], documents: list[str], seen: StoredDocsSeen | None, write: Write
           ) -> tuple[Removal, set[str]]:
    """Remove what `documents` no longer hold, in Milvus, the graph and the vector files;
    the removal, and the documents that lost something."""
    todo = prune.plan(write.graph, documents, seen)
    graph, masks, removal = prune.apply(state.store, write.graph, todo, write.touch)
    state.replace_graph(graph, masks, write)
    return removal, todo.changed


def held_documents(reports: list[LoadReport], stored: set[str]) -> list[Problem]:
    """Stored documents of sources with skipped rows: not pruned (a row that failed to load,
    or an LLM call that failed, must not delete what the document held), one problem each."""
    held: dict[str, str] = {}
    for report in reports:
        if not report.rows_skipped:
            continue
        # A streamed report (`add`) keeps no records: hold every stored document it touched.
        docs = {r.doc_id for r in report.records} if report.records else stored
        for doc in sorted(stored & docs):
            held.setdefault(doc, report.path)
    return [Problem(doc, f"not pruned: {source} had skipped rows, so passages no longer in "
                    "this document were kept (fix the rows and ingest again)")
            for doc, source in sorted(held.items())]
