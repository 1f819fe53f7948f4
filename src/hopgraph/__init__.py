"""hopgraph: Graph RAG on Milvus, offline by default.

Everything a user needs is importable from here; `tests/test_public_api.py` pins this list,
so a name can't disappear or move without the test saying so.
"""

from typing import Any

from hopgraph.api import GraphRAG
from hopgraph.config import LLMSettings, Settings
from hopgraph.embed import Embedder
from hopgraph.errors import (
    EmbedderError,
    HopgraphError,
    InputError,
    LLMError,
    StoreError,
    UsageError,
)
from hopgraph.llm import LLMClient
from hopgraph.records import (
    Answer,
    IngestSummary,
    LoadReport,
    PassageHit,
    PassageRecord,
    Problem,
    RelationHit,
    Retrieval,
    Triplet,
)
from hopgraph.retrieve import registry
from hopgraph.retrieve.query import Query
from hopgraph.where import Where

__all__ = [
    "METHODS",
    "OFFLINE_METHODS",
    "Answer",
    "Embedder",
    "EmbedderError",
    "GraphRAG",
    "HopgraphError",
    "IngestSummary",
    "InputError",
    "LLMClient",
    "LLMError",
    "LLMSettings",
    "LoadReport",
    "PassageHit",
    "PassageRecord",
    "Problem",
    "Query",
    "RelationHit",
    "Retrieval",
    "Settings",
    "StoreError",
    "Triplet",
    "UsageError",
    "Where",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """METHODS (every retrieval method's name) and OFFLINE_METHODS (those that need no LLM),
    read from the method registry when asked for: a method registered later is listed."""
    if name == "METHODS":
        return registry.names()
    if name == "OFFLINE_METHODS":
        return registry.offline_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
