"""The LLM client: chat completions from any OpenAI-compatible server, with retries and a cache.

Only `client` imports the OpenAI SDK: chat models, and the /embeddings endpoint used by
`hopgraph.embed.remote`. Works with OpenAI, Ollama, vLLM and llama.cpp
(anything serving /v1/chat/completions). Replies are cached on disk in SQLite, keyed by
(model, messages, json_mode, temperature), so a repeated call makes no request. Streamed
answers are cached too, once the stream has finished: a repeat replays the text as one chunk.
"""

from __future__ import annotations

from hopgraph.config import LLMSettings
from hopgraph.errors import LLMError
from hopgraph.llm.client import EmbeddingClient, EmbeddingTimeout, LLMClient
from hopgraph.llm.replies import Completion, Usage, parse_json_reply

__all__ = ["Completion", "EmbeddingClient", "EmbeddingTimeout", "LLMClient", "LLMError",
           "LLMSettings", "Usage", "parse_json_reply"]
