"""Milvus storage for one graph: entity, relation, passage and meta collections.

The only module that imports pymilvus. Works with Milvus Lite (a local ``.db`` path), a Milvus
server (``http://host:19530``) and Zilliz Cloud (URI + token).
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# Milvus Lite's embedded server throttles the client's keepalive pings and gRPC's C core
# prints each "GOAWAY too_many_pings" to stderr; the client reconnects by itself. Errors
# that matter still reach us as exceptions. Must be set before gRPC loads.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

from pymilvus import DataType, MilvusClient
from pymilvus.exceptions import MilvusException

log = logging.getLogger(__name__)


class _DropKnownNoise(logging.Filter):
    """Milvus Lite lacks the timestamp call query iterators start with; pymilvus falls back to
    a client-side timestamp, which is correct for us, but both sides log it loudly per scan."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return "mvccTs" not in message and "Method not implemented" not in message


for _name in ("pymilvus.client.iterator.query_iterator", "grpc._server"):
    logging.getLogger(_name).addFilter(_DropKnownNoise())

ID_MAX = 40
NAME_MAX = 2048
RELATION_TEXT_MAX = 8192
PASSAGE_TEXT_MAX = 65535
DOC_ID_MAX = 512
PASSAGES_PER_RELATION_MAX = 4096
_BATCH = 1000
_PAGE = 4096
_GRAPH_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,200}$")
_META_ID = "graph"


class StoreError(RuntimeError):
    """The store cannot do what was asked (wrong embedder, bad graph name, backend failure)."""


@dataclass(frozen=True)
class Hit:
    """One search result: row id, similarity (higher is better) and requested fields."""

    id: str
    score: float
    fields: dict[str, Any]


def _is_local(uri: str) -> bool:
    return "://" not in uri


