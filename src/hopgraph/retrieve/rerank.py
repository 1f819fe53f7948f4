"""The optional rerank stage: after a method's candidates are found and their texts read, a
reranker scores each (question, passage) pair and the best `top_k` are kept, in its order.

A reranker is a local cross-encoder folder (`embed.cross`) or a `/rerank` endpoint
(`llm.rerank`), named by `Settings.rerank`; the method is asked for `Settings.rerank_top_n`
candidates (or the query's `top_k`, if more). Every path that retrieves goes through it: the
retriever pipeline calls it (`pipeline.Retriever.retrieve`).
"""

from __future__ import annotations

from typing import Protocol

from hopgraph.config import Settings
from hopgraph.records import Retrieval


class Reranker(Protocol):
    """Scores (question, passage) pairs; `name` says which model."""

    name: str

    def score(self, query: str, texts: list[str]) -> list[float]: ...


def make_reranker(settings: Settings) -> Reranker | None:
    """The reranker `settings.rerank` names: None (off), the URL of a /rerank endpoint, or a
    cross-encoder folder's path."""
    spec = settings.rerank
    if spec is None:
        return None
    if spec.startswith(("http://", "https://")):
        from hopgraph.llm.rerank import RerankEndpoint

        return RerankEndpoint(spec, settings.rerank_model, settings.rerank_api_key,
                              settings.rerank_timeout, settings.rerank_batch)
    from hopgraph.embed.cross import CrossEncoderReranker

    return CrossEncoderReranker(spec, settings.rerank_batch)


def reorder(reranker: Reranker, result: Retrieval, top_k: int) -> None:
    """Put the result's passages in the reranker's order (ties: as they were), keep `top_k`;
    each passage's score becomes the reranker's, and a note says what ordered them."""
    passages = result.passages
    if not passages:
        return
    scores = reranker.score(result.question, [p.text for p in passages])
    order = sorted(range(len(passages)), key=lambda i: (-scores[i], i))
    for i in order:
        passages[i].score = scores[i]
    result.passages = [passages[i] for i in order[:top_k]]
    result.notes.append(f"reranked by {reranker.name}: the best {min(top_k, len(passages))} "
                        f"of {len(passages)} candidates")
