"""The writer: records → content-derived rows → only the new ones embedded and stored."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sized
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hopgraph.embed import Embedder
from hopgraph.graph import KnowledgeGraph
from hopgraph.identity import content_key, entity_id, passage_id, relation_id, relation_text
from hopgraph.records import IngestSummary, PassageRecord, Problem
from hopgraph.store import (
    DOC_ID_MAX,
    NAME_MAX,
    PASSAGE_TEXT_MAX,
    PASSAGES_PER_RELATION_MAX,
    RELATION_TEXT_MAX,
    MilvusStore,
)

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]  # (stage, done, total)
VectorSink = Callable[[str, np.ndarray], None]  # (kind: store.vectors.KINDS, vectors)
_EMBED_CHUNK = 512
CHUNK_PASSAGES = 500  # records per ingestion chunk: memory follows this, not the input


@dataclass
class _Batch:
    passages: dict[str, PassageRecord] = field(default_factory=dict)
    docs: dict[str, str] = field(default_factory=dict)  # passage id -> document id
    entity_names: dict[str, str] = field(default_factory=dict)
    relations: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # s_id, o_id, text
    relation_passages: dict[str, list[str]] = field(default_factory=dict)


def _too_long(text: str, limit: int) -> bool:
    return len(text.encode("utf-8")) > limit


def _collect(records: Iterable[PassageRecord], summary: IngestSummary) -> _Batch:
    """Derive ids for every passage, entity and relation, dropping rows too big to store."""
    batch = _Batch()
    for record in records:
        if _too_long(record.text, PASSAGE_TEXT_MAX):
            summary.problems.append(
                Problem(record.source, f"passage over {PASSAGE_TEXT_MAX} bytes"))
            summary.rows_skipped += 1
            continue
        doc = record.doc_id if record.doc_id is not None else content_key(record.text)
        if _too_long(doc, DOC_ID_MAX):
            summary.problems.append(Problem(record.source,
                                            f"document id over {DOC_ID_MAX} bytes"))
            summary.rows_skipped += 1
            continue
        pid = passage_id(record.text, doc)
        batch.passages.setdefault(pid, record)
        batch.docs.setdefault(pid, doc)
        for i, t in enumerate(record.triplets):
            text = relation_text(t.subject, t.predicate, t.object)
            if (_too_long(t.subject, NAME_MAX) or _too_long(t.object, NAME_MAX)
                    or _too_long(text, RELATION_TEXT_MAX)):
                summary.problems.append(Problem(f"{record.source} triplet {i}", "too long"))
                summary.triplets_skipped += 1
                continue
            sid, oid = entity_id(t.subject), entity_id(t.object)
            batch.entity_names.setdefault(sid, t.subject)
            batch.entity_names.setdefault(oid, t.object)
            rid = relation_id(t.subject, t.predicate, t.object)
            batch.relations.setdefault(rid, (sid, oid, text))
            linked = batch.relation_passages.setdefault(rid, [])
            if pid not in linked:
                linked.append(pid)
    return batch


def _as_stored(metadata: dict[str, Any]) -> Any:
    """Metadata as the store gives it back (JSON: tuples become lists)."""
    return json.loads(json.dumps(metadata))


def _capped(relation: str, passages: list[str]) -> list[str]:
    """A relation's passage links, cut to what the store's array field holds."""
    if len(passages) > PASSAGES_PER_RELATION_MAX:
        log.warning("relation %s is in %d passages; links past %d dropped", relation,
                    len(passages), PASSAGES_PER_RELATION_MAX)
    return passages[:PASSAGES_PER_RELATION_MAX]


@dataclass
class _Run:
    """Ids this ingestion added: a later chunk that repeats one neither re-adds nor counts it."""

    passages: set[str] = field(default_factory=set)
    entities: set[str] = field(default_factory=set)
    relations: set[str] = field(default_factory=set)


@dataclass
class Seen:
    """What the input says of documents that were stored before it (what `prune` keeps):
    their passages, and which relation each of those passages states."""

    docs: set[str] = field(default_factory=set)
    passages: set[str] = field(default_factory=set)
    links: set[tuple[str, str]] = field(default_factory=set)  # (relation id, passage id)

    def note(self, batch: _Batch, stored_docs: frozenset[str]) -> None:
        """Record the batch's passages and links that belong to stored documents."""
        mine = {pid for pid, doc in batch.docs.items() if doc in stored_docs}
        if not mine:
            return
        self.docs.update(batch.docs[pid] for pid in mine)
        self.passages.update(mine)
        self.links.update((rid, pid) for rid, pids in batch.relation_passages.items()
                          for pid in pids if pid in mine)


