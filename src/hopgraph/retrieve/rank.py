"""Ranking policies shared by the retrieval methods: how scores are fused and chosen."""

from __future__ import annotations

from hopgraph.records import Hit

POOL = 30  # passages each search contributes before fusion
ENTITY_TOP_K = 3  # graph entities per query entity (entity search, seed method)
ENTITY_MIN_SCORE = 0.8  # cosine below this is a different entity, not a spelling of it
RELATION_TOP_K = 10  # relations per question (relation search, seed method)
LEXICAL_WEIGHT = 0.05  # BM25 share, after dividing by the query's best BM25 score


def with_lexical(dense: dict[str, float], bm25: list[Hit],
                 weight: float | None = None) -> dict[str, float]:
    """Dense cosine plus `weight` (default LEXICAL_WEIGHT, read at call time) × BM25 scaled
    by the query's best BM25 score.

    Only passages the dense search found are scored: at this weight a passage with no dense
    evidence could never reach the top, so fetching its vector would be wasted work.
    """
    weight = LEXICAL_WEIGHT if weight is None else weight
    top = max((h.score for h in bm25), default=0.0)
    if top <= 0 or weight == 0:
        return dict(dense)
    lexical = {h.id: h.score / top for h in bm25}
    return {pid: score + weight * lexical.get(pid, 0.0) for pid, score in dense.items()}
