"""The reference for graph expansion: whole-graph adjacency matrices (`KnowledgeGraph.expand`
must give exactly these candidates; tests and benchmarks/scale.py compare the two)."""

from __future__ import annotations

import numpy as np
from scipy import sparse


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


def _binary(matrix: sparse.csr_matrix) -> sparse.csr_matrix:
    binary = sparse.csr_matrix(matrix)
    binary.data[:] = 1.0  # keep only the pattern; counts would overflow at high degree
    return binary
