"""The explicit schemas of a graph's collections, and the size limits they impose.

Entities (id, name, vector); relations (id, subject_id, object_id, text, vector, passage_ids);
passages (id, text, vector, doc_id, metadata); sentences (id, passage_id, vector: a passage's
sentences embedded one by one, `hopgraph.sentences`); meta (one row: the graph's settings as JSON);
writers (one row per process claiming the writer lease, `store.lease`); changes (the log of
writes other processes follow, `store.changes`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

from pymilvus import DataType, MilvusClient
from pymilvus.client.types import LoadState
from pymilvus.exceptions import MilvusException

ID_MAX = 40
NAME_MAX = 2048
RELATION_TEXT_MAX = 8192
PASSAGE_TEXT_MAX = 65535
DOC_ID_MAX = 512
PASSAGES_PER_RELATION_MAX = 4096
META_VALUE_MAX = PASSAGE_TEXT_MAX
LOG_VALUE_MAX = PASSAGE_TEXT_MAX  # one change-log row's JSON
CLAIM_VALUE_MAX = 4096  # one writer claim's JSON
MAX_TOP_K = 16384  # Milvus's own limit on rows per search
MIN_EF, MAX_EF = 512, 32768  # HNSW candidate list bounds (see search_ef)
WAIT_TIMEOUT_S = 120.0  # for an index on a new, empty collection, or a collection to load
# Milvus Lite (3.x, pure Python) builds an HNSW index for AUTOINDEX in a background thread
# after each flush: at 100k relations it keeps both cores busy long after `add` returns and
# holds the process's exit. Its searches walk every row in Python either way, slowly at 100k
# rows (both: benchmarks/RESULTS.md, "Search backends give the same passages"), so hopgraph
# searches its own mirror there and Lite keeps exact FLAT indexes, built for free. A server
# keeps AUTOINDEX: its index is real.
LITE_INDEX, SERVER_INDEX = "FLAT", "AUTOINDEX"


def _new_collection(client: MilvusClient, name: str, schema: Any,
                    index_type: str = SERVER_INDEX) -> None:
    """Create and index one collection (loading is the store's, all collections at once).
    Another process creating the same collection at the same moment is not an error."""
    index = client.prepare_index_params()
    index.add_index("vector", index_type=index_type, metric_type="COSINE")
    try:
        client.create_collection(name, schema=schema, consistency_level="Strong")
    except MilvusException:
        if not client.has_collection(name):
            raise
    # pymilvus waits for each new index by sleeping 0.5 s before its first look, for every
    # collection of a new graph (benchmarks/RESULTS.md, "Figures moved from code comments");
    # an empty collection's index is ready at once, so we look ourselves.
    client.create_index(name, index, sync=False)
    wait_until(lambda: _index_ready(client, name, "vector"), f"index on {name}.vector")


def search_ef(limit: int) -> int:
    """The HNSW candidate list size for a top-`limit` search.

    AUTOINDEX is HNSW on Milvus 2.3+ servers (Lite's FLAT, LITE_INDEX, ignores the parameter).
    With HNSW's default list a search is approximate: on MuSiQue (17k relations, Milvus Lite)
    the top 20 and the top 100 differed from the exact ones for some questions, and a
    top-2000 passage search returned under half the rows. Measured there: a list of 256 gave
    the exact top 20 for every question, and for the top 100 only 1,024 did (400 fell just
    short). Hence 8x the limit, at least 512, for little more time per search; with it the
    mirror and Milvus Lite return identical top-5 passages on every question for every
    method (benchmarks/backends.py; the figures: benchmarks/RESULTS.md, "Search backends
    give the same passages" and "Figures moved from code comments").
    """
    return min(MAX_EF, max(MIN_EF, 8 * limit))


def wait_until(ready: Callable[[], bool], what: str, timeout: float = WAIT_TIMEOUT_S) -> None:
    """Poll `ready` with a growing pause (5 ms to 0.2 s) until it is true or `timeout` s."""
    deadline = time.monotonic() + timeout
    pause = 0.005
    while not ready():
        if time.monotonic() > deadline:
            raise MilvusException(message=f"{what} not ready after {timeout:.0f} s")
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def index_progress(client: MilvusClient, collection: str) -> tuple[int, int]:
    """(rows indexed, rows in total) of a collection's vector index."""
    info = client.describe_index(collection, "vector")
    return int(info.get("indexed_rows", 0)), int(info.get("total_rows", 0))


def indexed(client: MilvusClient, collection: str) -> bool:
    """Whether every row of a collection is in its vector index."""
    done, total = index_progress(client, collection)
    return done >= total


def _index_ready(client: MilvusClient, collection: str, field: str) -> bool:
    state: str = client.describe_index(collection, field).get("state", "Finished")
    if state == "Failed":
        raise MilvusException(message=f"building the index on {collection}.{field} failed")
    return state == "Finished"


def load_collections(client: MilvusClient, names: list[str]) -> None:
    """Load collections into memory for search, all at once, and wait until they are loaded.

    pymilvus loads one collection at a time and waits for each; a Milvus 2.3 server is slow
    to load each (benchmarks/RESULTS.md, "Figures moved from code comments"), so starting
    every load first saves most of that.
    """
    for name in names:
        client.load_collection(name, _async=True)
    for name in names:
        wait_until(partial(_loaded, client, name), f"collection {name}")


def _loaded(client: MilvusClient, collection: str) -> bool:
    loaded: bool = client.get_load_state(collection)["state"] == LoadState.Loaded
    return loaded


def _schema(client: MilvusClient) -> Any:
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=ID_MAX)
    return schema


def create_entities(client: MilvusClient, name: str, dim: int,
                    index_type: str = SERVER_INDEX) -> None:
    """The entity collection: id, name, vector."""
    schema = _schema(client)
    schema.add_field("name", DataType.VARCHAR, max_length=NAME_MAX)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
    _new_collection(client, name, schema, index_type)


def create_relations(client: MilvusClient, name: str, dim: int,
                     index_type: str = SERVER_INDEX) -> None:
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
    _new_collection(client, name, schema, index_type)


def create_meta(client: MilvusClient, name: str) -> None:
    """The one-row meta collection (Milvus needs a vector field in every collection)."""
    schema = _schema(client)
    schema.add_field("value", DataType.VARCHAR, max_length=META_VALUE_MAX)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=2)
    _new_collection(client, name, schema)


def create_writers(client: MilvusClient, name: str) -> None:
    """The writer-lease collection: one row per claiming process (id: its holder id),
    its bakery ticket and the rest of its claim as JSON (`store.lease`)."""
    schema = _schema(client)
    schema.add_field("ticket", DataType.INT64)
    schema.add_field("value", DataType.VARCHAR, max_length=CLAIM_VALUE_MAX)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=2)
    _new_collection(client, name, schema)


