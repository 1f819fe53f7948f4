"""What a chat reply holds and costs: one completion, running usage totals, its JSON object."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class Completion:
    """One reply: its text, the tokens it cost (0 when cached) and whether it came from cache."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False


@dataclass
class Usage:
    """Running totals for one client; safe to update from many threads."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0  # HTTP requests sent, retries included
    cache_hits: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, prompt_tokens: int = 0, completion_tokens: int = 0, requests: int = 0,
            cache_hits: int = 0) -> None:
        """Add to the totals atomically."""
        with self._lock:
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            self.requests += requests
            self.cache_hits += cache_hits

    def as_dict(self) -> dict[str, int]:
        """The totals as a plain dict (a consistent snapshot)."""
        with self._lock:
            return {f.name: getattr(self, f.name) for f in fields(self) if f.name[0] != "_"}


def parse_json_reply(text: str) -> dict[str, Any] | None:
    """The JSON object in an LLM reply: bare, in ```json fences, or embedded in prose."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None
