"""Retrieval: question → entities and relations → expansion → ranking → passages.

pipeline (embed, dispatch, timings), registry (the methods by name) and methods (the
built-in ones registered, one line each), context (shared steps), one module per method
(naive, seed, default, llm_method), the policies they use (bridge, rank, llm_steps) and what
they search with (link, search, mirror, lexical).
"""

from __future__ import annotations

from typing import Any

from hopgraph.retrieve import methods, registry
from hopgraph.retrieve.pipeline import Retriever
from hopgraph.retrieve.query import MAX_QUESTION_CHARS, Query

__all__ = ["MAX_QUESTION_CHARS", "METHODS", "OFFLINE_METHODS", "Query", "Retriever", "methods",
           "registry"]


def __getattr__(name: str) -> Any:
    """METHODS and OFFLINE_METHODS are read from the registry when asked for, so a method
    registered later (a plugin) is listed too."""
    if name == "METHODS":
        return registry.names()
    if name == "OFFLINE_METHODS":
        return registry.offline_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
