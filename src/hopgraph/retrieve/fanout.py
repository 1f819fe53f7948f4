"""Bounded graph steps: at most `Settings.fanout` relations of one entity ($HOPGRAPH_FANOUT)
are followed per step.

The default method scores every relation of the entities it steps through (the question's
own entities, the best bridge, its neighbours). A hub of a large graph has tens or hundreds
of thousands: at 1M relations, scoring them all cost more than the rest of the query.

An entity with no more relations than the cap is followed whole, exactly as without a cap.
Above it, the hub's relations kept are those among the question's `HUB_POOL` best
relations in the whole graph (one wider relation search, made once per question in a graph
with a hub, whose first 20 are also the question's candidate relations: `Steps.best`),
best first; the rest of the hub's relations fill the cap in graph order (the oldest
first), so the choice is deterministic. Why the pool is enough: a hub's relations propose
bridges by their question score (its rarity bonus is nil: a hub touches many passages),
and the best of them are among the question's best in the whole graph. What the cap costs
in recall is measured in benchmarks/RESULTS.md ("Bounded graph steps").
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hopgraph.graph import KnowledgeGraph

HUB_POOL = 200  # the question's best relations searched for when a hub is met


class Steps:
    """One question's graph steps: each entity's relations, capped at `cap` for hubs."""

    def __init__(self, graph: KnowledgeGraph, best: Callable[[int], dict[int, float]],
                 cap: int) -> None:
        """`best(n)`: the question's n best relations in the graph, with their scores;
        `cap`: relations followed per entity (0: all)."""
        self.graph = graph
        self.cap = cap
        self._best = best
        self._pool: np.ndarray | None = None  # the question's best relations, best first
        self._pool_scores: dict[int, float] | None = None  # the same, with their scores
        self.capped: list[int] = []  # hubs met, for the retrieval's notes

    def of(self, entities: list[int]) -> np.ndarray:
        """Relations of `entities` (sorted, unique), at most `cap` of each entity's."""
        if not entities:
            return np.zeros(0, dtype=np.int64)
        rows = np.array(entities, dtype=np.int64)
        matrix = self.graph.incidence
        degrees = matrix.indptr[rows + 1] - matrix.indptr[rows]
        if not self.cap or int(degrees.max()) <= self.cap:  # no hub: the graph's own step
            return self.graph.relations_of(rows)
        if not matrix.has_sorted_indices:
            matrix.sort_indices()
        parts = []
        for entity, degree in zip(rows.tolist(), degrees.tolist(), strict=True):
            rels = matrix.indices[matrix.indptr[entity]:matrix.indptr[entity + 1]]
            parts.append(rels if degree <= self.cap else self._chosen(entity, rels))
        return np.unique(np.concatenate(parts)).astype(np.int64)

    def _chosen(self, entity: int, rels: np.ndarray) -> np.ndarray:
        """A hub's `cap` relations (`rels`: all of them, sorted): those among the question's
        best, then the oldest. Costs the cap, not the hub's degree."""
        if entity not in self.capped:
            self.capped.append(entity)
        if self._pool is None:
            best = self._pooled()
            self._pool = np.fromiter(best, dtype=np.int64, count=len(best))
        at = np.minimum(np.searchsorted(rels, self._pool), len(rels) - 1)
        pooled = self._pool[rels[at] == self._pool][:self.cap]
        head = rels[:self.cap]  # enough to fill up to the cap once the pooled are skipped
        rest = head[~np.isin(head, pooled)][:self.cap - len(pooled)]
        return np.concatenate([pooled, rest]).astype(np.int64)

    def best(self, n: int) -> dict[int, float]:
        """The question's `n` best relations, best first. In a graph with a hub, the first
        `n` of the pool a hub's step needs, found with it in one search (with a server, a
        search less per question); else a search of its own."""
        if self.cap and n <= min(self.cap, HUB_POOL) and self.graph.max_degree > self.cap:
            return dict(list(self._pooled().items())[:n])
        return self._best(n)

    def _pooled(self) -> dict[int, float]:
        if self._pool_scores is None:
            self._pool_scores = self._best(min(self.cap, HUB_POOL))
        return self._pool_scores
