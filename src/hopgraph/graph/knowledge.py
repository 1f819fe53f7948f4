"""The in-memory knowledge graph: entity–relation incidence and k-degree expansion.

Compact by design (it must hold a million relations in well under a gigabyte): a relation is
a row of columnar arrays (subject and object entity indices, id, text) and its passages are a
CSR row into one table of passage ids; `graph.relations[r]` builds a small `RelationInfo`
view only when asked. Built from the snapshot or from the stored relations when a graph is
opened. Expansion walks outward from the seeds through the sparse incidence matrix, so its
cost follows the subgraph it touches; it yields exactly the candidate set of the matrix-power
formulation (see `reference.MatrixPowers`).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from hopgraph.errors import UsageError
from hopgraph.graph import edit
from hopgraph.graph.columns import (
    Ints,
    Relations,
    RowLists,
    check_columns,
    neighbours,
    sorted_unique,
)


class KnowledgeGraph:
    """Entities and relations of one graph, with the sparse incidence matrix between them."""

    def __init__(self) -> None:
        self.entity_ids: list[str] = []
        self.entity_names: list[str] = []
        self.entity_index: dict[str, int] = {}
        self.relation_ids: list[str] = []
        self.relation_texts: list[str] = []
        self.relation_index: dict[str, int] = {}
        self.passage_ids: list[str] = []  # every stored passage (vector files use this order)
        self.passage_index: dict[str, int] = {}
        self.doc_ids: list[str] = []  # the documents passages belong to (`passage_docs`)
        self.doc_index: dict[str, int] = {}
        self._passage_doc = Ints()  # passage i's document index (-1: not known yet)
        self._subjects = Ints()
        self._objects = Ints()
        self._passages = RowLists()  # row r: relation r's passages (indices in passage_ids)
        self.relations = Relations(self)
        self._incidence: sparse.csr_matrix | None = None
        self._incidence_t: sparse.csr_matrix | None = None
        self._max_degree = 0  # the most relations of one entity, built with the incidence
        self._entity_passages: dict[int, frozenset[str]] = {}

    @classmethod
    def from_arrays(
        cls, entity_ids: list[str], entity_names: list[str], relation_ids: list[str],
        relation_texts: list[str], subjects: np.ndarray, objects: np.ndarray,
        passage_ids: list[str], passage_indptr: np.ndarray, passage_index: np.ndarray,
        doc_ids: list[str] | None = None, passage_doc: np.ndarray | None = None,
    ) -> KnowledgeGraph:
        """A graph from its columns (as `arrays()` gives them); ValueError if inconsistent.
        Without `doc_ids`/`passage_doc` no passage's document is known."""
        n_ent, n_rel = len(entity_ids), len(relation_ids)
        doc_ids = list(doc_ids or [])
        if passage_doc is None:
            passage_doc = np.full(len(passage_ids), -1, dtype=np.int64)
        check_columns(entity_ids, entity_names, relation_ids, relation_texts, subjects, objects,
                      passage_ids, passage_indptr, passage_index, doc_ids, passage_doc)
        graph = cls()
        graph.entity_ids, graph.entity_names = list(entity_ids), list(entity_names)
        graph.relation_ids, graph.relation_texts = list(relation_ids), list(relation_texts)
        graph.passage_ids = list(passage_ids)
        graph.entity_index = dict(zip(graph.entity_ids, range(n_ent), strict=True))
        graph.relation_index = dict(zip(graph.relation_ids, range(n_rel), strict=True))
        graph.passage_index = dict(zip(graph.passage_ids, range(len(passage_ids)), strict=True))
        graph.doc_ids = doc_ids
        graph.doc_index = dict(zip(doc_ids, range(len(doc_ids)), strict=True))
        if (len(graph.entity_index), len(graph.relation_index), len(graph.passage_index),
                len(graph.doc_index)) != (n_ent, n_rel, len(passage_ids), len(doc_ids)):
            raise ValueError("duplicate ids in graph arrays")
        graph._passage_doc = Ints(passage_doc)
        graph._subjects, graph._objects = Ints(subjects), Ints(objects)
        graph._passages = RowLists(passage_indptr, passage_index)
        return graph

    def copy(self) -> KnowledgeGraph:
        """An independent copy (a write can change it while readers keep this one). Only
        reads this graph: it is safe while other threads query it."""
        other = KnowledgeGraph()
        for name in ("entity_ids", "entity_names", "relation_ids", "relation_texts",
                     "passage_ids", "doc_ids"):
            setattr(other, name, list(getattr(self, name)))
        for name in ("entity_index", "relation_index", "passage_index", "doc_index"):
            setattr(other, name, dict(getattr(self, name)))
        for name in ("_subjects", "_objects", "_passage_doc"):
            setattr(other, name, Ints(getattr(self, name).values))
        other._passages = self._passages.copy()
        return other

    def arrays(self) -> dict[str, np.ndarray]:
        """The integer columns, with every relation's passages as one CSR
        (`passage_indptr`, `passage_index` into `passage_ids`)."""
        indptr, index = self.passage_csr()
        return {"subject": self.subjects.copy(), "object": self.objects.copy(),
                "passage_indptr": indptr.copy(), "passage_index": index.copy(),
                "passage_doc": self.passage_docs.copy()}

    # --- building --------------------------------------------------------------------------

    def add_entity(self, entity_id: str, name: str) -> int:
        """Register an entity (idempotent); returns its index."""
        index = self.entity_index.get(entity_id)
        if index is None:
            index = len(self.entity_ids)
            self.entity_index[entity_id] = index
            self.entity_ids.append(entity_id)
            self.entity_names.append(name)
            self._incidence = self._incidence_t = None
        return index

    def add_passage(self, passage_id: str, doc_id: str | None = None) -> int:
        """Register a passage (idempotent) and, when given, its document; returns its index
        in `passage_ids`."""
        index = self.passage_index.get(passage_id)
        if index is None:
            index = self.passage_index[passage_id] = len(self.passage_ids)
            self.passage_ids.append(passage_id)
            self._passage_doc.append(-1)
        if doc_id is not None:
            doc = self.doc_index.get(doc_id)
            if doc is None:
                doc = self.doc_index[doc_id] = len(self.doc_ids)
                self.doc_ids.append(doc_id)
            self._passage_doc.values[index] = doc
        return index

    def add_relation(
        self, relation_id: str, subject_id: str, object_id: str, text: str,
        passage_ids: list[str],
    ) -> int:
        """Register a relation or update its passages; returns its index."""
        index = self.relation_index.get(relation_id)
        if index is not None:
            self.set_passages(index, passage_ids)
            return index
        self._entity_passages.clear()
        passages = [self.add_passage(p) for p in passage_ids]
        subject = self.add_entity(subject_id, subject_id)
        obj = self.add_entity(object_id, object_id)
        index = len(self.relation_ids)
        self.relation_index[relation_id] = index
        self.relation_ids.append(relation_id)
        self.relation_texts.append(text)
        self._subjects.append(subject)
        self._objects.append(obj)
        self._passages.append(passages)
        self._incidence = self._incidence_t = None
        return index

    def set_passages(self, relation: int, passage_ids: list[str]) -> None:
        """Replace the passage list of relation `relation` (an index)."""
        self._entity_passages.clear()
        self._passages.replace(relation, np.array([self.add_passage(p) for p in passage_ids],
                                                  dtype=np.int64))

    def set_entity_name(self, entity_id: str, name: str) -> None:
        """Give an entity its display name (loaded separately from its relations)."""
        self.entity_names[self.add_entity(entity_id, name)] = name

    # --- documents ---------------------------------------------------------------------------

    def documents(self) -> dict[str, int]:
        """Passage count of every document that has passages, by document id."""
        docs = self._passage_doc.values
        counts = np.bincount(docs[docs >= 0], minlength=len(self.doc_ids))
        return {self.doc_ids[i]: int(n) for i, n in enumerate(counts.tolist()) if n}

    def doc_of(self, passage: int) -> str | None:
        """The document of passage `passage` (an index), if known."""
        doc = int(self._passage_doc.values[passage])
        return self.doc_ids[doc] if doc >= 0 else None

    def passages_in(self, doc_ids: list[str]) -> np.ndarray:
        """Indices of the passages of these documents (unknown ids have none), sorted."""
        wanted = [self.doc_index[d] for d in doc_ids if d in self.doc_index]
        return np.flatnonzero(np.isin(self._passage_doc.values, wanted)).astype(np.int64)

    def citing(self, passages: np.ndarray) -> np.ndarray:
        """Relations whose passage list holds any of `passages` (indices), sorted."""
        return edit.citing(self, passages)

    def without(self, relations: np.ndarray, entities: np.ndarray, passages: np.ndarray
                ) -> tuple[KnowledgeGraph, dict[str, np.ndarray]]:
        """This graph less these relations, entities and passages (`edit.without`)."""
        return edit.without(self, relations, entities, passages)

    # --- columns -----------------------------------------------------------------------------

    @property
    def subjects(self) -> np.ndarray:
        """Subject entity index of every relation (read-only view)."""
        return self._subjects.values

    @property
    def objects(self) -> np.ndarray:
        """Object entity index of every relation (read-only view)."""
        return self._objects.values

    @property
    def passage_docs(self) -> np.ndarray:
        """Document index (into `doc_ids`) of every passage, -1 if not known (read-only view)."""
        return self._passage_doc.values

    def passage_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """Every relation's passages as one CSR: (indptr, index into `passage_ids`), views."""
        return self._passages.fold()

    def passage_indices(self, relation: int) -> np.ndarray:
        """Indices (into `passage_ids`) of the passages relation `relation` came from."""
        return self._passages.row(relation)

    def passages_of(self, relation: int) -> list[str]:
        """Ids of the passages relation `relation` came from."""
        return [self.passage_ids[i] for i in self.passage_indices(relation).tolist()]

    @property
    def incidence(self) -> sparse.csr_matrix:
        """Binary entities × relations matrix A (A[e, r] = 1 when e is r's subject or object)."""
        if self._incidence is None:
            n_rel = len(self.relation_ids)
            rows = np.empty(2 * n_rel, dtype=np.int64)
            rows[0::2], rows[1::2] = self.subjects, self.objects
            cols = np.repeat(np.arange(n_rel, dtype=np.int64), 2)
            matrix = sparse.csr_matrix(
                (np.ones(len(rows), dtype=np.float32), (rows, cols)),
                shape=(len(self.entity_ids), n_rel),
            )
            matrix.data[:] = 1.0  # a relation from an entity to itself counts once
            # Queries of a server share one graph: `_incidence` is set last, so a thread that
            # sees it set sees the transpose and the degree too.
            self._incidence_t = matrix.T.tocsr()
            self._max_degree = int(np.diff(matrix.indptr).max(initial=0))
            self._incidence = matrix
            return matrix
        return self._incidence

    @property
    def max_degree(self) -> int:
        """The most relations any one entity has (0 for an empty graph)."""
        _ = self.incidence
        return self._max_degree

    @property
    def incidence_t(self) -> sparse.csr_matrix:
        """Aᵀ as CSR: for each relation, its entities."""
        _ = self.incidence
        assert self._incidence_t is not None
        return self._incidence_t

    # --- traversal -------------------------------------------------------------------------

    def relations_of(self, entities: np.ndarray) -> np.ndarray:
        """Relations incident to any of `entities` (sorted, unique)."""
        return neighbours(self.incidence, entities)

    def entities_of(self, relations: np.ndarray) -> np.ndarray:
        """Subjects and objects of `relations` (sorted, unique)."""
        return neighbours(self.incidence_t, relations)

    def passages_of_entity(self, entity: int) -> frozenset[str]:
        """Ids of the passages any relation of `entity` came from (cached)."""
        found = self._entity_passages.get(entity)
        if found is None:
            flat = self._passages.rows(self.relations_of(np.array([entity])))
            found = frozenset(self.passage_ids[i] for i in np.unique(flat).tolist())
            self._entity_passages[entity] = found
        return found

    def expand(self, seed_entities: list[int], seed_relations: list[int], degree: int
               ) -> np.ndarray:
        """Indices of the candidate relations within `degree` of the seeds, sorted (the
        reference method's expansion, docs/methods.md), walking outward."""
        if degree < 1:
            raise UsageError(f"degree must be >= 1, got {degree}")
        ents = np.unique(np.asarray(seed_entities, dtype=np.int64))
        rels = np.unique(np.asarray(seed_relations, dtype=np.int64))
        # Entity side: (A·Aᵀ)^d · A  == relations of entities d entity-hops out.
        for _ in range(degree):
            ents = self.entities_of(self.relations_of(ents))
        from_entities = self.relations_of(ents)
        # Relation side: (Aᵀ·A)^d  == relations d shared-entity steps from the seeds.
        for _ in range(degree):
            rels = self.relations_of(self.entities_of(rels))
        return sorted_unique(np.concatenate([from_entities, rels]), len(self.relation_ids))
