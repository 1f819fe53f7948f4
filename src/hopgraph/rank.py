"""Ranking policies shared by the retrieval methods: how scores are fused and chosen."""

from __future__ import annotations

from hopgraph.store import Hit

POOL = 30  # passages each search contributes before fusion
ENTITY_TOP_K = 3  # graph entities per query entity (SPEC step 4)
ENTITY_MIN_SCORE = 0.8  # cosine below this is a different entity, not a spelling of it
RELATION_TOP_K = 10  # relations per question (SPEC step 5)
LEXICAL_WEIGHT = 0.1  # BM25 share, after scaling BM25 to [0, 1] per query


def fuse_lexical(dense: dict[str, float], bm25: list[Hit],
                 weight: float = LEXICAL_WEIGHT) -> dict[str, float]:
    """Dense cosine plus `weight` × BM25 scaled by the query's best BM25 score."""
    fused = dict(dense)
    top = max((h.score for h in bm25), default=0.0)
    if top <= 0:
        return fused
    floor = min(dense.values(), default=0.0)  # a lexical-only hit gets the weakest dense score
    for h in bm25:
        fused[h.id] = fused.get(h.id, floor) + weight * h.score / top
    return fused
