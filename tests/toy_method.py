"""A toy retrieval method, as a plugin would write one: one module, one function.

BM25 alone (no vectors): enough to show that a method registered with one line is offered by
the CLI, the REST schema, `eval` and `hopgraph.METHODS` (tests/test_retrieve_registry.py).
"""

from __future__ import annotations

import numpy as np

from hopgraph import PassageHit, Query, Retrieval
from hopgraph.retrieve.context import Clock, Context


def run_toy(ctx: Context, query: Query, qvec: np.ndarray, clock: Clock) -> Retrieval:
    """The `top_k` passages by BM25 score alone."""
    with clock.stage("search_lexical"):
        hits = ctx.search.lexical([query.question], query.top_k)[0]
    return Retrieval(query.question, "toy", [PassageHit(h.id, "", h.score) for h in hits])
