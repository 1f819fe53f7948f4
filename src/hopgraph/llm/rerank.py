"""A rerank endpoint: the `/rerank` shape Cohere, Jina, vLLM, Infinity and
text-embeddings-inference serve, called through the OpenAI SDK's HTTP client (its retries
and errors are those of `client`).

A request sends the question and a batch of passages (as `documents`, and as `texts` for
text-embeddings-inference) and reads one score per passage from either reply shape:
`{"results": [{"index", "relevance_score"}]}` (Cohere, Jina) or `[{"index", "score"}]`
(text-embeddings-inference).
"""

from __future__ import annotations

import logging
from typing import Any

from hopgraph.errors import LLMError
from hopgraph.llm.client import GaveUp, retried, sdk

log = logging.getLogger(__name__)

RETRIES = 2  # again after a 429, a 5xx, a timeout or a lost connection


def scores_of(reply: Any, count: int, url: str) -> list[float]:
    """One score per passage of a batch of `count`, from a reply of either shape; LLMError
    naming the endpoint when it is neither or leaves a passage out."""
    items = reply.get("results", reply.get("data")) if isinstance(reply, dict) else reply
    found: dict[int, float] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        score = item.get("relevance_score", item.get("score"))
        index = item.get("index")
        if isinstance(index, int) and isinstance(score, int | float) and 0 <= index < count:
            found[index] = float(score)
    if len(found) != count:
        raise LLMError(f"the rerank endpoint {url} scored {len(found)} of {count} passages",
                       fix="check that it is a /rerank endpoint (Cohere, Jina or "
                           "text-embeddings-inference shape) and that it returns every "
                           "passage (top_n)")
    return [found[i] for i in range(count)]


class RerankEndpoint:
    """Scores (question, passage) pairs at a `/rerank` URL, `batch` passages per request,
    `timeout` seconds each (see the module docstring)."""

    def __init__(self, url: str, model: str | None = None, api_key: str | None = None,
                 timeout: float = 30.0, batch: int = 32) -> None:
        self.url, self.model, self.batch, self.timeout = url.rstrip("/"), model, batch, timeout
        base, _, path = self.url.rpartition("/")
        self._path = "/" + path
        self._client = sdk().OpenAI(base_url=base, api_key=api_key or "unset",
                                     timeout=timeout, max_retries=0)
        self.name = f"{self.url}" + (f" ({model})" if model else "")
        self.requests = 0

    def _count(self) -> None:
        self.requests += 1

    def score(self, query: str, texts: list[str]) -> list[float]:
        """One relevance score per text (higher: more relevant), in the texts' order."""
        scores: list[float] = []
        for start in range(0, len(texts), self.batch):
            chunk = texts[start:start + self.batch]
            body: dict[str, Any] = {"query": query, "documents": chunk, "texts": chunk,
                                    "top_n": len(chunk), "return_documents": False}
            if self.model:
                body["model"] = self.model

            def send(body: dict[str, Any] = body) -> Any:
                return self._client.post(self._path, body=body, cast_to=object)

            try:
                reply = retried(send, f"rerank at {self.url}", RETRIES, 0.5, 10.0, self._count)
            except GaveUp as exc:
                raise LLMError(f"the rerank endpoint {self.url} failed: {exc.detail}",
                               fix="check the endpoint, or raise HOPGRAPH_RERANK_TIMEOUT "
                                   f"(now {self.timeout:g} s) or lower HOPGRAPH_RERANK_BATCH "
                                   f"(now {self.batch})") from exc
            scores.extend(scores_of(reply, len(chunk), self.url))
        return scores