def create_changes(client: MilvusClient, name: str) -> None:
    """The change log: one row per part of a write (id: seq.part), its write number and
    what it touched as JSON (`store.changes`)."""
    schema = _schema(client)
    schema.add_field("seq", DataType.INT64)
    schema.add_field("value", DataType.VARCHAR, max_length=LOG_VALUE_MAX)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=2)
    _new_collection(client, name, schema)


def create_keys(client: MilvusClient, name: str) -> None:
    """The API keys of a database, for every graph and server in it: one row per key (id:
    the SHA-256 of the key, never the key) with its role, graphs and label as JSON
    (`store.keys`)."""
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("value", DataType.VARCHAR, max_length=CLAIM_VALUE_MAX)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=2)
    _new_collection(client, name, schema)


JOB_VALUE_MAX = 65_535  # one upload job's JSON record (Milvus's longest VARCHAR)


def create_jobs(client: MilvusClient, name: str) -> None:
    """The upload jobs of a database, seen by every server of it: one row per job (id: the
    job's id) with its record as JSON (`store.jobs`)."""
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("value", DataType.VARCHAR, max_length=JOB_VALUE_MAX)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=2)
    _new_collection(client, name, schema)


def create_passages(client: MilvusClient, name: str, dim: int,
                    index_type: str = SERVER_INDEX) -> None:
    """The passage collection: id, text, vector, doc_id, metadata.

    No Milvus full-text (BM25) field: hopgraph ranks with its own BM25 index on every backend
    (`lexicon.lexical`), so Milvus would compute and index sparse vectors on every insert for
    nothing.
    """
    _new_collection(client, name, _passage_schema(client, dim), index_type)


def _passage_schema(client: MilvusClient, dim: int) -> Any:
    schema = _schema(client)
    schema.add_field("text", DataType.VARCHAR, max_length=PASSAGE_TEXT_MAX)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field("doc_id", DataType.VARCHAR, max_length=DOC_ID_MAX)
    schema.add_field("metadata", DataType.JSON)
    return schema


def create_sentences(client: MilvusClient, name: str, dim: int,
                     index_type: str = SERVER_INDEX) -> None:
    """The sentence collection: id (from the passage's id and the sentence's text,
    `identity.sentence_id`), the passage's id, vector. Read by id only (never searched,
    never filtered: a filter walks every row on Milvus Lite)."""
    schema = _schema(client)
    schema.add_field("passage_id", DataType.VARCHAR, max_length=ID_MAX)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
    _new_collection(client, name, schema, index_type)
