"""Embeddings from any OpenAI-compatible /embeddings endpoint, through `hopgraph.llm`.

A request that times out is never sent again as it was: a slow server (a CPU model behind
/v1/embeddings) goes on computing a batch its client gave up on, so repeating it only piles
up work. Its batch is halved instead, and the halves are sent, down to one text.
"""

from __future__ import annotations

import logging

import numpy as np

from hopgraph.config import (
    DEFAULT_EMBED_BATCH,
    DEFAULT_EMBED_RETRIES,
    DEFAULT_EMBED_TIMEOUT,
    embed_limits,
)
from hopgraph.embed.base import unit
from hopgraph.errors import EmbedderError, LLMError
from hopgraph.llm import EmbeddingClient, EmbeddingTimeout

log = logging.getLogger(__name__)


class OpenAIEmbedder:
    """Any OpenAI-compatible /embeddings endpoint (OpenAI, Ollama, vLLM...).

    Texts go `batch_size` to a request, each with `timeout` seconds for its reply; a 429, a
    5xx or a lost connection is retried `retries` times with backoff. A batch that times out
    is halved, and later requests keep the smaller size (`batch_now`): a server too slow for
    a batch once is as slow for the next one, and would still be busy with the one given up.
    """

    def __init__(
        self, model: str, base_url: str | None = None, api_key: str | None = None,
        batch_size: int = DEFAULT_EMBED_BATCH, timeout: float = DEFAULT_EMBED_TIMEOUT,
        retries: int = DEFAULT_EMBED_RETRIES, retry_delay: float = 0.5,
    ) -> None:
        self.timeout, self.batch_size, self.retries = embed_limits(timeout, batch_size, retries)
        self.name = f"openai:{model}"
        self.model = model
        self.batch_now = self.batch_size  # texts per request from now on (halved on timeouts)
        self._client = EmbeddingClient(model, base_url=base_url, api_key=api_key,
                                       timeout=self.timeout, max_retries=self.retries,
                                       retry_base_delay=retry_delay)
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        """The endpoint's vector size (asked once, with a probe text)."""
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    @property
    def requests(self) -> int:
        """HTTP requests sent so far, retries and timed-out ones included."""
        return self._client.requests

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length vectors for `texts`, in order, at most `batch_now` texts per request."""
        rows: list[list[float]] = []
        while len(rows) < len(texts):
            batch = texts[len(rows) : len(rows) + self.batch_now]
            try:
                rows.extend(self._client.embed(batch))
            except EmbeddingTimeout as exc:
                if len(batch) == 1:
                    raise self._too_slow(len(rows), len(texts)) from exc
                # the next request is this batch's first half, the one after its second
                self.batch_now = (len(batch) + 1) // 2
                log.warning("%s: %d texts got no reply within %g s (HOPGRAPH_EMBED_TIMEOUT); "
                            "sending %d per request from now on", self.name, len(batch),
                            self.timeout, self.batch_now)
            except LLMError as exc:
                raise EmbedderError(f"embedding request to {self.name} failed: {exc.what}",
                                    where=exc.where, fix=exc.fix) from exc
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        vectors = unit(np.array(rows, dtype=np.float32))
        self._dim = vectors.shape[1]
        return vectors

    def _too_slow(self, done: int, total: int) -> EmbedderError:
        """The error once even one text got no reply in time."""
        halved = (f"; timed-out batches were halved from {self.batch_size} texts down to 1"
                  if self.batch_size > 1 else "")
        return EmbedderError(
            f"embedding with {self.name} timed out: a request of 1 text got no reply within "
            f"{self.timeout:g} s{halved}; {done} of {total} texts were embedded",
            where=self._client.base_url,
            fix=f"raise HOPGRAPH_EMBED_TIMEOUT (--embed-timeout, now {self.timeout:g} s), or "
                f"lower HOPGRAPH_EMBED_BATCH (--embed-batch, now {self.batch_size}) so the "
                f"server is not left computing batches given up on")