class MilvusStore:
    """The four collections of one named graph in one Milvus database."""

    def __init__(self, uri: str, graph: str, token: str | None = None) -> None:
        if not _GRAPH_NAME.match(graph):
            raise StoreError(
                f"graph name {graph!r} is invalid: use letters, digits and '_', not starting "
                "with a digit"
            )
        if _is_local(uri):
            Path(uri).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
        self.uri = uri
        self.graph = graph
        try:
            self._client = MilvusClient(uri=uri, token=token or "")
        except MilvusException as exc:
            raise StoreError(f"cannot open Milvus at {uri}: {exc}") from exc
        self.entities = f"{graph}_entities"
        self.relations = f"{graph}_relations"
        self.passages = f"{graph}_passages"
        self.meta_collection = f"{graph}_meta"
        self._meta: dict[str, Any] | None = None

    # --- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Release the connection (Milvus Lite allows one process per file)."""
        self._client.close()

    def exists(self) -> bool:
        """Whether this graph has been created in the database."""
        return self._client.has_collection(self.meta_collection)

    @property
    def meta(self) -> dict[str, Any]:
        """The graph's stored settings (embedder name, dimension, lexical support)."""
        if self._meta is None:
            if not self.exists():
                raise StoreError(f"graph {self.graph!r} does not exist at {self.uri}")
            self._client.load_collection(self.meta_collection)
            rows = self._client.get(self.meta_collection, ids=[_META_ID], output_fields=["value"])
            if not rows:
                raise StoreError(f"graph {self.graph!r} at {self.uri} has no metadata row")
            self._meta = json.loads(rows[0]["value"])
        return self._meta

    def open(self, embedder_name: str, dim: int, create: bool = True) -> None:
        """Open the graph, creating it if missing; refuse one built with another embedder."""
        if self.exists():
            meta = self.meta
            if meta["embedder"] != embedder_name or int(meta["dim"]) != dim:
                raise StoreError(
                    f"graph {self.graph!r} at {self.uri} was built with embedder "
                    f"{meta['embedder']} (dim {meta['dim']}), not {embedder_name} (dim {dim}); "
                    "use the same --embedder, or another --graph"
                )
        elif create:
            self._create(embedder_name, dim)
        else:
            raise StoreError(f"graph {self.graph!r} does not exist at {self.uri}; ingest first")
        for name in (self.entities, self.relations, self.passages):
            self._client.load_collection(name)

    def drop(self) -> bool:
        """Delete the graph's collections; returns whether anything was there."""
        found = False
        for name in (self.entities, self.relations, self.passages, self.meta_collection):
            if self._client.has_collection(name):
                self._client.drop_collection(name)
                found = True
        self._meta = None
        return found

    def _create(self, embedder_name: str, dim: int) -> None:
        lexical = self._create_passages(dim)
        self._create_entities(dim)
        self._create_relations(dim)
        self._meta = {"embedder": embedder_name, "dim": dim, "lexical": lexical}
        schema = self._client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=ID_MAX)
        schema.add_field("value", DataType.VARCHAR, max_length=PASSAGE_TEXT_MAX)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=2)  # Milvus needs one
        self._new_collection(self.meta_collection, schema, extra_index=None)
        self._client.insert(
            self.meta_collection,
            [{"id": _META_ID, "value": json.dumps(self._meta), "vector": [1.0, 0.0]}],
        )
        log.info("created graph %s at %s (lexical search: %s)", self.graph, self.uri, lexical)

    def _new_collection(self, name: str, schema: Any, extra_index: str | None) -> None:
        index = self._client.prepare_index_params()
        index.add_index("vector", index_type="AUTOINDEX", metric_type="COSINE")
        if extra_index:
            index.add_index(extra_index, index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        self._client.create_collection(
            name, schema=schema, index_params=index, consistency_level="Strong"
        )

    def _create_entities(self, dim: int) -> None:
        schema = self._client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=ID_MAX)
        schema.add_field("name", DataType.VARCHAR, max_length=NAME_MAX)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
        self._new_collection(self.entities, schema, extra_index=None)

    def _create_relations(self, dim: int) -> None:
        schema = self._client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=ID_MAX)
        schema.add_field("subject_id", DataType.VARCHAR, max_length=ID_MAX)
        schema.add_field("object_id", DataType.VARCHAR, max_length=ID_MAX)
        schema.add_field("text", DataType.VARCHAR, max_length=RELATION_TEXT_MAX)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
        schema.add_field(
            "passage_ids", DataType.ARRAY, element_type=DataType.VARCHAR,
            max_capacity=PASSAGES_PER_RELATION_MAX, max_length=ID_MAX,
        )
        self._new_collection(self.relations, schema, extra_index=None)

    def _create_passages(self, dim: int) -> bool:
        """Create the passage collection, with BM25 full-text search where the backend has it."""
        try:
            from pymilvus import Function, FunctionType
        except ImportError:  # pymilvus older than 2.5
            Function = None
        if Function is not None and self._server_has_bm25():
            schema = self._passage_schema(dim, analyzer=True)
            schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
            schema.add_function(
                Function(
                    name="passage_bm25", function_type=FunctionType.BM25,
                    input_field_names=["text"], output_field_names=["sparse"],
                )
            )
            try:
                self._new_collection(self.passages, schema, extra_index="sparse")
                return True
            except MilvusException as exc:
                log.info("no full-text search on this backend (%s); using the local fallback", exc)
                if self._client.has_collection(self.passages):
                    self._client.drop_collection(self.passages)
        self._new_collection(self.passages, self._passage_schema(dim, analyzer=False), None)
        return False

    def _server_has_bm25(self) -> bool:
        """False for servers older than 2.5 (no full-text search); True when unsure."""
        try:
            version = str(self._client.get_server_version())
        except MilvusException:
            return True
        found = re.match(r"v?(\d+)\.(\d+)", version)
        return found is None or (int(found[1]), int(found[2])) >= (2, 5)

    def _passage_schema(self, dim: int, analyzer: bool) -> Any:
        schema = self._client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=ID_MAX)
        if analyzer:
            schema.add_field(
                "text", DataType.VARCHAR, max_length=PASSAGE_TEXT_MAX, enable_analyzer=True
            )
        else:
            schema.add_field("text", DataType.VARCHAR, max_length=PASSAGE_TEXT_MAX)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
        schema.add_field("doc_id", DataType.VARCHAR, max_length=DOC_ID_MAX)
        schema.add_field("metadata", DataType.JSON)
        return schema

    # --- reads -----------------------------------------------------------------------------

    def existing_ids(self, collection: str, ids: Sequence[str]) -> set[str]:
        """The subset of `ids` already stored in `collection`."""
        found: set[str] = set()
        for start in range(0, len(ids), _BATCH):
            rows = self._client.get(collection, ids=list(ids[start : start + _BATCH]),
                                    output_fields=["id"])
            found.update(row["id"] for row in rows)
        return found

    def get(self, collection: str, ids: Sequence[str], fields: list[str]) -> list[dict[str, Any]]:
        """Rows by id (in no particular order), with the given fields."""
        rows: list[dict[str, Any]] = []
        for start in range(0, len(ids), _BATCH):
            rows.extend(
                dict(row) for row in
                self._client.get(collection, ids=list(ids[start : start + _BATCH]),
                                 output_fields=fields)
            )
        return rows

    def scan(self, collection: str, fields: list[str]) -> Iterator[dict[str, Any]]:
        """Every row of a collection, paged with an iterator (a plain query truncates)."""
        iterator = self._client.query_iterator(
            collection, batch_size=_PAGE, filter="", output_fields=fields
        )
        try:
            while True:
                page = iterator.next()
                if not page:
                    break
                yield from (dict(row) for row in page)
        finally:
            iterator.close()

    def count(self, collection: str) -> int:
        """Exact row count of a collection."""
        rows = self._client.query(collection, filter="", output_fields=["count(*)"])
        return int(rows[0]["count(*)"]) if rows else 0

    def search(
        self, collection: str, vectors: np.ndarray, limit: int, fields: Sequence[str] = (),
        ids: Sequence[str] | None = None,
    ) -> list[list[Hit]]:
        """Cosine top-`limit` for each query vector, optionally only among `ids`."""
        if limit <= 0 or len(vectors) == 0:
            return [[] for _ in range(len(vectors))]
        filter_expr = ""
        if ids is not None:
            if not ids:
                return [[] for _ in range(len(vectors))]
            filter_expr = f"id in {json.dumps(list(ids))}"
        results = self._client.search(
            collection, data=[v.tolist() for v in vectors], anns_field="vector",
            limit=limit, filter=filter_expr, output_fields=list(fields),
            search_params={"metric_type": "COSINE"},
        )
        return [
            [Hit(str(h["id"]), float(h["distance"]), dict(h.get("entity") or {})) for h in hits]
            for hits in results
        ]

    def search_text(self, queries: Sequence[str], limit: int) -> list[list[Hit]]:
        """BM25 full-text top-`limit` passages per query (only when `meta['lexical']`)."""
        results = self._client.search(
            self.passages, data=list(queries), anns_field="sparse", limit=limit,
            output_fields=[], search_params={"metric_type": "BM25"},
        )
        # Milvus Lite reports BM25 relevance negated; the magnitude is the score either way.
        return [[Hit(str(h["id"]), abs(float(h["distance"])), {}) for h in hits]
                for hits in results]

    # --- writes ----------------------------------------------------------------------------

    def insert(self, collection: str, rows: Iterable[dict[str, Any]]) -> int:
        """Insert rows in batches; returns how many."""
        return self._write(collection, rows, self._client.insert)

    def upsert(self, collection: str, rows: Iterable[dict[str, Any]]) -> int:
        """Insert or replace rows by id, in batches; returns how many."""
        return self._write(collection, rows, self._client.upsert)

    def flush(self) -> None:
        """Seal freshly written rows so searches use the index, not a brute-force scan."""
        for name in (self.entities, self.relations, self.passages):
            self._client.flush(name)

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete rows by id."""
        for start in range(0, len(ids), _BATCH):
            self._client.delete(collection, ids=list(ids[start : start + _BATCH]))

    def _write(self, collection: str, rows: Iterable[dict[str, Any]], op: Any) -> int:
        batch: list[dict[str, Any]] = []
        total = 0
        for row in rows:
            batch.append(row)
            if len(batch) >= _BATCH:
                op(collection, batch)
                total += len(batch)
                batch = []
        if batch:
            op(collection, batch)
            total += len(batch)
        return total
