"""Storage: the only package that imports pymilvus. One graph = four Milvus collections."""

from hopgraph.store.milvus import MilvusStore
from hopgraph.store.schema import (
    DOC_ID_MAX,
    ID_MAX,
    MAX_TOP_K,
    NAME_MAX,
    PASSAGE_TEXT_MAX,
    PASSAGES_PER_RELATION_MAX,
    RELATION_TEXT_MAX,
)

__all__ = [
    "DOC_ID_MAX",
    "ID_MAX",
    "MAX_TOP_K",
    "NAME_MAX",
    "PASSAGES_PER_RELATION_MAX",
    "PASSAGE_TEXT_MAX",
    "RELATION_TEXT_MAX",
    "MilvusStore",
]
