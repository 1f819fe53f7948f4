"""The writer: records → content-derived rows → only the new ones embedded and stored."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sized
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from hopgraph.embed import Embedder
from hopgraph.graph import KnowledgeGraph
from hopgraph.ingest.batch import AddedIds, Batch, StoredDocsSeen, capped, chunks, collect
from hopgraph.records import IngestSummary, PassageRecord
from hopgraph.sentences import sentence_rows
from hopgraph.store import MilvusStore

Progress = Callable[[str, int, int], None]  # (stage, done, total)
VectorSink = Callable[[str, np.ndarray], None]  # (kind: store.vectors.KINDS, vectors)
Touch = Callable[[str, list[str], list[str]], None]  # (kind, ids, documents): before a change
Waiting = Callable[[str], None]  # told whom a write waits for (the writer lease)
_EMBED_CHUNK = 512
_READERS = ThreadPoolExecutor(max_workers=3, thread_name_prefix="hopgraph-lookup")
CHUNK_PASSAGES = 500  # records per ingestion chunk: memory follows this, not the input


def _as_stored(metadata: dict[str, Any]) -> Any:
    """Metadata as the store gives it back (JSON: tuples become lists)."""
    return json.loads(json.dumps(metadata))


@dataclass(frozen=True)
class Stored:
    """What of one chunk Milvus already holds (`Ingestor._lookup`)."""

    passages: dict[str, dict[str, Any]]  # passage id -> its row (id, text, metadata)
    entities: set[str]
    relations: set[str]


class Ingestor:
    """Writes records into a store, chunk by chunk, and keeps the in-memory graph in step.

    Each chunk of CHUNK_PASSAGES records is checked against what is stored, embedded and
    inserted before the next is read, so memory follows the chunk, not the input; vectors go
    to Milvus as NumPy rows (a Python float list costs ~12 KB per 384-d row).
    """

    def __init__(self, store: MilvusStore, graph: KnowledgeGraph, embedder: Embedder,
                 chunk_passages: int | None = None,
                 vector_sink: VectorSink | None = None,
                 touch: Touch | None = None,
                 stored_texts: Callable[[dict[str, str]], None] | None = None) -> None:
        self.store = store
        self.graph = graph
        self.embedder = embedder
        self.chunk_passages = chunk_passages or CHUNK_PASSAGES
        # Told the vectors of the passages, entities and relations added, in graph order.
        self.vector_sink = vector_sink
        # Told before every change which rows of which documents it touches (the change
        # log, `store.writes`): an ingest that finds everything stored writes nothing.
        self.touch = touch or (lambda kind, ids, docs: None)
        # Told the texts of the passages written (added or rewritten), after writing them:
        # the write's lexicon then need not read them back from Milvus.
        self.stored_texts = stored_texts or (lambda texts: None)
        self.stored_docs = frozenset(graph.documents())
        self.seen = StoredDocsSeen()
        self.written_docs: set[str] = set()  # every document the records name
        self.changed_docs: set[str] = set()  # documents given a passage, a link or an update

    def ingest(self, records: Iterable[PassageRecord], progress: Progress | None = None,
               total: int | None = None) -> IngestSummary:
        """Store what is new in `records`; re-ingesting the same records embeds nothing.

        `progress("ingest", done, total)` is called after each chunk (`total` defaults to
        `len(records)`, and to 0 when that is unknown: a stream).
        """
        started = time.perf_counter()
        summary, run = IngestSummary(), AddedIds()
        if total is None:
            total = len(records) if isinstance(records, Sized) else 0
        done = 0
        if progress and total:
            progress("ingest", 0, total)  # starts the clock of a one-line report
        for chunk in chunks(records, self.chunk_passages):
            batch = collect(chunk, summary)
            self.written_docs.update(batch.docs.values())
            self.seen.note(batch, self.stored_docs)
            stored = self._lookup(batch, run)
            self._store_passages(batch, summary, run, stored.passages)
            self._store_entities(batch, summary, run, stored.entities)
            self._store_relations(batch, summary, run, stored.relations)
            done += len(chunk)
            if progress:
                progress("ingest", done, max(total, done))
        summary.seconds = time.perf_counter() - started
        return summary

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.vstack([self.embedder.embed(texts[start:start + _EMBED_CHUNK])
                          for start in range(0, len(texts), _EMBED_CHUNK)])

    def _lookup(self, batch: Batch, run: AddedIds) -> Stored:
        """What of the chunk is stored already: its passages' rows, and which of its
        entities and relations the graph does not know but Milvus holds (another process
        may have written them). With a server the three reads go at once: each strong read
        waits for the server's time tick (~200 ms on Milvus 2.3)."""
        store, setting = self.store, self.store.reads_now()
        passages = [pid for pid in batch.passages if pid not in run.passages]
        entities = [e for e in batch.entity_names
                    if e not in run.entities and e not in self.graph.entity_index]
        relations = [r for r in batch.relations
                     if r not in run.relations and r not in self.graph.relation_index]
        reads: list[Callable[[], list[dict[str, Any]]]] = [
            lambda: store.get(store.passages, passages, ["id", "text", "metadata"],
                              reads=setting),
            lambda: store.get(store.entities, entities, ["id"], reads=setting),
            lambda: store.get(store.relations, relations, ["id"], reads=setting)]
        if store.is_local:
            rows = [read() for read in reads]
        else:
            rows = list(_READERS.map(lambda read: read(), reads))
        return Stored({row["id"]: row for row in rows[0]}, {row["id"] for row in rows[1]},
                      {row["id"] for row in rows[2]})

    def _store_passages(self, batch: Batch, summary: IngestSummary, run: AddedIds,
                        stored: dict[str, dict[str, Any]]) -> None:
        ids = [pid for pid in batch.passages if pid not in run.passages]
        new = [pid for pid in ids if pid not in stored]
        summary.passages_present += len(stored)
        summary.passages_added += len(new)
        self._update_passages(batch, stored, summary)
        self._store_sentences(batch, summary, list(stored), stored)
        vectors = self._embed([batch.passages[pid].text for pid in new])
        summary.texts_embedded += len(new)
        if new:
            self.touch("passages", new, sorted({batch.docs[pid] for pid in new}))
            self.changed_docs.update(batch.docs[pid] for pid in new)
        self.store.insert(self.store.passages, (
            {"id": pid, "text": batch.passages[pid].text, "vector": vec,
             "doc_id": batch.docs[pid], "metadata": batch.passages[pid].metadata}
            for pid, vec in zip(new, vectors, strict=True)
        ))
        for pid in new:
            self.graph.add_passage(pid, batch.docs[pid])
        self.stored_texts({pid: batch.passages[pid].text for pid in new})
        if self.vector_sink and new:
            self.vector_sink("passages", vectors)
        self._store_sentences(batch, summary, new, {})
        run.passages.update(new)

    def _store_sentences(self, batch: Batch, summary: IngestSummary, passages: list[str],
                         stored: dict[str, dict[str, Any]]) -> None:
        """The sentence rows (`hopgraph.sentences`) of `passages`, whose text in the store
        is now this batch's: those not stored are embedded (new passages; stored ones an
        earlier version or a stopped write left without rows, or whose text changed in
        case or spacing). A row is only ever written for a text that is stored, so a write
        that stops anywhere leaves rows missing (a query embeds those), never rows of a
        text that is not there (which nothing would find to delete)."""
        rows = {pid: sentence_rows(pid, batch.passages[pid].text) for pid in passages}
        checked = [sid for pid in passages if pid in stored for sid in rows[pid]]
        present = {row["id"] for row in self.store.get(self.store.sentences, checked, ["id"])
                   } if checked else set()
        todo = [(sid, sentence, pid) for pid, found in rows.items()
                for sid, sentence in found.items() if sid not in present]
        vectors = self._embed([sentence for _, sentence, _ in todo])
        summary.texts_embedded += len(todo)
        self.store.upsert(self.store.sentences, (
            {"id": sid, "passage_id": pid, "vector": vector}
            for (sid, _, pid), vector in zip(todo, vectors, strict=True)))

    def _update_passages(self, batch: Batch, stored: dict[str, dict[str, Any]],
                         summary: IngestSummary) -> None:
        """Stored passages whose text differs only where the id ignores it (case, spacing)
        or whose metadata changed: rewritten with their stored vector, not re-embedded."""
        changed = [pid for pid, row in stored.items()
                   if (row["text"], row["metadata"]) != (batch.passages[pid].text,
                                                         _as_stored(batch.passages[pid].metadata))]
        if not changed:
            return
        vectors = self.store.vectors(self.store.passages, changed)
        self.touch("passages", changed, sorted({batch.docs[pid] for pid in changed}))
        self.changed_docs.update(batch.docs[pid] for pid in changed)
        # The sentence rows of the old text that the new one lacks go first: a write
        # stopped after them finds the old text and does this again; the new text's rows
        # follow it (`_store_sentences`).
        stale = [sid for pid in changed if stored[pid]["text"] != batch.passages[pid].text
                 for sid in sentence_rows(pid, stored[pid]["text"]).keys()
                 - sentence_rows(pid, batch.passages[pid].text).keys()]
        if stale:
            self.store.delete(self.store.sentences, stale)
        summary.passages_updated += self.store.upsert(self.store.passages, (
            {"id": pid, "text": batch.passages[pid].text, "vector": vectors[pid],
             "doc_id": batch.docs[pid], "metadata": batch.passages[pid].metadata}
            for pid in changed if pid in vectors))
        self.stored_texts({pid: batch.passages[pid].text for pid in changed if pid in vectors})

    def _store_entities(self, batch: Batch, summary: IngestSummary, run: AddedIds,
                        stored: set[str]) -> None:
        ids = [eid for eid in batch.entity_names if eid not in run.entities]
        # The graph holds every stored entity; Milvus was asked only about the others
        # (`_lookup`: another process may have written them since this graph was loaded).
        present = {eid for eid in ids if eid in self.graph.entity_index} | stored
        new = [eid for eid in ids if eid not in present]
        summary.entities_present += len(present)
        summary.entities_added += len(new)
        vectors = self._embed([batch.entity_names[eid] for eid in new])
        summary.texts_embedded += len(new)
        if new:
            self.touch("entities", new, sorted(set(batch.docs.values())))
        self.store.insert(self.store.entities, (
            {"id": eid, "name": batch.entity_names[eid], "vector": vec}
            for eid, vec in zip(new, vectors, strict=True)
        ))
        for eid in new:
            self.graph.set_entity_name(eid, batch.entity_names[eid])
        if self.vector_sink and new:
            self.vector_sink("entities", vectors)
        run.entities.update(new)

    def _store_relations(self, batch: Batch, summary: IngestSummary, run: AddedIds,
                         stored: set[str]) -> None:
        again = [rid for rid in batch.relations if rid in run.relations]
        ids = [rid for rid in batch.relations if rid not in run.relations]
        present = {rid for rid in ids if rid in self.graph.relation_index} | stored
        new = [rid for rid in ids if rid not in present]
        summary.relations_present += len(present)
        summary.relations_added += len(new)
        vectors = self._embed([batch.relations[rid][2] for rid in new])
        summary.texts_embedded += len(new)
        for rid in new:
            batch.relation_passages[rid] = capped(rid, batch.relation_passages[rid])
        if new:
            self.touch("relations", new, sorted(set(batch.docs.values())))
            self.changed_docs.update(batch.docs[p] for rid in new
                                     for p in batch.relation_passages[rid] if p in batch.docs)
        self.store.insert(self.store.relations, (
            {"id": rid, "subject_id": batch.relations[rid][0],
             "object_id": batch.relations[rid][1], "text": batch.relations[rid][2],
             "vector": vec, "passage_ids": batch.relation_passages[rid]}
            for rid, vec in zip(new, vectors, strict=True)
        ))
        for rid in new:
            s, o, text = batch.relations[rid]
            self.graph.add_relation(rid, s, o, text, batch.relation_passages[rid])
        if self.vector_sink and new:
            self.vector_sink("relations", vectors)
        run.relations.update(new)
        summary.relations_linked += self._link(batch, sorted(present))
        self._link(batch, again)  # relations this run added, found again in a later chunk

    def _link(self, batch: Batch, relations: list[str]) -> int:
        """Point stored relations at the new passages they were found in too; returns how
        many gained a passage. Only those rows are read back (for their vectors) and upserted.
        """
        extra: dict[str, list[str]] = {}
        for rid in relations:
            index = self.graph.relation_index.get(rid)
            known = set(self.graph.passages_of(index)) if index is not None else set()
            added = [p for p in batch.relation_passages[rid] if p not in known]
            if added or index is None:
                extra[rid] = added
        if not extra:
            return 0
        rows = self.store.get(self.store.relations, sorted(extra),
                              ["id", "subject_id", "object_id", "text", "vector", "passage_ids"])
        updates = []
        for row in rows:
            stored = list(row["passage_ids"])
            added = [p for p in batch.relation_passages[row["id"]] if p not in stored]
            if not added:
                continue
            merged = capped(row["id"], stored + added)
            row["passage_ids"] = merged
            row["vector"] = np.asarray(row["vector"], dtype=np.float32)
            updates.append(row)
            self.graph.add_relation(row["id"], row["subject_id"], row["object_id"], row["text"],
                                    merged)
        if updates:
            linked = {batch.docs[p] for row in updates
                      for p in batch.relation_passages[row["id"]] if p in batch.docs}
            self.touch("relations", [row["id"] for row in updates], sorted(linked))
            self.changed_docs.update(linked)
        return self.store.upsert(self.store.relations, updates)
