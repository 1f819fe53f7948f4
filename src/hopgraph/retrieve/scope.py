"""What a filtered query may see: the passages its `where` matches, the relations with at
least one of them, and the entities at the ends of those relations.

A filter never changes the graph: it narrows what the methods can reach. `Scope` holds
masks over the graph's own indices; `ScopedGraph` is the graph as the methods see it under
a scope (its traversals, a relation's passages and an entity's passages skip what is out);
`ScopedSearch` runs every search inside the scope; `ScopedLinker` links only entities in it.
The methods run unchanged on a context made of the three (`Context.scoped`), so nothing of
an excluded document reaches a result: not a passage, relation, bridge, entity or drawing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from hopgraph.errors import UsageError
from hopgraph.graph import KnowledgeGraph
from hopgraph.graph.columns import Relations
from hopgraph.lexicon.link import EntityLinker, EntityMatch
from hopgraph.records import Hit
from hopgraph.store import MilvusStore
from hopgraph.store.where_expr import milvus_expression
from hopgraph.where import Where

if TYPE_CHECKING:  # annotations only: search.py imports this module
    from hopgraph.lexicon.lexical import LocalBM25
    from hopgraph.retrieve.search import Searcher

SCOPES_KEPT = 32  # filters whose scopes a retriever keeps (least recently used dropped)


@dataclass
class Scope:
    """Masks over one graph's passages, relations and entities (True: in scope), and the
    Milvus expression of the filter (for searches that run in Milvus)."""

    passages: np.ndarray
    relations: np.ndarray
    entities: np.ndarray
    expression: str
    passage_ids: frozenset[str]
    # Work done once per scope and kept with it (e.g. vectors read back for Milvus searches).
    memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, graph: KnowledgeGraph, passages: np.ndarray, expression: str) -> Scope:
        """The scope of the passages at these indices."""
        passage_mask = np.zeros(len(graph.passage_ids), dtype=bool)
        passage_mask[np.asarray(passages, dtype=np.int64)] = True
        indptr, index = graph.passage_csr()
        seen = np.concatenate([[0], np.cumsum(passage_mask[index], dtype=np.int64)])
        relation_mask = seen[indptr[1:]] > seen[indptr[:-1]]  # any passage of the row
        entity_mask = np.zeros(len(graph.entity_ids), dtype=bool)
        entity_mask[graph.subjects[relation_mask]] = True
        entity_mask[graph.objects[relation_mask]] = True
        ids = frozenset(graph.passage_ids[i] for i in np.flatnonzero(passage_mask).tolist())
        return cls(passage_mask, relation_mask, entity_mask, expression, ids)

    def rows(self, kind: str) -> np.ndarray:
        """Indices in scope of one kind (`passages`, `relations`, `entities`), kept."""
        key = f"rows:{kind}"
        if key not in self.memo:
            self.memo[key] = np.flatnonzero(getattr(self, kind))
        return self.memo[key]  # type: ignore[no-any-return]

    def kept(self, key: str, make: Callable[[], Any]) -> Any:
        """`make()` once per scope."""
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]


class Scopes:
    """The scopes of the filters asked for on one graph version, the latest kept.

    The passages a filter matches come from the graph itself when it only names documents
    (`doc_id`), else from Milvus (the filter's expression, `store.where_expr`), restricted
    to this graph version's passages."""

    def __init__(self, graph: KnowledgeGraph, store: MilvusStore | None) -> None:
        self.graph = graph
        self.store = store
        self._kept: OrderedDict[str, Scope] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, where: Where) -> Scope:
        """The scope of `where` on this graph."""
        key = where.canonical
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        expression = milvus_expression(where)
        docs = where.only_docs()
        if docs is not None:
            rows = self.graph.passages_in(sorted(docs))
        elif self.store is None:
            raise UsageError("a metadata filter needs the graph's Milvus store",
                             fix="open the graph with GraphRAG")
        else:
            index = self.graph.passage_index
            found = self.store.ids_where(self.store.passages, expression)
            rows = np.array(sorted({index[i] for i in found if i in index}), dtype=np.int64)
        scope = Scope.of(self.graph, rows, expression)
        with self._lock:
            self._kept[key] = scope
            while len(self._kept) > SCOPES_KEPT:
                self._kept.popitem(last=False)
        return scope


