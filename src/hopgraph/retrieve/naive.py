"""The comparison baselines: dense passage search with the question (`naive`), plus a small
BM25 term (`naive_lexical`)."""

from __future__ import annotations

import numpy as np

from hopgraph.records import PassageHit, Retrieval
from hopgraph.retrieve import rank
from hopgraph.retrieve.context import Clock, Context


def run_naive(ctx: Context, question: str, qvec: np.ndarray, top_k: int, clock: Clock,
              lexical: bool = False) -> Retrieval:
    """The `top_k` passages closest to the question (with BM25 when `lexical`)."""
    pool = max(top_k, rank.POOL)
    with clock.stage("search_passages"):
        scores = ctx.search.passages(qvec, pool if lexical else top_k)[0]
    if lexical:
        with clock.stage("search_lexical"):
            bm25 = ctx.search.lexical([question], pool)[0]
        scores = rank.with_lexical(scores, bm25)
    best = sorted(scores.items(), key=lambda kv: -kv[1])[:top_k]
    method = "naive_lexical" if lexical else "naive"
    return Retrieval(question, method, [PassageHit(pid, "", s) for pid, s in best])