def chunks(records: Iterable[PassageRecord], size: int) -> Iterator[list[PassageRecord]]:
    """`records` in lists of at most `size`, read lazily."""
    chunk: list[PassageRecord] = []
    for record in records:
        chunk.append(record)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class Ingestor:
    """Writes records into a store, chunk by chunk, and keeps the in-memory graph in step.

    Each chunk of CHUNK_PASSAGES records is checked against what is stored, embedded and
    inserted before the next is read, so memory follows the chunk, not the input; vectors go
    to Milvus as NumPy rows (a Python float list costs ~12 KB per 384-d row).
    """

    def __init__(self, store: MilvusStore, graph: KnowledgeGraph, embedder: Embedder,
                 chunk_passages: int | None = None,
                 vector_sink: VectorSink | None = None,
                 begin: Callable[[], None] | None = None) -> None:
        self.store = store
        self.graph = graph
        self.embedder = embedder
        self.chunk_passages = chunk_passages or CHUNK_PASSAGES
        # Told the vectors of the passages, entities and relations added, in graph order.
        self.vector_sink = vector_sink
        # Called before every write (the caller starts the graph's write once, on the first
        # call): an ingest that finds everything stored writes nothing, not even the counter.
        self.begin = begin or (lambda: None)
        self.stored_docs = frozenset(graph.documents())
        self.seen = Seen()

    def ingest(self, records: Iterable[PassageRecord], progress: Progress | None = None,
               total: int | None = None) -> IngestSummary:
        """Store what is new in `records`; re-ingesting the same records embeds nothing.

        `progress("ingest", done, total)` is called after each chunk (`total` defaults to
        `len(records)`, and to 0 when that is unknown: a stream).
        """
        started = time.perf_counter()
        summary, run = IngestSummary(), _Run()
        if total is None:
            total = len(records) if isinstance(records, Sized) else 0
        done = 0
        if progress and total:
            progress("ingest", 0, total)  # starts the clock of a one-line report
        for chunk in chunks(records, self.chunk_passages):
            batch = _collect(chunk, summary)
            self.seen.note(batch, self.stored_docs)
            self._store_passages(batch, summary, run)
            self._store_entities(batch, summary, run)
            self._store_relations(batch, summary, run)
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

    def _store_passages(self, batch: _Batch, summary: IngestSummary, run: _Run) -> None:
        ids = [pid for pid in batch.passages if pid not in run.passages]
        stored = {row["id"]: row for row in self.store.get(self.store.passages, ids,
                                                           ["id", "text", "metadata"])}
        new = [pid for pid in ids if pid not in stored]
        summary.passages_present += len(stored)
        summary.passages_added += len(new)
        self._update_passages(batch, stored, summary)
        vectors = self._embed([batch.passages[pid].text for pid in new])
        summary.texts_embedded += len(new)
        if new:
            self.begin()
        self.store.insert(self.store.passages, (
            {"id": pid, "text": batch.passages[pid].text, "vector": vec,
             "doc_id": batch.docs[pid], "metadata": batch.passages[pid].metadata}
            for pid, vec in zip(new, vectors, strict=True)
        ))
        for pid in new:
            self.graph.add_passage(pid, batch.docs[pid])
        if self.vector_sink and new:
            self.vector_sink("passages", vectors)
        run.passages.update(new)

    def _update_passages(self, batch: _Batch, stored: dict[str, dict[str, Any]],
                         summary: IngestSummary) -> None:
        """Stored passages whose text differs only where the id ignores it (case, spacing)
        or whose metadata changed: rewritten with their stored vector, not re-embedded."""
        changed = [pid for pid, row in stored.items()
                   if (row["text"], row["metadata"]) != (batch.passages[pid].text,
                                                         _as_stored(batch.passages[pid].metadata))]
        if not changed:
            return
        vectors = self.store.vectors(self.store.passages, changed)
        self.begin()
        summary.passages_updated += self.store.upsert(self.store.passages, (
            {"id": pid, "text": batch.passages[pid].text, "vector": vectors[pid],
             "doc_id": batch.docs[pid], "metadata": batch.passages[pid].metadata}
            for pid in changed if pid in vectors))

    def _store_entities(self, batch: _Batch, summary: IngestSummary, run: _Run) -> None:
        ids = [eid for eid in batch.entity_names if eid not in run.entities]
        # The graph holds every stored entity; Milvus is asked only about the others (another
        # process may have written them since this graph was loaded).
        present = {eid for eid in ids if eid in self.graph.entity_index}
        unknown = [eid for eid in ids if eid not in present]
        present |= self.store.existing_ids(self.store.entities, unknown)
        new = [eid for eid in ids if eid not in present]
        summary.entities_present += len(present)
        summary.entities_added += len(new)
        vectors = self._embed([batch.entity_names[eid] for eid in new])
        summary.texts_embedded += len(new)
        if new:
            self.begin()
        self.store.insert(self.store.entities, (
            {"id": eid, "name": batch.entity_names[eid], "vector": vec}
            for eid, vec in zip(new, vectors, strict=True)
        ))
        for eid in new:
            self.graph.set_entity_name(eid, batch.entity_names[eid])
        if self.vector_sink and new:
            self.vector_sink("entities", vectors)
        run.entities.update(new)

    def _store_relations(self, batch: _Batch, summary: IngestSummary, run: _Run) -> None:
        again = [rid for rid in batch.relations if rid in run.relations]
        ids = [rid for rid in batch.relations if rid not in run.relations]
        present = {rid for rid in ids if rid in self.graph.relation_index}
        present |= self.store.existing_ids(self.store.relations,
                                           [rid for rid in ids if rid not in present])
        new = [rid for rid in ids if rid not in present]
        summary.relations_present += len(present)
        summary.relations_added += len(new)
        vectors = self._embed([batch.relations[rid][2] for rid in new])
        summary.texts_embedded += len(new)
        for rid in new:
            batch.relation_passages[rid] = _capped(rid, batch.relation_passages[rid])
        if new:
            self.begin()
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

    def _link(self, batch: _Batch, relations: list[str]) -> int:
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
            known = list(row["passage_ids"])
            added = [p for p in batch.relation_passages[row["id"]] if p not in known]
            if not added:
                continue
            merged = _capped(row["id"], known + added)
            row["passage_ids"] = merged
            row["vector"] = np.asarray(row["vector"], dtype=np.float32)
            updates.append(row)
            self.graph.add_relation(row["id"], row["subject_id"], row["object_id"], row["text"],
                                    merged)
        if updates:
            self.begin()
        return self.store.upsert(self.store.relations, updates)
