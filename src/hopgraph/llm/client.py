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


def sdk() -> ModuleType:
    """The OpenAI SDK, imported on first use: importing it is slow, and offline runs never
    need it (benchmarks/RESULTS.md, "Figures moved from code comments")."""
    import openai

    return openai


def _retry_reason(exc: Exception) -> str | None:
    """Why `exc` is worth retrying (timeouts, connection errors, 408/429/5xx), else None."""
    openai = sdk()
    if isinstance(exc, openai.APITimeoutError):
        return "request timed out"
    if isinstance(exc, openai.APIConnectionError):
        return "could not connect"
    if isinstance(exc, openai.APIStatusError) and (
        exc.status_code in (408, 429) or exc.status_code >= 500
    ):
        return f"HTTP {exc.status_code}"
    return None


def _timed_out(exc: Exception) -> bool:
    """Whether `exc` says no reply came in time: our timeout, or a 408 / 504 from the server
    or a proxy in front of it (which gave up waiting on the server)."""
    openai = sdk()
    return isinstance(exc, openai.APITimeoutError) or (
        isinstance(exc, openai.APIStatusError) and exc.status_code in (408, 504))


def _retry_after(exc: Exception) -> float:
    """Seconds the server asked us to wait (a numeric Retry-After header), else 0."""
    response = getattr(exc, "response", None)
    try:
        return float(response.headers.get("retry-after", 0)) if response is not None else 0.0
    except ValueError:  # an HTTP date: rare from LLM servers; our own backoff applies
        return 0.0


class GaveUp(Exception):
    """A call failed for good: `detail` says why; `timed_out` when no reply came in time
    and timeouts are not retried, `exhausted` when every retry was spent. The SDK's error is
    its __cause__."""

    def __init__(self, detail: str, timed_out: bool = False, exhausted: bool = False) -> None:
        super().__init__(detail)
        self.detail, self.timed_out, self.exhausted = detail, timed_out, exhausted


def retried(call: Callable[[], _T], label: str, retries: int, base_delay: float,
             max_delay: float, count: Callable[[], None], retry_timeouts: bool = True) -> _T:
    """`call()`, again up to `retries` times on 429, 5xx, timeouts and lost connections, after
    an exponential backoff plus jitter (longer when a numeric Retry-After asks so); `count`
    is told of each attempt. A failure for good is a GaveUp; an LLMError passes as it is.
    Without `retry_timeouts`, a timeout is a GaveUp at once (the caller sends less)."""
    for attempt in range(1, retries + 2):
        count()
        try:
            return call()
        except LLMError:
            raise
        except Exception as exc:  # the SDK raises many types; all mean "no reply"
            reason = _retry_reason(exc)
            if reason is None:
                raise GaveUp(f"{type(exc).__name__}: {exc}") from exc
            if not retry_timeouts and _timed_out(exc):
                raise GaveUp(reason, timed_out=True) from exc
            if attempt > retries:
                raise GaveUp(f"{reason} ({attempt} attempts)", exhausted=True) from exc
            backoff = base_delay * 2 ** (attempt - 1)
            delay = min(max_delay, max(backoff, _retry_after(exc)))
            delay += random.uniform(0, base_delay)
            log.warning("%s: %s; retry %d/%d in %.2fs", label, reason, attempt, retries, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")  # the loop always returns or raises


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
        self._client = sdk().OpenAI(
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
        s = self.settings
        try:
            return retried(call, f"{what} to {s.model}", s.max_retries, s.retry_base_delay,
                            s.retry_max_delay, lambda: self.usage.add(requests=1))
        except LLMError as exc:
            raise self._error(what, str(exc)) from exc
        except GaveUp as exc:
            raise self._error(what, exc.detail) from exc.__cause__

    def _error(self, what: str, detail: str) -> LLMError:
        return LLMError(f"{what} with model {self.settings.model!r} at {self.base_url} failed: "
                        f"{detail}",
                        fix="check HOPGRAPH_LLM_MODEL, HOPGRAPH_LLM_BASE_URL, OPENAI_API_KEY")


class EmbeddingTimeout(LLMError):
    """An embeddings request got no reply in time. It is not sent again as it was: the
    server may still be computing it, and a smaller batch may fit (`embed.remote`)."""


class EmbeddingClient:
    """Vectors from any OpenAI-compatible /embeddings endpoint (OpenAI, Ollama, vLLM...).

    A request is sent again up to `max_retries` times after a 429, a 5xx or a lost
    connection; one that times out (or gets a 408 / 504) raises EmbeddingTimeout at once.
    """

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 3, retry_base_delay: float = 0.5,
                 retry_max_delay: float = 30.0) -> None:
        self.model = model
        self.max_retries = max_retries
        self.retry_delays = (retry_base_delay, retry_max_delay)
        self.requests = 0  # HTTP requests sent, retries included
        # Retries are ours (see retried): the SDK's own would repeat timed-out batches.
        self._client = sdk().OpenAI(
            base_url=base_url, api_key=api_key or "unset", timeout=timeout, max_retries=0,
        )
        self.base_url = str(self._client.base_url).rstrip("/")

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One batch: the endpoint's vector for each text, in the order of `texts`."""

        def call() -> list[Any]:
            reply = self._client.embeddings.create(model=self.model, input=texts)
            return sorted(reply.data, key=lambda item: getattr(item, "index", 0) or 0)

        try:
            data = retried(call, f"embeddings from {self.model}", self.max_retries,
                            *self.retry_delays, self._count, retry_timeouts=False)
        except GaveUp as exc:
            fix = ("check HOPGRAPH_EMBED_BASE_URL and OPENAI_API_KEY" if not exc.exhausted else
                   f"the endpoint failed {self.max_retries + 1} times in a row: check it, or "
                   f"raise HOPGRAPH_EMBED_RETRIES (now {self.max_retries})")
            kind = EmbeddingTimeout if exc.timed_out else LLMError
            raise kind(f"embedding request with model {self.model!r} failed: {exc.detail}",
                       where=self.base_url, fix=fix) from exc.__cause__
        if len(data) != len(texts):
            raise LLMError(f"the endpoint sent {len(data)} vectors for {len(texts)} texts",
                           where=self.base_url, fix="check HOPGRAPH_EMBED_BASE_URL: is it an "
                           "OpenAI-compatible /embeddings endpoint?")
        return [item.embedding for item in data]

    def _count(self) -> None:
        self.requests += 1

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()
