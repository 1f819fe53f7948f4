"""Removing what documents no longer hold: their dropped passages, the links to them, and,
by cascade, relations left without a passage and entities left without a relation.

Deleting a document prunes all of it; replacing one (re-ingesting it) prunes what the new
input no longer says, after the new rows were written (so a relation the edited document
still states is kept, never deleted and re-embedded).

Milvus has no transaction across collections, so the writes go in an order after which a
rerun of the same command, from whatever point it stopped, finds the rest still to do:

1. relations that keep other passages lose the pruned ones (upserted);
2. entities that only doomed relations touch are deleted;
3. relations left with no passage are deleted;
4. the pruned passages' sentence rows (`hopgraph.sentences`) are deleted, then the pruned
   passages, last: while any is left, the rerun finds the document, and every relation,
   entity and sentence row that hung on the passages already deleted went before them.

Between a stop and the rerun the documents are unfinished (`store.writes`), so reads say
so; the rerun completes them, or `check --repair` removes them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from hopgraph.graph import KnowledgeGraph
from hopgraph.ingest.batch import StoredDocsSeen
from hopgraph.records import Removal
from hopgraph.sentences import sentence_rows
from hopgraph.store import MilvusStore

Touch = Callable[[str, list[str], list[str]], None]  # (kind, ids, documents)
_RELATION_FIELDS = ["id", "subject_id", "object_id", "text", "vector", "passage_ids"]


@dataclass
class Plan:
    """What pruning `documents` removes, by graph index."""

    documents: list[str]
    passages: np.ndarray  # passages to delete
    shrink: dict[int, list[int]] = field(default_factory=dict)  # relation -> passages kept
    relations: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    entities: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    changed: set[str] = field(default_factory=set)  # documents that lose a passage or a link

    @property
    def empty(self) -> bool:
        """Whether nothing is to be removed."""
        return not (len(self.passages) or self.shrink or len(self.relations))


def plan(graph: KnowledgeGraph, documents: list[str], seen: StoredDocsSeen | None = None) -> Plan:
    """What to remove so that `documents` hold only what `seen` says of them (nothing, for a
    delete): their passages not seen, and every link from a relation to one of their
    passages that the input no longer states."""
    keep_passages = seen.passages if seen else set()
    keep_links = seen.links if seen else set()
    ids = graph.passage_ids
    mine = graph.passages_in(documents)
    gone = np.array([p for p in mine.tolist() if ids[p] not in keep_passages], dtype=np.int64)
    in_docs = np.zeros(len(ids), dtype=bool)
    in_docs[mine] = True
    result = Plan(documents, gone)
    result.changed = {doc for p in gone.tolist() if (doc := graph.doc_of(p)) is not None}
    doomed = []
    for r in graph.citing(mine).tolist():
        current = graph.passage_indices(r).tolist()
        rid = graph.relation_ids[r]
        kept = [p for p in current if not in_docs[p] or (rid, ids[p]) in keep_links]
        if len(kept) == len(current):
            continue
        result.changed.update(doc for p in set(current) - set(kept)
                              if (doc := graph.doc_of(p)) is not None)
        if kept:
            result.shrink[r] = kept
        else:
            doomed.append(r)
    result.relations = np.array(doomed, dtype=np.int64)
    if doomed:
        alive = np.ones(len(graph.relation_ids), dtype=np.float32)
        alive[result.relations] = 0.0
        touched = graph.entities_of(result.relations)
        live = graph.incidence[touched] @ alive
        result.entities = touched[np.asarray(live).ravel() == 0]
    return result


def apply(store: MilvusStore, graph: KnowledgeGraph, todo: Plan, touch: Touch
          ) -> tuple[KnowledgeGraph, dict[str, np.ndarray], Removal]:
    """Carry `todo` out in Milvus, in the crash-safe order above, then in the graph; returns
    the new graph, the masks of rows kept per kind (graph order) and the counts. Each step
    is announced first (`touch(kind, ids, documents)`, the change log)."""
    started = time.perf_counter()
    removal = Removal(documents=list(todo.documents))
    if todo.empty:
        return graph, {}, removal
    docs = todo.documents
    shrunk = [graph.relation_ids[r] for r in todo.shrink]
    if shrunk:
        touch("relations", shrunk, docs)
    removal.relations_unlinked = _shrink(store, graph, todo)
    for kind, ids in (("entities", [graph.entity_ids[e] for e in todo.entities.tolist()]),
                      ("relations", [graph.relation_ids[r] for r in todo.relations.tolist()]),
                      ("passages", [graph.passage_ids[p] for p in todo.passages.tolist()])):
        if ids:
            touch(kind, ids, docs)
        if kind == "passages":
            _drop(store, store.sentences, _sentence_rows(store, ids))
        _drop(store, getattr(store, kind), ids)
    for r, kept in todo.shrink.items():
        graph.set_passages(r, [graph.passage_ids[p] for p in kept])
    pruned, masks = graph.without(todo.relations, todo.entities, todo.passages)
    removal.passages = len(todo.passages)
    removal.relations = len(todo.relations)
    removal.entities = len(todo.entities)
    removal.seconds = time.perf_counter() - started
    return pruned, masks, removal


def _shrink(store: MilvusStore, graph: KnowledgeGraph, todo: Plan) -> int:
    """Step 1: relations that keep some passages lose the others. The stored row's list is
    filtered (not replaced by the graph's), so a link the graph does not know survives."""
    if not todo.shrink:
        return 0
    dropped = {graph.relation_ids[r]: set(graph.passages_of(r))
               - {graph.passage_ids[p] for p in kept} for r, kept in todo.shrink.items()}
    rows = store.get(store.relations, sorted(dropped), _RELATION_FIELDS)
    for row in rows:
        row["passage_ids"] = [p for p in row["passage_ids"] if p not in dropped[row["id"]]]
        row["vector"] = np.asarray(row["vector"], dtype=np.float32)
    return store.upsert(store.relations, rows)


def _sentence_rows(store: MilvusStore, passages: list[str]) -> list[str]:
    """The ids of the sentence rows of these passages, from their stored texts."""
    if not passages:
        return []
    return [sid for row in store.get(store.passages, passages, ["id", "text"])
            for sid in sentence_rows(row["id"], row["text"])]


def _drop(store: MilvusStore, collection: str, ids: list[str]) -> None:
    """Steps 2-4: delete rows by id (deleting an id already gone is a no-op)."""
    if ids:
        store.delete(collection, ids)
