"""The writer: records → content-derived rows → only the new ones embedded and stored."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from hopgraph.embed import Embedder
from hopgraph.graph import KnowledgeGraph
from hopgraph.identity import entity_id, passage_id, relation_id, relation_text
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
_EMBED_CHUNK = 512


@dataclass
class _Batch:
    passages: dict[str, PassageRecord] = field(default_factory=dict)
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
        if record.doc_id is not None and _too_long(record.doc_id, DOC_ID_MAX):
            summary.problems.append(Problem(record.source, f'"id" over {DOC_ID_MAX} bytes'))
            summary.rows_skipped += 1
            continue
        pid = passage_id(record.text)
        batch.passages.setdefault(pid, record)
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


def _capped(relation: str, passages: list[str]) -> list[str]:
    """A relation's passage links, cut to what the store's array field holds."""
    if len(passages) > PASSAGES_PER_RELATION_MAX:
        log.warning("relation %s is in %d passages; links past %d dropped", relation,
                    len(passages), PASSAGES_PER_RELATION_MAX)
    return passages[:PASSAGES_PER_RELATION_MAX]


class Ingestor:
    """Writes records into a store and keeps the in-memory graph in step."""

    def __init__(self, store: MilvusStore, graph: KnowledgeGraph, embedder: Embedder) -> None:
        self.store = store
        self.graph = graph
        self.embedder = embedder

    def ingest(self, records: Iterable[PassageRecord], progress: Progress | None = None
               ) -> IngestSummary:
        """Store what is new in `records`; re-ingesting the same records embeds nothing."""
        started = time.perf_counter()
        summary = IngestSummary()
        batch = _collect(records, summary)
        self._store_passages(batch, summary, progress)
        self._store_entities(batch, summary, progress)
        self._store_relations(batch, summary, progress)
        summary.seconds = time.perf_counter() - started
        return summary

    def _embed(self, texts: list[str], stage: str, progress: Progress | None) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), _EMBED_CHUNK):
            chunk = texts[start : start + _EMBED_CHUNK]
            vectors.extend(self.embedder.embed(chunk).tolist())
            if progress:
                progress(stage, min(start + _EMBED_CHUNK, len(texts)), len(texts))
        return vectors

    def _store_passages(self, batch: _Batch, summary: IngestSummary, progress: Progress | None
                        ) -> None:
        ids = list(batch.passages)
        present = self.store.existing_ids(self.store.passages, ids)
        new = [pid for pid in ids if pid not in present]
        summary.passages_present, summary.passages_added = len(present), len(new)
        vectors = self._embed([batch.passages[pid].text for pid in new], "passages", progress)
        summary.texts_embedded += len(new)
        self.store.insert(self.store.passages, (
            {"id": pid, "text": batch.passages[pid].text, "vector": vec,
             "doc_id": batch.passages[pid].doc_id or pid,
             "metadata": batch.passages[pid].metadata}
            for pid, vec in zip(new, vectors, strict=True)
        ))

    def _store_entities(self, batch: _Batch, summary: IngestSummary, progress: Progress | None
                        ) -> None:
        ids = list(batch.entity_names)
        present = {eid for eid in ids if eid in self.graph.entity_index}
        unknown = [eid for eid in ids if eid not in present]
        present |= self.store.existing_ids(self.store.entities, unknown)
        new = [eid for eid in ids if eid not in present]
        summary.entities_present, summary.entities_added = len(present), len(new)
        vectors = self._embed([batch.entity_names[eid] for eid in new], "entities", progress)
        summary.texts_embedded += len(new)
        self.store.insert(self.store.entities, (
            {"id": eid, "name": batch.entity_names[eid], "vector": vec}
            for eid, vec in zip(new, vectors, strict=True)
        ))
        for eid in new:
            self.graph.set_entity_name(eid, batch.entity_names[eid])

    def _store_relations(self, batch: _Batch, summary: IngestSummary, progress: Progress | None
                         ) -> None:
        ids = list(batch.relations)
        present = self.store.existing_ids(self.store.relations, ids)
        new = [rid for rid in ids if rid not in present]
        summary.relations_present, summary.relations_added = len(present), len(new)
        vectors = self._embed([batch.relations[rid][2] for rid in new], "relations", progress)
        summary.texts_embedded += len(new)
        for rid in new:
            batch.relation_passages[rid] = _capped(rid, batch.relation_passages[rid])
        self.store.insert(self.store.relations, (
            {"id": rid, "subject_id": batch.relations[rid][0],
             "object_id": batch.relations[rid][1], "text": batch.relations[rid][2],
             "vector": vec, "passage_ids": batch.relation_passages[rid]}
            for rid, vec in zip(new, vectors, strict=True)
        ))
        for rid in new:
            s, o, text = batch.relations[rid]
            self.graph.add_relation(rid, s, o, text, batch.relation_passages[rid])
        self._link_present(batch, sorted(present), summary)

    def _link_present(self, batch: _Batch, present: list[str], summary: IngestSummary) -> None:
        """Point relations already stored at the new passages they were found in too."""
        stored = self.store.get(self.store.relations, present,
                                ["id", "subject_id", "object_id", "text", "vector", "passage_ids"])
        updates = []
        for row in stored:
            known = list(row["passage_ids"])
            extra = [p for p in batch.relation_passages[row["id"]] if p not in known]
            if not extra:
                continue
            merged = _capped(row["id"], known + extra)
            row["passage_ids"] = merged
            row["vector"] = [float(x) for x in row["vector"]]
            updates.append(row)
            self.graph.add_relation(row["id"], row["subject_id"], row["object_id"], row["text"],
                                    merged)
        summary.relations_linked = self.store.upsert(self.store.relations, updates)