class ScopedGraph:
    """A graph as the methods see it under a scope: lookups by id or index are the graph's
    own; traversals and passage lists skip what is out of scope."""

    def __init__(self, graph: KnowledgeGraph, scope: Scope) -> None:
        self.base = graph
        self.scope = scope
        self.relations = Relations(self)
        self._entity_passages: dict[int, frozenset[str]] = {}

    def __getattr__(self, name: str) -> Any:  # ids, names, indices, columns
        return getattr(self.base, name)

    def relations_of(self, entities: np.ndarray) -> np.ndarray:
        """Relations in scope incident to any of `entities` (sorted, unique)."""
        found = self.base.relations_of(entities)
        kept: np.ndarray = found[self.scope.relations[found]]
        return kept

    def entities_of(self, relations: np.ndarray) -> np.ndarray:
        """Subjects and objects of those of `relations` in scope (sorted, unique)."""
        relations = np.asarray(relations, dtype=np.int64)
        return self.base.entities_of(relations[self.scope.relations[relations]])

    def passage_indices(self, relation: int) -> np.ndarray:
        """A relation's passages in scope (indices)."""
        found = self.base.passage_indices(relation)
        kept: np.ndarray = found[self.scope.passages[found]]
        return kept

    def passages_of(self, relation: int) -> list[str]:
        """Ids of a relation's passages in scope."""
        return [self.base.passage_ids[i] for i in self.passage_indices(relation).tolist()]

    def passages_of_entity(self, entity: int) -> frozenset[str]:
        """Ids of the passages in scope of any relation of `entity`."""
        found = self._entity_passages.get(entity)
        if found is None:
            found = self.base.passages_of_entity(entity) & self.scope.passage_ids
            self._entity_passages[entity] = found
        return found

    # The expansion walks with this view's relations_of / entities_of: inside the scope.
    expand = KnowledgeGraph.expand


class ScopedLinker:
    """An entity linker that finds only entities in scope."""

    def __init__(self, linker: EntityLinker, scope: Scope) -> None:
        self.base = linker
        self.scope = scope

    def _inside(self, matches: list[EntityMatch]) -> list[EntityMatch]:
        return [m for m in matches if self.scope.entities[m.index]]

    def link(self, question: str, whole: bool = True) -> list[EntityMatch]:
        """`EntityLinker.link`, less entities out of scope."""
        return self._inside(self.base.link(question, whole=whole))

    def resolve(self, name: str) -> list[EntityMatch]:
        """`EntityLinker.resolve`, less entities out of scope."""
        return self._inside(self.base.resolve(name))


class ScopedSearch:
    """A searcher's searches, inside a scope (the searcher does the work: `scope=`)."""

    def __init__(self, search: Searcher, scope: Scope) -> None:
        self.base = search
        self.scope = scope

    def relations(self, qvecs: np.ndarray, limit: int) -> list[dict[int, float]]:
        return self.base.relations(qvecs, limit, scope=self.scope)

    def score_relations(self, qvec: np.ndarray, relations: list[int]) -> dict[int, float]:
        inside = [r for r in relations if self.scope.relations[r]]
        return self.base.score_relations(qvec, inside)

    def entities(self, qvecs: np.ndarray, limit: int) -> list[dict[int, float]]:
        return self.base.entities(qvecs, limit, scope=self.scope)

    def passages(self, qvecs: np.ndarray, limit: int) -> list[dict[str, float]]:
        return self.base.passages(qvecs, limit, scope=self.scope)

    def score_passages(self, qvecs: np.ndarray, passage_ids: list[str]
                       ) -> list[dict[str, float]]:
        inside = [pid for pid in passage_ids if pid in self.scope.passage_ids]
        return self.base.score_passages(qvecs, inside)

    def lexical(self, queries: list[str], limit: int) -> list[list[Hit]]:
        return self.base.lexical(queries, limit, scope=self.scope)

    def name_shares(self, names: list[str]) -> list[float]:
        return self.base.name_shares(names)  # how common a name is in the whole graph

    def texts(self, passage_ids: list[str]) -> dict[str, str]:
        return self.base.texts(passage_ids)

    def sentence_vectors(self, sentence_ids: list[str]) -> dict[str, np.ndarray]:
        return self.base.sentence_vectors(sentence_ids)

    @property
    def bm25(self) -> LocalBM25 | None:
        return self.base.bm25


def top_in_scope(scores: np.ndarray, mask: np.ndarray, limit: int
                 ) -> list[tuple[int, float]]:
    """The best `limit` indices of a score row among those in `mask`, best first."""
    inside = np.flatnonzero(mask)
    limit = min(limit, len(inside))
    if limit <= 0:
        return []
    row = scores[inside]
    part = np.argpartition(-row, limit - 1)[:limit]
    order = part[np.argsort(-row[part])]
    return [(int(inside[i]), float(row[i])) for i in order]
