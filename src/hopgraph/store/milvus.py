"""Milvus storage for one graph: entity, relation, passage and meta collections.

With `schema`, the only modules that import pymilvus. Works with Milvus Lite (a local ``.db``
path), a Milvus server (``http://host:19530``) and Zilliz Cloud (URI + token). Failures of
the backend reach callers as `StoreError`, naming the graph and URI.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from pymilvus.exceptions import MilvusException

from hopgraph.config import cache_dir
from hopgraph.errors import StoreError
from hopgraph.records import Hit
from hopgraph.store import schema
from hopgraph.store.lite import connect, held_elsewhere, is_local_uri

log = logging.getLogger(__name__)


_BATCH = 1000
_PAGE = 16384  # rows per query-iterator page: pymilvus allows no more; Lite rescans per page
_GRAPH_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,200}$")
_META_ID = "graph"
PASSAGE_IDS = "doc+text"  # the meta row's "passage_ids": how passage ids are derived
# Reads see this client's own writes ("Session"), not necessarily another process's last
# ones. "Strong" made every read on a Milvus 2.3 server wait ~200 ms for the cluster's time
# tick (measured: a search 200 ms Strong vs 6 ms Session). The meta row, which carries the
# write counter other processes bump, is still read Strong.
_READS = "Session"


class MilvusStore:
    """The four collections of one named graph in one Milvus database."""

    def __init__(self, uri: str, graph: str, token: str | None = None,
                 create: bool = True) -> None:
        """Connect; with `create=False` a Milvus Lite file that does not exist is an error
        (a read never leaves an empty database behind)."""
        if not _GRAPH_NAME.match(graph):
            raise StoreError(f"graph name {graph!r} is invalid",
                             fix="use letters, digits and '_', not starting with a digit")
        if is_local_uri(uri):
            path = Path(uri).expanduser().resolve()
            if not create and not path.exists():
                raise StoreError("no Milvus Lite database here", where=uri,
                                 fix="check --uri / HOPGRAPH_URI, or ingest first")
            path.parent.mkdir(parents=True, exist_ok=True)
        self.uri = uri
        self.graph = graph
        try:
            self._client = connect(uri, token)
        except MilvusException as exc:
            if is_local_uri(uri) and held_elsewhere(Path(uri).expanduser().resolve()):
                raise StoreError(
                    "this Milvus Lite database is open in another process (a Lite file "
                    "serves one process at a time)", where=uri,
                    fix="stop the other process (e.g. a running `hopgraph serve`) or use "
                        "a Milvus server") from None
            raise StoreError(f"cannot open Milvus: {exc}", where=uri,
                             fix="check --uri / HOPGRAPH_URI and --token") from exc
        self.entities = f"{graph}_entities"
        self.relations = f"{graph}_relations"
        self.passages = f"{graph}_passages"
        self.meta_collection = f"{graph}_meta"
        self._meta: dict[str, Any] | None = None
        self._loaded: set[str] = set()  # collections loaded for reading

    @property
    def is_local(self) -> bool:
        """Whether this is a Milvus Lite file (rather than a server URI)."""
        return is_local_uri(self.uri)

    @contextmanager
    def _failures(self, what: str) -> Iterator[None]:
        """Milvus exceptions raised inside become StoreErrors naming the graph and URI."""
        try:
            yield
        except MilvusException as exc:
            raise StoreError(f"{what} failed in graph {self.graph!r}: {exc}",
                             where=self.uri) from exc

    # --- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Release the connection (Milvus Lite allows one process per file)."""
        self._client.close()

    def exists(self) -> bool:
        """Whether this graph has been created in the database."""
        with self._failures("looking the graph up"):
            return self._client.has_collection(self.meta_collection)

    def list_graphs(self) -> list[str]:
        """Names of the graphs in this database (each has a `NAME_meta` collection)."""
        with self._failures("listing the collections"):
            names = self._client.list_collections()
        return sorted(n[: -len("_meta")] for n in names if n.endswith("_meta"))

    def _missing(self, fix: str | None = None) -> StoreError:
        return StoreError(f"graph {self.graph!r} does not exist at {self.uri}", fix=fix)

    @property
    def meta(self) -> dict[str, Any]:
        """The graph's stored settings (embedder name, dimension, lexical support)."""
        if self._meta is None:
            if not self.exists():
                raise self._missing()
            with self._failures("reading the meta row"):
                self.ensure_loaded(self.meta_collection)
                rows = self._client.get(self.meta_collection, ids=[_META_ID],
                                        output_fields=["value"])
            if not rows:
                raise StoreError(f"graph {self.graph!r} at {self.uri} has no metadata row",
                                 fix="drop it and ingest again")
            self._meta = json.loads(rows[0]["value"])
        return self._meta

    def open(self, embedder_name: str, dim: int, create: bool = True) -> None:
        """Open the graph, creating it if missing; refuse one built with another embedder."""
        if self.exists():
            meta = self.meta
            if meta["embedder"] != embedder_name or int(meta["dim"]) != dim:
                raise StoreError(
                    f"graph {self.graph!r} at {self.uri} was built with embedder "
                    f"{meta['embedder']} (dim {meta['dim']}), not {embedder_name} (dim {dim})",
                    fix="use the same --embedder, or another --graph",
                )
        elif create:
            with self._failures("creating the graph"):
                self._create(embedder_name, dim)
        else:
            raise self._missing(fix="ingest first")
        # Collections are loaded when first read (`ensure_loaded`): a reopened graph whose
        # snapshot and vector files are current may never search entities or relations in
        # Milvus, and Milvus Lite takes ~1 s per collection of 100k rows to load.

    def ensure_loaded(self, *collections: str) -> None:
        """Load these collections for reading, if not yet done (all at once: faster on a
        server). Every read below calls this; callers that will read several soon pass
        them together."""
        missing = [name for name in collections if name not in self._loaded]
        if not missing:
            return
        with self._failures("loading the collections"):
            schema.load_collections(self._client, missing)
        self._loaded.update(missing)

    def ensure_all_loaded(self) -> None:
        """Load the entity, relation and passage collections (before writing or searching
        all three)."""
        self.ensure_loaded(self.entities, self.relations, self.passages)

    def drop(self) -> bool:
        """Delete the graph's collections; returns whether anything was there."""
        found = False
        with self._failures("dropping the graph"):
            for name in (self.entities, self.relations, self.passages, self.meta_collection):
                if self._client.has_collection(name):
                    self._client.drop_collection(name)
                    found = True
        self._meta = None
        self._loaded.clear()
        return found

    def _create(self, embedder_name: str, dim: int) -> None:
        index = schema.LITE_INDEX if is_local_uri(self.uri) else schema.SERVER_INDEX
        schema.create_passages(self._client, self.passages, dim, index)
        lexical = False  # no Milvus full-text field (see schema.create_passages)
        schema.create_entities(self._client, self.entities, dim, index)
        schema.create_relations(self._client, self.relations, dim, index)
        schema.create_meta(self._client, self.meta_collection)
        self._meta = {"embedder": embedder_name, "dim": dim, "lexical": lexical,
                      "passage_ids": PASSAGE_IDS}
        self._client.insert(
            self.meta_collection,
            [{"id": _META_ID, "value": json.dumps(self._meta), "vector": [1.0, 0.0]}],
        )
        log.info("created graph %s at %s (lexical search: %s)", self.graph, self.uri, lexical)

    def set_meta(self, **values: Any) -> None:
        """Set keys of the graph's meta row (e.g. `passage_ids` after checking the layout)."""
        self._put_meta({**self.meta, **values})

    @property
    def writes(self) -> int:
        """The graph's write counter as last read (see `begin_write`)."""
        return int(self.meta.get("writes", 0))

    def begin_write(self) -> tuple[int, int]:
        """Bump the write counter before any row is written; returns (before, after).

        Read fresh from Milvus: with a server another process may have written meanwhile.
        A graph snapshot stamped with an older counter is never trusted again.
        """
        self._meta = None
        before = self.writes
        self._put_meta({**self.meta, "writes": before + 1, "writing": True})
        return before, before + 1

    def end_write(self, after: int) -> None:
        """Mark write `after` (from `begin_write`) finished. Read fresh: if another process
        began a write since, its flag stays."""
        self._meta = None
        if self.writes == after:
            self._put_meta({**self.meta, "writing": False})

    def _put_meta(self, meta: dict[str, Any]) -> None:
        with self._failures("updating the meta row"):
            self._client.upsert(self.meta_collection, [
                {"id": _META_ID, "value": json.dumps(meta), "vector": [1.0, 0.0]}])
        self._meta = meta

    @property
    def incomplete(self) -> str | None:
        """Why the graph may be partial (a write began and has not finished), or None. Read
        fresh: another process may have begun or finished a write since."""
        self._meta = None
        if not self.meta.get("writing"):
            return None
        return (f"graph {self.graph!r} is incomplete: write #{self.writes} began and did not "
                "finish (it stopped, or another process is still writing); rerun the same "
                "ingest to complete it")

    def snapshot_path(self) -> Path:
        """Where this graph's snapshot lives: beside a Milvus Lite file, or in the user cache
        dir (keyed by URI) for a server."""
        if is_local_uri(self.uri):
            db = Path(self.uri).expanduser().resolve()
            return db.parent / f"{db.name}.snapshots" / f"{self.graph}.npz"
        key = hashlib.sha256(self.uri.encode("utf-8")).hexdigest()[:16]
        return cache_dir() / "snapshots" / key / f"{self.graph}.npz"

    def stats(self) -> dict[str, Any]:
        """Row counts and stored settings (no embedder or graph load needed)."""
        self.ensure_all_loaded()
        return {
            "graph": self.graph,
            "uri": self.uri,
            "passages": self.count(self.passages),
            "entities": self.count(self.entities),
            "relations": self.count(self.relations),
            "embedder": self.meta["embedder"],
            "dim": self.meta["dim"],
            "lexical": self.meta.get("lexical", False),
            "state": self.incomplete or "complete",
        }

    # --- reads -----------------------------------------------------------------------------

    def existing_ids(self, collection: str, ids: Sequence[str]) -> set[str]:
        """The subset of `ids` already stored in `collection`."""
        return {row["id"] for row in self.get(collection, ids, ["id"])}

    def get(self, collection: str, ids: Sequence[str], fields: list[str]) -> list[dict[str, Any]]:
        """Rows by id (in no particular order), with the given fields."""
        rows: list[dict[str, Any]] = []
        if ids:
            self.ensure_loaded(collection)
        with self._failures(f"reading rows of {collection}"):
            for start in range(0, len(ids), _BATCH):
                rows.extend(
                    dict(row) for row in
                    self._client.get(collection, ids=list(ids[start : start + _BATCH]),
                                     output_fields=fields, consistency_level=_READS)
                )
        return rows

    def scan(self, collection: str, fields: list[str]) -> Iterator[dict[str, Any]]:
        """Every row of a collection, paged with an iterator (a plain query truncates)."""
        self.ensure_loaded(collection)
        with self._failures(f"scanning {collection}"):
            iterator = self._client.query_iterator(
                collection, batch_size=_PAGE, filter="", output_fields=fields,
                consistency_level=_READS,
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
        self.ensure_loaded(collection)
        with self._failures(f"counting {collection}"):
            rows = self._client.query(collection, filter="", output_fields=["count(*)"],
                                      consistency_level=_READS)
        return int(rows[0]["count(*)"]) if rows else 0

    def vector_width(self, collection: str) -> int:
        """The dimension of a collection's vector field, as its schema says."""
        with self._failures(f"describing {collection}"):
            info = self._client.describe_collection(collection)
        for spec in info.get("fields", []):
            if spec.get("name") == "vector":
                return int(spec.get("params", {}).get("dim", 0))
        return 0

    def index_progress(self, collection: str) -> tuple[int, int]:
        """(rows indexed, rows in total) of a collection's vector index (Milvus builds
        indexes in the background after a flush; until then searches scan unindexed rows)."""
        with self._failures(f"describing the index of {collection}"):
            return schema.index_progress(self._client, collection)

    def wait_indexed(self, timeout: float = schema.WAIT_TIMEOUT_S) -> float:
        """Wait until Milvus has indexed every row of the graph (at most `timeout` s per
        collection); returns the seconds waited."""
        started = time.monotonic()
        with self._failures("waiting for the indexes"):
            for name in (self.entities, self.relations, self.passages):
                schema.wait_until(lambda n=name: schema.indexed(self._client, n),
                                  f"the index of {name}", timeout)
        return time.monotonic() - started

    def vectors(self, collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by id (ids not stored are absent), as float32 arrays."""
        return {row["id"]: np.asarray(row["vector"], dtype=np.float32)
                for row in self.get(collection, ids, ["id", "vector"])}

    def search(self, collection: str, vectors: np.ndarray, limit: int,
               fields: Sequence[str] = ()) -> list[list[Hit]]:
        """Cosine top-`limit` for each query vector."""
        if limit <= 0 or len(vectors) == 0:
            return [[] for _ in range(len(vectors))]
        if limit > schema.MAX_TOP_K:
            raise StoreError(f"a Milvus search returns at most {schema.MAX_TOP_K} rows, "
                             f"{limit} were asked for")
        self.ensure_loaded(collection)
        with self._failures(f"searching {collection}"):
            results = self._client.search(
                collection, data=[v.tolist() for v in vectors], anns_field="vector",
                limit=limit, output_fields=list(fields),
                search_params={"metric_type": "COSINE", "params": {"ef": schema.search_ef(limit)}},
                consistency_level=_READS,
            )
        return [
            [Hit(str(h["id"]), float(h["distance"]), dict(h.get("entity") or {})) for h in hits]
            for hits in results
        ]

    # --- writes ----------------------------------------------------------------------------

    def insert(self, collection: str, rows: Iterable[dict[str, Any]]) -> int:
        """Insert rows in batches; returns how many."""
        return self._write(collection, rows, self._client.insert)

    def upsert(self, collection: str, rows: Iterable[dict[str, Any]]) -> int:
        """Insert or replace rows by id, in batches; returns how many."""
        return self._write(collection, rows, self._client.upsert)

    def flush(self) -> None:
        """Seal freshly written rows so searches use the index, not a brute-force scan."""
        with self._failures("flushing"):
            for name in (self.entities, self.relations, self.passages):
                self._client.flush(name)

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete rows by id."""
        self.ensure_loaded(collection)
        with self._failures(f"deleting from {collection}"):
            for start in range(0, len(ids), _BATCH):
                self._client.delete(collection, ids=list(ids[start : start + _BATCH]))

    def _write(self, collection: str, rows: Iterable[dict[str, Any]], op: Any) -> int:
        batch: list[dict[str, Any]] = []
        total = 0
        with self._failures(f"writing to {collection}"):
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
