"""Following Milvus: the whole graph read back (`scan_graph`), or other processes' writes
applied to a graph (`absorb`: settled change-log parts).

Each part names ids (`store.changes`); their rows are read back from Milvus (strong) and the
graph takes what Milvus holds: an id found is added or updated, an id not found is removed.
The cost follows the change, not the graph (the graph is copied once per absorb, so the
retrievers already handed out keep theirs whole).

Removals go first, then additions, each kind in the order that keeps the graph whole: an
entity that a relation the graph keeps still uses is kept until that relation goes (the
removed relations' entities are looked up again for that), and a relation's passages that
Milvus does not hold are left out of its list, as a fresh load would.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hopgraph.graph import KnowledgeGraph
from hopgraph.store.changes import Part
from hopgraph.store.milvus import MilvusStore
from hopgraph.store.vectors import KINDS

_FIELDS = {
    "passages": ["id", "doc_id", "text"],
    "entities": ["id", "name"],
    "relations": ["id", "subject_id", "object_id", "text", "passage_ids"],
}


@dataclass
class Absorbed:
    """A graph with a change applied: the new graph, the rows kept of each kind (graph
    order, for the vectors) and the vectors of the rows added (None: not read)."""

    graph: KnowledgeGraph
    masks: dict[str, np.ndarray] = field(default_factory=dict)
    added: dict[str, np.ndarray | None] = field(default_factory=dict)
    changed: int = 0  # rows added, changed or removed
    texts: dict[str, str] = field(default_factory=dict)  # the passages read, by id


def touched(parts: Iterable[Part]) -> dict[str, set[str]]:
    """The ids the parts name, by kind."""
    ids: dict[str, set[str]] = {kind: set() for kind in KINDS}
    for part in parts:
        if part.kind in ids:
            ids[part.kind].update(part.ids)
    return ids


def absorb(store: MilvusStore, graph: KnowledgeGraph, parts: list[Part],
           dim: int | None) -> Absorbed:
    """`graph` (not changed) with the rows `parts` name taken from Milvus, and the vectors
    of the rows added (`dim` wide; None: not read)."""
    with_vectors = dim is not None
    ids = touched(parts)
    for rid in ids["relations"]:  # a removed relation may free its entities
        index = graph.relation_index.get(rid)
        if index is not None:
            ids["entities"].update((graph.entity_ids[int(graph.subjects[index])],
                                    graph.entity_ids[int(graph.objects[index])]))
    store.ensure_all_loaded()
    setting = store.reads_now()  # under the lease: its timestamp (`LeaseReads`)

    def fetch(kind: str) -> dict[str, dict[str, Any]]:
        fields = _FIELDS[kind] + (["vector"] if with_vectors else [])
        return {row["id"]: row for row in store.get(getattr(store, kind), sorted(ids[kind]),
                                                    fields, strong=True, reads=setting)}

    # Each strong read waits for the server's next time tick (~200 ms on Milvus 2.3): the
    # three kinds are read at once.
    with ThreadPoolExecutor(max_workers=len(KINDS)) as pool:
        rows = dict(zip(KINDS, pool.map(fetch, KINDS), strict=True))
    result = Absorbed(graph.copy(), texts={pid: row["text"]
                                           for pid, row in rows["passages"].items()})
    _remove(result, ids, rows)
    _add(result, rows, dim)
    return result


def _remove(result: Absorbed, ids: dict[str, set[str]],
            rows: dict[str, dict[str, dict[str, Any]]]) -> None:
    graph = result.graph
    gone = {kind: [i for i in ids[kind] if i not in rows[kind]] for kind in KINDS}
    relations = np.array(sorted(graph.relation_index[r] for r in gone["relations"]
                                if r in graph.relation_index), dtype=np.int64)
    keep_r = np.ones(len(graph.relation_ids), dtype=bool)
    keep_r[relations] = False
    used = np.zeros(len(graph.entity_ids), dtype=bool)
    used[graph.subjects[keep_r]] = True
    used[graph.objects[keep_r]] = True
    entities = np.array(sorted(graph.entity_index[e] for e in gone["entities"]
                               if e in graph.entity_index
                               and not used[graph.entity_index[e]]), dtype=np.int64)
    passages = np.array(sorted(graph.passage_index[p] for p in gone["passages"]
                               if p in graph.passage_index), dtype=np.int64)
    if len(relations) or len(entities) or len(passages):
        result.graph, result.masks = graph.without(relations, entities, passages)
        result.changed += len(relations) + len(entities) + len(passages)


def _add(result: Absorbed, rows: dict[str, dict[str, dict[str, Any]]],
         dim: int | None) -> None:
    """Add or update the rows found (`dim`: the vectors' width, None: not read)."""
    graph = result.graph
    new: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
    for pid, row in sorted(rows["passages"].items()):
        index = graph.passage_index.get(pid)
        if index is None:
            new["passages"].append(row)
        elif graph.doc_of(index) == row["doc_id"]:
            continue
        graph.add_passage(pid, row["doc_id"])
        result.changed += 1
    for eid, row in sorted(rows["entities"].items()):
        index = graph.entity_index.get(eid)
        if index is None:
            new["entities"].append(row)
            graph.add_entity(eid, row["name"])
            result.changed += 1
        elif graph.entity_names[index] != row["name"]:
            graph.set_entity_name(eid, row["name"])
            result.changed += 1
    for rid, row in sorted(rows["relations"].items()):
        known = [p for p in row["passage_ids"] if p in graph.passage_index]
        index = graph.relation_index.get(rid)
        if index is not None:
            if graph.passages_of(index) != known:
                graph.set_passages(index, known)
                result.changed += 1
        elif row["subject_id"] in graph.entity_index and row["object_id"] in graph.entity_index:
            new["relations"].append(row)
            graph.add_relation(rid, row["subject_id"], row["object_id"], row["text"], known)
            result.changed += 1
        # else: its entity is not stored (yet): a later part, or `check`, says more
    for kind in KINDS:
        result.added[kind] = None if dim is None else np.array(
            [r["vector"] for r in new[kind]], dtype=np.float32).reshape(len(new[kind]), dim)


def sizes(graph: KnowledgeGraph) -> dict[str, int]:
    """Rows of each kind (entities, relations, passages) the graph holds."""
    counts = {"entities": len(graph.entity_ids), "relations": len(graph.relations),
              "passages": len(graph.passage_ids)}
    return {kind: counts[kind] for kind in KINDS}


def scan_graph(store: MilvusStore) -> KnowledgeGraph:
    """The graph read back from Milvus (every entity, relation and passage id), strong:
    the caller stamps it with the write counter read before, so its rows must hold that
    write. A session read by a client that has not written may not see yet what another
    process wrote last, and no later look at the log would bring those rows in."""
    graph = KnowledgeGraph()
    store.ensure_all_loaded()
    with store.strong_reads():
        for row in store.scan(store.entities, ["id", "name"]):
            graph.add_entity(row["id"], row["name"])
        for row in store.scan(store.relations,
                              ["id", "subject_id", "object_id", "text", "passage_ids"]):
            graph.add_relation(row["id"], row["subject_id"], row["object_id"], row["text"],
                               list(row["passage_ids"]))
        for row in store.scan(store.passages, ["id", "doc_id"]):
            graph.add_passage(row["id"], row["doc_id"])  # those without relations too
    return graph
