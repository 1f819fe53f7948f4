"""hopgraph: Graph RAG on Milvus, offline by default."""

from hopgraph.api import GraphRAG
from hopgraph.records import PassageRecord, Triplet

__all__ = ["GraphRAG", "PassageRecord", "Triplet"]
__version__ = "0.1.0"
