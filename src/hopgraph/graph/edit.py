"""Removals from the in-memory graph: the relations that cite given passages, and the graph
less some relations, entities and passages, renumbered (what `ingest.prune` applies)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from hopgraph.graph import KnowledgeGraph


def citing(graph: KnowledgeGraph, passages: np.ndarray) -> np.ndarray:
    """Relations whose passage list holds any of `passages` (indices), sorted."""
    marks = np.zeros(len(graph.passage_ids), dtype=bool)
    marks[passages] = True
    indptr, index = graph.passage_csr()
    positions = np.flatnonzero(marks[index])
    return np.unique(np.searchsorted(indptr, positions, side="right") - 1).astype(np.int64)


def without(graph: KnowledgeGraph, relations: np.ndarray, entities: np.ndarray,
            passages: np.ndarray) -> tuple[KnowledgeGraph, dict[str, np.ndarray]]:
    """`graph` less the given relations, entities and passages (indices), renumbered in the
    same order, and for each kind the mask of rows kept (for the vector files, which follow
    graph order). A removed passage leaves every relation's list; a kept relation must not
    lose an entity (ValueError)."""
    indptr, index = graph.passage_csr()
    keep = {}
    for kind, size, gone in (("relations", len(graph.relation_ids), relations),
                             ("entities", len(graph.entity_ids), entities),
                             ("passages", len(graph.passage_ids), passages)):
        mask = np.ones(size, dtype=bool)
        mask[np.asarray(gone, dtype=np.int64)] = False
        keep[kind] = mask
    keep_r, keep_e, keep_p = keep["relations"], keep["entities"], keep["passages"]
    subjects, objects = graph.subjects[keep_r], graph.objects[keep_r]
    if not (keep_e[subjects].all() and keep_e[objects].all()):
        raise ValueError("a kept relation would lose its entity")
    renumber_e, renumber_p = np.cumsum(keep_e) - 1, np.cumsum(keep_p) - 1
    row_of = np.repeat(np.arange(len(graph.relation_ids)), np.diff(indptr))
    links = keep_r[row_of] & keep_p[index]
    lengths = np.bincount(row_of[links], minlength=len(graph.relation_ids))[keep_r]
    docs = graph.passage_docs[keep_p]
    used = np.unique(docs[docs >= 0])
    renumber_d = np.full(len(graph.doc_ids) + 1, -1, dtype=np.int64)  # [-1] stays -1
    renumber_d[used] = np.arange(len(used))
    return type(graph).from_arrays(
        _kept(graph.entity_ids, keep_e), _kept(graph.entity_names, keep_e),
        _kept(graph.relation_ids, keep_r), _kept(graph.relation_texts, keep_r),
        renumber_e[subjects], renumber_e[objects], _kept(graph.passage_ids, keep_p),
        np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        renumber_p[index[links]], [graph.doc_ids[d] for d in used.tolist()],
        renumber_d[docs]), keep


def _kept(values: list[str], mask: np.ndarray) -> list[str]:
    return [v for v, k in zip(values, mask.tolist(), strict=True) if k]
