"""The OpenAI-compatible HTTP clients: chat completions (retried, cached) and embeddings.

The only module that imports the OpenAI SDK, and only on first use.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Any, TypeVar

from hopgraph.config import LLMSettings
from hopgraph.errors import LLMError
from hopgraph.llm.cache import ReplyCache
from hopgraph.llm.replies import Completion, Usage

log = logging.getLogger(__name__)

_T = TypeVar("_T")
Messages = list[dict[str, Any]]


def _sdk() -> ModuleType:
    """The OpenAI SDK, imported on first use: it costs ~0.5 s, and offline runs never need it."""
    import openai

    return openai


def _retry_reason(exc: Exception) -> str | None:
    """Why `exc` is worth retrying (timeouts, connection errors, 408/429/5xx), else None."""
    openai = _sdk()
    if isinstance(exc, openai.APITimeoutError):
        return "request timed out"
    if isinstance(exc, openai.APIConnectionError):
        return "could not connect"
    if isinstance(exc, openai.APIStatusError) and (
        exc.status_code in (408, 429) or exc.status_code >= 500
    ):
        return f"HTTP {exc.status_code}"
    return None


def _retry_after(exc: Exception) -> float:
    """Seconds the server asked us to wait (a numeric Retry-After header), else 0."""
    response = getattr(exc, "response", None)
    try:
        return float(response.headers.get("retry-after", 0)) if response is not None else 0.0
    except ValueError:  # an HTTP date: rare from LLM servers; our own backoff applies
        return 0.0


class LLMClient:
    """Chat completions with explicit retries, an on-disk cache and usage totals."""

    def __init__(self, settings: LLMSettings) -> None:
        if not settings.configured:
            raise LLMError("no LLM model configured",
                           fix="set HOPGRAPH_LLM_MODEL (and HOPGRAPH_LLM_BASE_URL for a local "
                           "server such as Ollama or vLLM), or pass --llm")
        self.settings = settings
        self.usage = Usage()
        # Retries are ours (see _with_retries), so the SDK must not retry on its own.
        self._client = _sdk().OpenAI(
            base_url=settings.base_url, api_key=settings.api_key or "unset",
            timeout=settings.timeout, max_retries=0,
        )
        self.base_url = str(self._client.base_url).rstrip("/")
        self._cache = ReplyCache(settings.cache_path) if settings.cache_path else None

    def close(self) -> None:
        """Close the HTTP client and the cache file."""
        self._client.close()
        if self._cache is not None:
            self._cache.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def cache_key(self, messages: Messages, json_mode: bool = False) -> str:
        """The cache key of a request: sha256 of model, messages, json_mode and temperature."""
        payload = [self.settings.model, messages, json_mode, self.settings.temperature]
        raw = json.dumps(payload, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()

    def complete(self, messages: Messages, json_mode: bool = False) -> Completion:
        """One chat completion, from the cache when this exact request was answered before."""
        key = self.cache_key(messages, json_mode)
        cached = self._cached(key)
        if cached is not None:
            return Completion(cached, cached=True)
        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if json_mode else {}

        def call() -> Completion:
            reply = self._client.chat.completions.create(
                model=self.settings.model, messages=messages,
                temperature=self.settings.temperature, **extra,
            )
            if not reply.choices:
                raise LLMError("the reply has no choices")
            usage = reply.usage
            return Completion(reply.choices[0].message.content or "",
                              usage.prompt_tokens if usage else 0,
                              usage.completion_tokens if usage else 0)

        result = self._with_retries("chat completion", call)
        self.usage.add(result.prompt_tokens, result.completion_tokens)
        if self._cache is not None:
            self._cache.put(key, self.settings.model or "", result.text)
        return result

    def complete_many(self, requests: list[Messages], json_mode: bool = False
                      ) -> list[Completion]:
        """Completions for many requests, in order, at most `settings.concurrency` at a time."""
        if not requests:
            return []
        workers = min(self.settings.concurrency, len(requests))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hopgraph-llm") as pool:
            return list(pool.map(lambda m: self.complete(m, json_mode), requests))

    def stream(self, messages: Messages) -> Iterator[str]:
        """Yield the reply's text as it arrives; cached once complete (replayed as one chunk).

        Failures before the first chunk are retried like `complete`; a failure mid-stream
        raises LLMError at once, since the caller has already seen part of the text.
        """
        key = self.cache_key(messages)
        cached = self._cached(key)
        if cached is not None:
            yield cached
            return

        def open_stream() -> tuple[Any, Iterator[Any], Any]:
            response = self._client.chat.completions.create(
                model=self.settings.model, messages=messages,
                temperature=self.settings.temperature, stream=True,
                stream_options={"include_usage": True},
            )
            chunks = iter(response)
            return response, chunks, next(chunks, None)  # first chunk proves the stream is up

        response, chunks, chunk = self._with_retries("streamed chat completion", open_stream)
        parts: list[str] = []
        try:
            while chunk is not None:
                if chunk.usage is not None:
                    self.usage.add(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
                piece = chunk.choices[0].delta.content if chunk.choices else None
                if piece:
                    parts.append(piece)
                    yield piece
                try:
                    chunk = next(chunks, None)
                except Exception as exc:  # SDK or transport error, mid-stream: not retryable
                    raise self._error("streamed chat completion",
                                      f"stream broke off: {exc}") from exc
        finally:
            response.close()
        if self._cache is not None:
            self._cache.put(key, self.settings.model or "", "".join(parts))

    def _cached(self, key: str) -> str | None:
        text = self._cache.get(key) if self._cache is not None else None
        if text is not None:
            self.usage.add(cache_hits=1)
            log.debug("LLM cache hit %s", key[:12])
        return text

    def _with_retries(self, what: str, call: Callable[[], _T]) -> _T:
        """Run `call`, retrying retryable failures with exponential backoff plus jitter."""
        attempts = self.settings.max_retries + 1
        for attempt in range(1, attempts + 1):
            self.usage.add(requests=1)
            try:
                return call()
            except LLMError as exc:
                raise self._error(what, str(exc)) from exc
            except Exception as exc:  # the SDK raises many types; all mean "no reply"
                reason = _retry_reason(exc)
                if reason is None:
                    raise self._error(what, f"{type(exc).__name__}: {exc}") from exc
                if attempt == attempts:
                    raise self._error(what, f"{reason} ({attempts} attempts)") from exc
                backoff = self.settings.retry_base_delay * 2 ** (attempt - 1)
                delay = min(self.settings.retry_max_delay, max(backoff, _retry_after(exc)))
                delay += random.uniform(0, self.settings.retry_base_delay)
                log.warning("%s to %s: %s; retry %d/%d in %.2fs", what, self.settings.model,
                            reason, attempt, attempts - 1, delay)
                time.sleep(delay)
        raise AssertionError("unreachable")  # the loop always returns or raises

    def _error(self, what: str, detail: str) -> LLMError:
        return LLMError(f"{what} with model {self.settings.model!r} at {self.base_url} failed: "
                        f"{detail}",
                        fix="check HOPGRAPH_LLM_MODEL, HOPGRAPH_LLM_BASE_URL, OPENAI_API_KEY")


class EmbeddingClient:
    """Vectors from any OpenAI-compatible /embeddings endpoint (OpenAI, Ollama, vLLM...)."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 3) -> None:
        self.model = model
        self._client = _sdk().OpenAI(
            base_url=base_url, api_key=api_key or "unset",
            timeout=timeout, max_retries=max_retries,
        )
        self.base_url = str(self._client.base_url).rstrip("/")

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One request: the endpoint's vector for each text, in order."""
        try:
            reply = self._client.embeddings.create(model=self.model, input=texts)
        except Exception as exc:  # the SDK raises many types; all mean "no vectors"
            raise LLMError(f"embedding request with model {self.model!r} failed: {exc}",
                           where=self.base_url,
                           fix="check HOPGRAPH_EMBED_BASE_URL and OPENAI_API_KEY") from exc
        return [item.embedding for item in reply.data]

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()
