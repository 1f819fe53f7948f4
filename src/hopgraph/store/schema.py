"""The explicit schemas of a graph's four collections, and the size limits they impose.

Entities (id, name, vector); relations (id, subject_id, object_id, text, vector, passage_ids);
passages (id, text, vector, doc_id, metadata, plus a BM25 `sparse` field where the backend has
full-text search); meta (one row: the graph's settings as JSON).
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any

from pymilvus import DataType, MilvusClient
from pymilvus.client.types import LoadState
from pymilvus.exceptions import MilvusException

log = logging.getLogger(__name__)

ID_MAX = 40
NAME_MAX = 2048
RELATION_TEXT_MAX = 8192
PASSAGE_TEXT_MAX = 65535
DOC_ID_MAX = 512
PASSAGES_PER_RELATION_MAX = 4096
META_VALUE_MAX = PASSAGE_TEXT_MAX
MAX_TOP_K = 16384  # Milvus's own limit on rows per search
MIN_EF, MAX_EF = 512, 32768  # HNSW candidate list bounds (see milvus.search_ef)
WAIT_TIMEOUT_S = 120.0  # for an index on a new, empty collection, or a collection to load


def _new_collection(client: MilvusClient, name: str, schema: Any,
                    sparse_field: str | None = None) -> None:
    """Create and index one collection (loading is the store's, all collections at once)."""
    index = client.prepare_index_params()
    index.add_index("vector", index_type="AUTOINDEX", metric_type="COSINE")
    if sparse_field:
        index.add_index(sparse_field, index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    client.create_collection(name, schema=schema, consistency_level="Strong")
    # pymilvus waits for each new index by sleeping 0.5 s before its first look (2.5 s per
    # graph, measured); an empty collection's index is ready at once, so we look ourselves.
    client.create_index(name, index, sync=False)
    _wait_for_indexes(client, name, ["vector", sparse_field] if sparse_field else ["vector"])


def _wait_for_indexes(client: MilvusClient, collection: str, fields: list[str]) -> None:
    deadline = time.monotonic() + WAIT_TIMEOUT_S
    pause = 0.005
    for field in fields:
        while True:
            state = client.describe_index(collection, field).get("state", "Finished")
            if state == "Finished":
                break
            if state == "Failed" or time.monotonic() > deadline:
                raise MilvusException(message=f"index on {collection}.{field}: {state}")
            time.sleep(pause)
            pause = min(pause * 2, 0.5)


def load_collections(client: MilvusClient, names: list[str]) -> None:
    """Load collections into memory for search, all at once, and wait until they are loaded.

    pymilvus loads one collection at a time and waits for each; a Milvus 2.3 server takes
    ~3 s per collection (measured), so starting every load first saves most of that.
    """
    for name in names:
        client.load_collection(name, _async=True)
    deadline = time.monotonic() + WAIT_TIMEOUT_S
    pause = 0.005
    for name in names:
        while client.get_load_state(name)["state"] != LoadState.Loaded:
            if time.monotonic() > deadline:
                raise MilvusException(message=f"collection {name} did not load in "
                                      f"{WAIT_TIMEOUT_S:.0f} s")
            time.sleep(pause)
            pause = min(pause * 2, 0.2)


def _schema(client: MilvusClient) -> Any:
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=ID_MAX)
    return schema


def create_entities(client: MilvusClient, name: str, dim: int) -> None:
    """The entity collection: id, name, vector."""
    schema = _schema(client)
    schema.add_field("name", DataType.VARCHAR, max_length=NAME_MAX)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
    _new_collection(client, name, schema)


def create_relations(client: MilvusClient, name: str, dim: int) -> None:
    """The relation collection: id, both entity ids, text, vector, passage ids."""
    schema = _schema(client)
    schema.add_field("subject_id", DataType.VARCHAR, max_length=ID_MAX)
    schema.add_field("object_id", DataType.VARCHAR, max_length=ID_MAX)
    schema.add_field("text", DataType.VARCHAR, max_length=RELATION_TEXT_MAX)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field(
        "passage_ids", DataType.ARRAY, element_type=DataType.VARCHAR,
        max_capacity=PASSAGES_PER_RELATION_MAX, max_length=ID_MAX,
    )
    _new_collection(client, name, schema)


def create_meta(client: MilvusClient, name: str) -> None:
    """The one-row meta collection (Milvus needs a vector field in every collection)."""
    schema = _schema(client)
    schema.add_field("value", DataType.VARCHAR, max_length=META_VALUE_MAX)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=2)
    _new_collection(client, name, schema)


def create_passages(client: MilvusClient, name: str, dim: int) -> bool:
    """The passage collection, with BM25 full-text search where the backend has it.

    Returns whether full-text search is on.
    """
    try:
        from pymilvus import Function, FunctionType
    except ImportError:  # pymilvus older than 2.5
        Function = None
    if Function is not None and server_has_bm25(client):
        schema = _passage_schema(client, dim, analyzer=True)
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(
            Function(
                name="passage_bm25", function_type=FunctionType.BM25,
                input_field_names=["text"], output_field_names=["sparse"],
            )
        )
        try:
            _new_collection(client, name, schema, sparse_field="sparse")
            return True
        except MilvusException as exc:
            log.info("no full-text search on this backend (%s); using the local fallback", exc)
            if client.has_collection(name):
                client.drop_collection(name)
    _new_collection(client, name, _passage_schema(client, dim, analyzer=False))
    return False


def server_has_bm25(client: MilvusClient) -> bool:
    """False for servers older than 2.5 (no full-text search); True when unsure."""
    try:
        version = str(client.get_server_version())
    except MilvusException:
        return True
    found = re.match(r"v?(\d+)\.(\d+)", version)
    return found is None or (int(found[1]), int(found[2])) >= (2, 5)


def _passage_schema(client: MilvusClient, dim: int, analyzer: bool) -> Any:
    schema = _schema(client)
    if analyzer:
        schema.add_field("text", DataType.VARCHAR, max_length=PASSAGE_TEXT_MAX,
                         enable_analyzer=True)
    else:
        schema.add_field("text", DataType.VARCHAR, max_length=PASSAGE_TEXT_MAX)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field("doc_id", DataType.VARCHAR, max_length=DOC_ID_MAX)
    schema.add_field("metadata", DataType.JSON)
    return schema
