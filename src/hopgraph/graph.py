"""The in-memory knowledge graph: entity–relation incidence and k-degree expansion.

Compact by design (it must hold a million relations in well under a gigabyte): a relation is
a row of columnar arrays (subject and object entity indices, id, text) and its passages are a
CSR row into one table of passage ids; `graph.relations[r]` builds a small `RelationInfo`
view only when asked. Built from the snapshot or from the stored relations when a graph is
opened. Expansion walks outward from the seeds through the sparse incidence matrix, so its
cost follows the subgraph it touches; it yields exactly the candidate set of the matrix-power
formulation (see `graph_reference.MatrixPowers`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from hopgraph.columns import Ints, Relations, csr_rows, neighbours, sorted_unique
from hopgraph.errors import UsageError


@dataclass
class Expansion:
    """Candidate relations around the seeds; `hops` on demand (the retrieval methods need
    only the candidates, and hops take an array as long as the graph)."""

    relations: np.ndarray  # relation indices, sorted
    marked: list[tuple[np.ndarray, int]]  # (relations reached, at which hop)
    n_relations: int

    @property
    def hops(self) -> np.ndarray:
        """hops[i]: the hop at which relations[i] was first reached (0: a seed)."""
        last = max((hop for _, hop in self.marked), default=0)
        first_hop = np.full(self.n_relations, last, dtype=np.int64)
        for found, hop in self.marked:
            first_hop[found] = np.minimum(first_hop[found], hop)
        return first_hop[self.relations]


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
        self._p_indptr = Ints(np.zeros(1, dtype=np.int64))  # relation r's passages: CSR
        self._p_index = Ints()
        self._p_changed: dict[int, np.ndarray] = {}  # rows replaced since the CSR was built
        self.relations = Relations(self)
        self._incidence: sparse.csr_matrix | None = None
        self._incidence_t: sparse.csr_matrix | None = None
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
        if len(passage_doc) != len(passage_ids) or (
                len(passage_doc) and (passage_doc.min() < -1
                                      or passage_doc.max() >= len(doc_ids))):
            raise ValueError("passage documents out of range")
        if not (len(entity_names) == n_ent and len(relation_texts) == n_rel
                and len(subjects) == len(objects) == n_rel and len(passage_indptr) == n_rel + 1
                and passage_indptr[0] == 0 and passage_indptr[-1] == len(passage_index)):
            raise ValueError("graph arrays of different lengths")
        for ends, bound in ((subjects, n_ent), (objects, n_ent),
                            (passage_index, len(passage_ids))):
            if len(ends) and (ends.min() < 0 or ends.max() >= bound):
                raise ValueError("graph array index out of range")
        if np.any(np.diff(passage_indptr) < 0):
            raise ValueError("graph passage offsets decrease")
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
        graph._p_indptr, graph._p_index = Ints(passage_indptr), Ints(passage_index)
        return graph

    def copy(self) -> KnowledgeGraph:
        """An independent copy (a write can change it while readers keep this one). Only
        reads this graph: it is safe while other threads query it."""
        other = KnowledgeGraph()
        for name in ("entity_ids", "entity_names", "relation_ids", "relation_texts",
                     "passage_ids", "doc_ids"):
            setattr(other, name, list(getattr(self, name)))
        for name in ("entity_index", "relation_index", "passage_index", "doc_index",
                     "_p_changed"):
            setattr(other, name, dict(getattr(self, name)))
        for name in ("_subjects", "_objects", "_p_indptr", "_p_index", "_passage_doc"):
            setattr(other, name, Ints(getattr(self, name).values))
        return other

    def arrays(self) -> dict[str, np.ndarray]:
        """The integer columns, with every relation's passages as one CSR
        (`passage_indptr`, `passage_index` into `passage_ids`)."""
        self._fold()
        return {"subject": self.subjects.copy(), "object": self.objects.copy(),
                "passage_indptr": self._p_indptr.values.copy(),
                "passage_index": self._p_index.values.copy(),
                "passage_doc": self._passage_doc.values.copy()}

    def _fold(self) -> None:
        """Write the passage rows replaced since the CSR was built into it (one pass)."""
        if not self._p_changed:
            return
        indptr, index = self._p_indptr.values, self._p_index.values
        lengths = np.diff(indptr)
        pieces, start = [], 0
        for r in sorted(self._p_changed):  # unchanged run before r, then r's new row
            pieces += [index[indptr[start]:indptr[r]], self._p_changed[r]]
            lengths[r] = len(self._p_changed[r])
            start = r + 1
        pieces.append(index[indptr[start]:indptr[-1]])
        self._p_indptr = Ints(np.concatenate([[0], np.cumsum(lengths)]))
        self._p_index = Ints(np.concatenate(pieces))
        self._p_changed.clear()

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
        self._p_index.extend(passages)
        self._p_indptr.append(self._p_index.size)
        self._incidence = self._incidence_t = None
        return index

    def set_passages(self, relation: int, passage_ids: list[str]) -> None:
        """Replace the passage list of relation `relation` (an index)."""
        self._entity_passages.clear()
        self._p_changed[relation] = np.array([self.add_passage(p) for p in passage_ids],
                                             dtype=np.int64)

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
        self._fold()
        marks = np.zeros(len(self.passage_ids), dtype=bool)
        marks[passages] = True
        indptr, index = self._p_indptr.values, self._p_index.values
        positions = np.flatnonzero(marks[index])
        return np.unique(np.searchsorted(indptr, positions, side="right") - 1).astype(np.int64)

    def without(self, relations: np.ndarray, entities: np.ndarray, passages: np.ndarray
                ) -> tuple[KnowledgeGraph, dict[str, np.ndarray]]:
        """This graph less the given relations, entities and passages (indices), renumbered
        in the same order, and for each kind the mask of rows kept (for the vector files,
        which follow graph order). A removed passage leaves every relation's list; a kept
        relation must not lose an entity (ValueError)."""
        self._fold()
        keep = {}
        for kind, size, gone in (("relations", len(self.relation_ids), relations),
                                 ("entities", len(self.entity_ids), entities),
                                 ("passages", len(self.passage_ids), passages)):
            mask = np.ones(size, dtype=bool)
            mask[np.asarray(gone, dtype=np.int64)] = False
            keep[kind] = mask
        keep_r, keep_e, keep_p = keep["relations"], keep["entities"], keep["passages"]
        subjects, objects = self.subjects[keep_r], self.objects[keep_r]
        if not (keep_e[subjects].all() and keep_e[objects].all()):
            raise ValueError("a kept relation would lose its entity")
        renumber_e, renumber_p = np.cumsum(keep_e) - 1, np.cumsum(keep_p) - 1
        indptr, index = self._p_indptr.values, self._p_index.values
        row_of = np.repeat(np.arange(len(self.relation_ids)), np.diff(indptr))
        links = keep_r[row_of] & keep_p[index]
        lengths = np.bincount(row_of[links], minlength=len(self.relation_ids))[keep_r]
        docs = self._passage_doc.values[keep_p]
        used = np.unique(docs[docs >= 0])
        renumber_d = np.full(len(self.doc_ids) + 1, -1, dtype=np.int64)  # [-1] stays -1
        renumber_d[used] = np.arange(len(used))

        def kept(values: list[str], mask: np.ndarray) -> list[str]:
            return [v for v, k in zip(values, mask.tolist(), strict=True) if k]

        graph = KnowledgeGraph.from_arrays(
            kept(self.entity_ids, keep_e), kept(self.entity_names, keep_e),
            kept(self.relation_ids, keep_r), kept(self.relation_texts, keep_r),
            renumber_e[subjects], renumber_e[objects], kept(self.passage_ids, keep_p),
            np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
            renumber_p[index[links]], [self.doc_ids[d] for d in used.tolist()],
            renumber_d[docs])
        return graph, keep

    # --- columns -----------------------------------------------------------------------------

    @property
    def subjects(self) -> np.ndarray:
        """Subject entity index of every relation (read-only view)."""
        return self._subjects.values

    @property
    def objects(self) -> np.ndarray:
        """Object entity index of every relation (read-only view)."""
        return self._objects.values

    def passage_indices(self, relation: int) -> np.ndarray:
        """Indices (into `passage_ids`) of the passages relation `relation` came from."""
        changed = self._p_changed.get(relation)
        if changed is not None:
            return changed
        indptr = self._p_indptr.values
        return self._p_index.values[indptr[relation]:indptr[relation + 1]]

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
            self._incidence = matrix
            self._incidence_t = matrix.T.tocsr()
        return self._incidence

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
            rels = self.relations_of(np.array([entity]))
            if self._p_changed:
                picked = [self.passage_indices(r) for r in rels.tolist()]
                flat = np.concatenate(picked) if picked else np.zeros(0, dtype=np.int64)
            else:
                flat = csr_rows(self._p_indptr.values, self._p_index.values, rels)
            found = frozenset(self.passage_ids[i] for i in np.unique(flat).tolist())
            self._entity_passages[entity] = found
        return found

    def expand(self, seed_entities: list[int], seed_relations: list[int], degree: int) -> Expansion:
        """Candidate relations within `degree` of the seeds (README: expansion), walking outward."""
        if degree < 1:
            raise UsageError(f"degree must be >= 1, got {degree}")
        marked: list[tuple[np.ndarray, int]] = []  # (relations, the hop they were reached at)
        ents = np.unique(np.asarray(seed_entities, dtype=np.int64))
        rels = np.unique(np.asarray(seed_relations, dtype=np.int64))
        marked.append((rels, 0))
        # Entity side: (A·Aᵀ)^d · A  == relations of entities d entity-hops out.
        for hop in range(1, degree + 1):
            touched = self.relations_of(ents)
            marked.append((touched, hop))
            ents = self.entities_of(touched)
        from_entities = self.relations_of(ents)
        marked.append((from_entities, degree + 1))
        # Relation side: (Aᵀ·A)^d  == relations d shared-entity steps from the seeds.
        for hop in range(1, degree + 1):
            rels = self.relations_of(self.entities_of(rels))
            marked.append((rels, hop))
        candidates = sorted_unique(np.concatenate([from_entities, rels]),
                                    len(self.relation_ids))
        return Expansion(candidates, marked, len(self.relation_ids))
