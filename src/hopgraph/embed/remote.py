"""Embeddings from any OpenAI-compatible /embeddings endpoint, through `hopgraph.llm`."""

from __future__ import annotations

import numpy as np

from hopgraph.embed.base import unit
from hopgraph.errors import EmbedderError, LLMError
from hopgraph.llm import EmbeddingClient


class OpenAIEmbedder:
    """Any OpenAI-compatible /embeddings endpoint (OpenAI, Ollama, vLLM...)."""

    def __init__(
        self, model: str, base_url: str | None = None, api_key: str | None = None,
        batch_size: int = 256, timeout: float = 60.0,
    ) -> None:
        self.name = f"openai:{model}"
        self.model = model
        self.batch_size = batch_size
        self._client = EmbeddingClient(model, base_url=base_url, api_key=api_key,
                                       timeout=timeout)
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        """The endpoint's vector size (asked once, with a probe text)."""
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length vectors for `texts`, `batch_size` texts per request."""
        out: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            try:
                rows = self._client.embed(batch)
            except LLMError as exc:
                raise EmbedderError(f"embedding request to {self.name} failed: {exc.what}",
                                    where=exc.where, fix=exc.fix) from exc
            out.append(np.array(rows, dtype=np.float32))
        if not out:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        vectors = unit(np.vstack(out))
        self._dim = vectors.shape[1]
        return vectors
