"""One ingestion chunk's bookkeeping: ids derived from records, and what a run has seen."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from hopgraph.identity import content_key, entity_id, passage_id, relation_id, relation_text
from hopgraph.records import IngestSummary, PassageRecord, Problem
from hopgraph.store import (
    DOC_ID_MAX,
    NAME_MAX,
    PASSAGE_TEXT_MAX,
    PASSAGES_PER_RELATION_MAX,
    RELATION_TEXT_MAX,
)

log = logging.getLogger(__name__)


@dataclass
class Batch:
    """One chunk's passages, entities and relations, keyed by their content-derived ids."""

    passages: dict[str, PassageRecord] = field(default_factory=dict)
    docs: dict[str, str] = field(default_factory=dict)  # passage id -> document id
    entity_names: dict[str, str] = field(default_factory=dict)
    relations: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # s_id, o_id, text
    relation_passages: dict[str, list[str]] = field(default_factory=dict)


def _too_long(text: str, limit: int) -> bool:
    return len(text.encode("utf-8")) > limit


def collect(records: Iterable[PassageRecord], summary: IngestSummary) -> Batch:
    """Derive ids for every passage, entity and relation, dropping rows too big to store."""
    batch = Batch()
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


def capped(relation: str, passages: list[str]) -> list[str]:
    """A relation's passage links, cut to what the store's array field holds."""
    if len(passages) > PASSAGES_PER_RELATION_MAX:
        log.warning("relation %s is in %d passages; links past %d dropped", relation,
                    len(passages), PASSAGES_PER_RELATION_MAX)
    return passages[:PASSAGES_PER_RELATION_MAX]


@dataclass
class AddedIds:
    """Ids this ingestion added: a later chunk that repeats one neither re-adds nor counts it."""

    passages: set[str] = field(default_factory=set)
    entities: set[str] = field(default_factory=set)
    relations: set[str] = field(default_factory=set)


@dataclass
class StoredDocsSeen:
    """What the input says of documents that were stored before it (what `prune` keeps):
    their passages, and which relation each of those passages states."""

    docs: set[str] = field(default_factory=set)
    passages: set[str] = field(default_factory=set)
    links: set[tuple[str, str]] = field(default_factory=set)  # (relation id, passage id)

    def note(self, batch: Batch, stored_docs: frozenset[str]) -> None:
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
