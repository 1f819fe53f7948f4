"""hopgraph: Graph RAG on Milvus, offline by default.

Everything a user needs is importable from here; `tests/test_public_api.py` pins this list,
so a name can't disappear or move without the test saying so.
"""

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
    IngestSummary,
    LoadReport,
    PassageHit,
    PassageRecord,
    Problem,
    RelationHit,
    Retrieval,
    Triplet,
)
from hopgraph.retrieve import METHODS, OFFLINE_METHODS

__all__ = [
    "METHODS",
    "OFFLINE_METHODS",
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
    "RelationHit",
    "Retrieval",
    "Settings",
    "StoreError",
    "Triplet",
    "UsageError",
]
__version__ = "0.1.0"
