"""The comparison baselines: dense passage search with the question (`naive`), plus a small
BM25 term (`naive_lexical`)."""

from __future__ import annotations

import numpy as np

from hopgraph.records import PassageHit, Retrieval
from hopgraph.retrieve import rank
from hopgraph.retrieve.context import Clock, Context
from hopgraph.retrieve.query import Query


def run_naive(ctx: Context, query: Query, qvec: np.ndarray, clock: Clock) -> Retrieval:
    """The `top_k` passages closest to the question."""
    with clock.stage("search_passages"):
        scores = ctx.search.passages(qvec, query.top_k)[0]
    return _best(query, "naive", scores)


def run_naive_lexical(ctx: Context, query: Query, qvec: np.ndarray, clock: Clock
                      ) -> Retrieval:
    """The `top_k` passages by cosine to the question plus a small BM25 term."""
    pool = max(query.top_k, rank.POOL)
    with clock.stage("search_passages"):
        dense = ctx.search.passages(qvec, pool)[0]
    with clock.stage("search_lexical"):
        bm25 = ctx.search.lexical([query.question], pool)[0]
    return _best(query, "naive_lexical", rank.with_lexical(dense, bm25))


def _best(query: Query, method: str, scores: dict[str, float]) -> Retrieval:
    best = sorted(scores.items(), key=lambda kv: -kv[1])[:query.top_k]
    return Retrieval(query.question, method, [PassageHit(pid, "", s) for pid, s in best])
