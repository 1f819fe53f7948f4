"""The in-memory knowledge graph: entity–relation incidence and k-degree expansion.

Built from the stored relations when a graph is opened. Expansion walks outward from the
seeds through the sparse incidence matrix, so its cost follows the subgraph it touches; it
yields exactly the candidate set of the matrix-power formulation (see `MatrixPowers`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from hopgraph.errors import UsageError


@dataclass
class RelationInfo:
    """A stored relation as the graph keeps it."""

    id: str
    subject: int  # entity index
    object: int  # entity index
    text: str
    passage_ids: list[str]


@dataclass
class Expansion:
    """Candidate relations around the seeds, with the hop at which each was reached."""

    relations: np.ndarray  # relation indices, sorted
    hops: dict[int, int] = field(default_factory=dict)


class KnowledgeGraph:
    """Entities and relations of one graph, with the sparse incidence matrix between them."""

    def __init__(self) -> None:
        self.entity_ids: list[str] = []
        self.entity_names: list[str] = []
        self.entity_index: dict[str, int] = {}
        self.relations: list[RelationInfo] = []
        self.relation_index: dict[str, int] = {}
        self._incidence: sparse.csr_matrix | None = None
        self._incidence_t: sparse.csr_matrix | None = None
        self._entity_passages: dict[int, frozenset[str]] = {}

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

    def add_relation(
        self, relation_id: str, subject_id: str, object_id: str, text: str,
        passage_ids: list[str],
    ) -> int:
        """Register a relation or update its passages; returns its index."""
        index = self.relation_index.get(relation_id)
        self._entity_passages.clear()
        if index is not None:
            self.relations[index].passage_ids = list(passage_ids)
            return index
        subject = self.add_entity(subject_id, subject_id)
        obj = self.add_entity(object_id, object_id)
        index = len(self.relations)
        self.relation_index[relation_id] = index
        self.relations.append(RelationInfo(relation_id, subject, obj, text, list(passage_ids)))
        self._incidence = self._incidence_t = None
        return index

    def set_entity_name(self, entity_id: str, name: str) -> None:
        """Give an entity its display name (loaded separately from its relations)."""
        self.entity_names[self.add_entity(entity_id, name)] = name

    @property
    def incidence(self) -> sparse.csr_matrix:
        """Binary entities × relations matrix A (A[e, r] = 1 when e is r's subject or object)."""
        if self._incidence is None:
            n_rel = len(self.relations)
            rows = np.fromiter(
                (e for r in self.relations for e in (r.subject, r.object)), dtype=np.int64,
                count=2 * n_rel,
            )
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
        return _neighbours(self.incidence, entities)

    def entities_of(self, relations: np.ndarray) -> np.ndarray:
        """Subjects and objects of `relations` (sorted, unique)."""
        return _neighbours(self.incidence_t, relations)

    def passages_of_entity(self, entity: int) -> frozenset[str]:
        """Ids of the passages any relation of `entity` came from (cached)."""
        found = self._entity_passages.get(entity)
        if found is None:
            rels = self.relations_of(np.array([entity]))
            found = frozenset(p for r in rels.tolist() for p in self.relations[r].passage_ids)
            self._entity_passages[entity] = found
        return found

    def expand(self, seed_entities: list[int], seed_relations: list[int], degree: int) -> Expansion:
        """Candidate relations within `degree` of the seeds (README: expansion), walking outward."""
        if degree < 1:
            raise UsageError(f"degree must be >= 1, got {degree}")
        hops: dict[int, int] = {}

        def mark(relations: np.ndarray, hop: int) -> None:
            for r in relations.tolist():
                hops.setdefault(r, hop)

        ents = np.unique(np.asarray(seed_entities, dtype=np.int64))
        rels = np.unique(np.asarray(seed_relations, dtype=np.int64))
        mark(rels, 0)
        # Entity side: (A·Aᵀ)^d · A  == relations of entities d entity-hops out.
        for hop in range(1, degree + 1):
            touched = self.relations_of(ents)
            mark(touched, hop)
            ents = self.entities_of(touched)
        from_entities = self.relations_of(ents)
        mark(from_entities, degree + 1)
        # Relation side: (Aᵀ·A)^d  == relations d shared-entity steps from the seeds.
        for hop in range(1, degree + 1):
            rels = self.relations_of(self.entities_of(rels))
            mark(rels, hop)
        candidates = np.union1d(from_entities, rels)
        return Expansion(relations=candidates, hops={r: hops[r] for r in candidates.tolist()})


def _neighbours(matrix: sparse.csr_matrix, rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size == 0:
        return np.zeros(0, dtype=np.int64)
    starts, ends = matrix.indptr[rows], matrix.indptr[rows + 1]
    picked = [matrix.indices[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
    return np.unique(np.concatenate(picked)).astype(np.int64)


class MatrixPowers:
    """Reference: expansion with whole-graph adjacency matrices. Slow; for tests and checks.

    Candidates are the nonzero columns of the seed rows of (A·Aᵀ)^d · A and (Aᵀ·A)^d. The two
    adjacency matrices are built once; only the seed rows of each power are formed (row vector
    times matrix, d times): the same numbers, without a dense power of a hub-heavy graph.
    """

    def __init__(self, incidence: sparse.csr_matrix) -> None:
        self.a = _binary(incidence.astype(np.float64))
        self.entity_adj = _binary(self.a @ self.a.T)
        self.relation_adj = _binary(self.a.T @ self.a)

    def expand(self, seed_entities: list[int], seed_relations: list[int], degree: int
               ) -> np.ndarray:
        """Candidate relation indices within `degree` of the seeds, sorted."""
        found: set[int] = set()
        if seed_entities:
            rows = _binary(self.entity_adj[seed_entities])
            for _ in range(degree - 1):
                rows = _binary(rows @ self.entity_adj)
            found.update(_binary(rows @ self.a).nonzero()[1].tolist())
        if seed_relations:
            rows = _binary(self.relation_adj[seed_relations])
            for _ in range(degree - 1):
                rows = _binary(rows @ self.relation_adj)
            found.update(rows.nonzero()[1].tolist())
        return np.array(sorted(found), dtype=np.int64)


def expand_by_powers(
    incidence: sparse.csr_matrix, seed_entities: list[int], seed_relations: list[int], degree: int
) -> np.ndarray:
    """`MatrixPowers(incidence).expand(...)`, for one question."""
    return MatrixPowers(incidence).expand(seed_entities, seed_relations, degree)


def _binary(matrix: sparse.spmatrix) -> sparse.csr_matrix:
    matrix = sparse.csr_matrix(matrix)
    matrix.data[:] = 1.0  # keep only the pattern; counts would overflow at high degree
    return matrix
