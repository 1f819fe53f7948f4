"""Storage: the only package that imports pymilvus. One graph = four Milvus collections."""

from hopgraph.config import lite_memory_budget, quiet_grpc

quiet_grpc()  # before any module of this package imports pymilvus (and with it gRPC)
lite_memory_budget()  # and Milvus Lite

from hopgraph.store.milvus import MilvusStore  # noqa: E402
from hopgraph.store.schema import (  # noqa: E402
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
