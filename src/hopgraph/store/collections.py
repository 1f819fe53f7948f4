"""Row access to one graph's Milvus collections: reads, searches and batched writes.

`MilvusStore` builds on this with the graph itself (its four collections, meta row and write
counter). Failures of the backend reach callers as `StoreError`, naming the graph and URI.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import numpy as np
from pymilvus import MilvusClient
from pymilvus.exceptions import MilvusException

from hopgraph.errors import StoreError
from hopgraph.records import Hit
from hopgraph.store import schema
from hopgraph.store.pages import PAGE, not_loaded, reloadable, scan

log = logging.getLogger(__name__)

_T = TypeVar("_T")
_BATCH = 1000
_SCORED = 4096  # ids per search of `scores`
# Vectors are read as float32 arrays (`strict_float32`), faster than as Python floats on a
# 2.3 server (benchmarks/RESULTS.md, "1M relations on Milvus Lite, before and after issue
# 23"). Reads see this client's own writes ("Session"): a Strong read on a 2.3 server waits
# for its time tick, a Session read does not ("Milvus Lite and a Milvus server"). The meta row
# (the write counter), the lease and change-log rows, and all a writer reads under the
# writer lease (`strong_reads`) are read Strong.
_READS = "Session"
_STRONG = "Strong"
_AT = "Customized"  # a read at a given timestamp (`LeaseReads`)


@dataclass
class LeaseReads:
    """Reads under the writer lease, made cheaper: the lease holder takes a timestamp from
    the server's oracle once it holds the lease (`at`), later than every write of the
    holders before it (they wrote before releasing; we saw the release, then asked). No one
    else writes while we hold it, so a row this write has not written reads the same at
    `at` as at any later time, and such a read waits for the server's time tick once, not
    each time as a Strong read does (benchmarks/RESULTS.md, "Many small writes"). Rows this
    write has written (`written`, by collection; None: any row, after a delete by filter)
    are read Strong, so the write sees its own changes."""

    at: int
    written: dict[str, set[str] | None] = field(default_factory=dict)

    def note(self, collection: str, ids: Iterable[str] | None) -> None:
        """Rows of `collection` this write wrote (None: unknown which)."""
        if ids is None:
            self.written[collection] = None
            return
        known = self.written.setdefault(collection, set())
        if known is not None:
            known.update(ids)

    def unchanged(self, collection: str, ids: Sequence[str] | None) -> bool:
        """Whether a read at `at` sees these rows (None: any) as they are now."""
        if collection not in self.written:
            return True
        known = self.written[collection]
        return known is not None and ids is not None and known.isdisjoint(ids)


@dataclass(frozen=True)
class Reads:
    """A thread's read setting, handed to the threads that read for it (`reads_now`)."""

    strong: bool
    lease: LeaseReads | None = None


class Collections:
    """Rows of the collections of one graph, by collection name, through one Milvus client."""

    def __init__(self, uri: str, graph: str, client: MilvusClient) -> None:
        self.uri = uri
        self.graph = graph
        self._client = client
        self._loaded: set[str] = set()  # collections loaded for reading
        self._strong = threading.local()  # per thread: whether reads must see every write
        self._page: dict[str, int] = {}  # a scan's page per collection, once one was too large

    @property
    def _reads(self) -> str:
        return _STRONG if self.strong_now else _READS

    def reads_now(self) -> Reads:
        """This thread's read setting, for reads other threads make for it (`get`)."""
        return Reads(self.strong_now, getattr(self._strong, "lease", None))

    def _level(self, collection: str, ids: Sequence[str] | None, reads: Reads
               ) -> dict[str, Any]:
        """The consistency arguments of a read: Session, Strong, or at the lease's
        timestamp when the write has not written those rows (`LeaseReads`)."""
        if not reads.strong:
            return {"consistency_level": _READS}
        if reads.lease is not None and reads.lease.unchanged(collection, ids):
            return {"consistency_level": _AT, "guarantee_timestamp": reads.lease.at}
        return {"consistency_level": _STRONG}

    def timestamp(self) -> int | None:
        """A timestamp from the server's oracle: later than every write acknowledged before
        the call (None when the server cannot give one)."""
        try:
            stamp = self._client._get_connection().alloc_timestamp()
        except Exception as exc:  # an old server, or a client without the call: read Strong
            log.debug("no timestamp from the server (%s); reads under the lease are Strong",
                      exc)
            return None
        return int(stamp) or None

    @property
    def strong_now(self) -> bool:
        """Whether this thread's reads are strong (`strong_reads`): what reads made for it
        on other threads pass as `strong`."""
        return bool(getattr(self._strong, "on", False))

    @contextmanager
    def strong_reads(self, at: int | None = None) -> Iterator[None]:
        """Within: this thread's reads see every write acknowledged before them, by any
        process (a writer must plan on the current rows, not on its own session's view).
        Other threads (a server's queries) keep the faster session reads. `at`: a
        timestamp taken under the writer lease (`LeaseReads`), for cheaper reads."""
        before = getattr(self._strong, "on", False), getattr(self._strong, "lease", None)
        self._strong.on = True
        # Nested without a timestamp (a catch-up under the lease): the lease's reads go on.
        self._strong.lease = before[1] if at is None else LeaseReads(at)
        try:
            yield
        finally:
            self._strong.on, self._strong.lease = before

    @contextmanager
    def _failures(self, what: str) -> Iterator[None]:
        """Milvus and gRPC errors raised inside become StoreErrors naming the graph and URI."""
        try:
            yield
        except MilvusException as exc:
            raise StoreError(f"{what} failed in graph {self.graph!r}: {exc}",
                             where=self.uri) from exc
        except Exception as exc:  # pymilvus passes some gRPC errors on as they are
            if not type(exc).__module__.startswith("grpc"):
                raise
            raise StoreError(f"{what} failed in graph {self.graph!r}: {exc}",
                             where=self.uri) from exc

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

    def _reload(self, collection: str) -> None:
        """Load a collection again that Milvus says is not loaded, though this cache of its
        state says it is (`pages.not_loaded`)."""
        log.info("graph %s: %s was not loaded in Milvus; loading it again", self.graph,
                 collection)
        self._loaded.discard(collection)
        self.ensure_loaded(collection)

    def _read(self, collection: str, what: str, call: Callable[[], _T]) -> _T:
        """`call`, a read (or delete) of `collection`, once it is loaded; made once more
        after loading it again if Milvus refuses it as not loaded. Failures become
        StoreErrors saying `what` failed."""
        self.ensure_loaded(collection)
        try:
            with self._failures(what), reloadable():
                return call()
        except StoreError as exc:
            if not not_loaded(exc.__cause__):
                raise
        self._reload(collection)
        with self._failures(what):
            return call()

    # --- reads -----------------------------------------------------------------------------

    def existing_ids(self, collection: str, ids: Sequence[str]) -> set[str]:
        """The subset of `ids` already stored in `collection`."""
        return {row["id"] for row in self.get(collection, ids, ["id"])}

    def get(self, collection: str, ids: Sequence[str], fields: list[str],
            strong: bool = False, reads: Reads | None = None) -> list[dict[str, Any]]:
        """Rows by id (in no particular order), with the given fields; `strong`: seeing
        every acknowledged write, whatever this thread's setting (`strong_reads`); `reads`:
        another thread's setting (`reads_now`), for a read made for it."""
        rows: list[dict[str, Any]] = []
        reads = reads or self.reads_now()
        level = self._level(collection, ids, Reads(strong or reads.strong, reads.lease))
        for start in range(0, len(ids), _BATCH):
            batch = list(ids[start : start + _BATCH])
            rows.extend(dict(row) for row in self._read(
                collection, f"reading rows of {collection}",
                partial(self._client.get, collection, ids=batch, output_fields=fields,
                        strict_float32=True, **level)))
        return rows

    def missed(self, collection: str, ids: Iterable[str], have: Container[str],
               fields: list[str]) -> list[dict[str, Any]]:
        """The rows of `ids` that are not in `have`, read again strong, by id: a session read
        may not see yet what another process wrote last. None is missing, mostly: then no
        read is made."""
        missing = [i for i in ids if i not in have]
        return self.get(collection, missing, fields, strong=True) if missing else []

    def scan(self, collection: str, fields: list[str]) -> Iterator[dict[str, Any]]:
        """Every row of a collection, paged with an iterator (a plain query truncates), in
        primary-key order (`pages.scan`). A page the server found too large to send makes
        later scans of that collection start at the smaller size."""
        self.ensure_loaded(collection)
        wanted = fields if "id" in fields else ["id", *fields]
        with self._failures(f"scanning {collection}"):
            yield from scan(self._client, collection, wanted, self._reads,
                            page=self._page.get(collection, PAGE),
                            shrunk=lambda size: self._page.__setitem__(collection, size),
                            reload=lambda: self._reload(collection))

    def where(self, collection: str, condition: str, fields: list[str],
              limit: int = PAGE, strong: bool = True) -> list[dict[str, Any]]:
        """Rows matching a filter expression, read strong (the small lease and log
        collections, whose rows other processes write); `strong` False: as this thread's
        reads are (`strong_reads`)."""
        reads = self.reads_now()
        level = self._level(collection, None, Reads(strong or reads.strong, reads.lease))
        return [dict(row) for row in self._read(
            collection, f"reading {collection}", lambda: self._client.query(
                collection, filter=condition, output_fields=fields, limit=limit, **level))]

    def ids_where(self, collection: str, condition: str) -> list[str]:
        """The ids of every row `condition` (a filter expression) selects, paged
        (`pages.scan`)."""
        self.ensure_loaded(collection)
        with self._failures(f"filtering {collection}"):
            return [str(row["id"]) for row in scan(self._client, collection, ["id"],
                                                   self._reads, condition,
                                                   reload=lambda: self._reload(collection))]

    def has_collection(self, collection: str) -> bool:
        """Whether the database holds this collection."""
        with self._failures(f"looking for {collection}"):
            return bool(self._client.has_collection(collection))

    def create_collection(self, collection: str,
                          make: Callable[[MilvusClient, str], None]) -> None:
        """Create a collection with one of `schema`'s makers (another process creating it
        at the same moment is fine)."""
        with self._failures(f"creating {collection}"):
            make(self._client, collection)

    def count(self, collection: str) -> int:
        """Exact row count of a collection."""
        rows = self._read(collection, f"counting {collection}", lambda: self._client.query(
            collection, filter="", output_fields=["count(*)"], consistency_level=self._reads))
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

    def vectors(self, collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by id (ids not stored are absent), as float32 arrays of their own
        (not views of the reply's array, which a kept vector would keep whole)."""
        return {row["id"]: np.array(row["vector"], dtype=np.float32)
                for row in self.get(collection, ids, ["id", "vector"])}

    def scores(self, collection: str, vector: np.ndarray, ids: Sequence[str]
               ) -> dict[str, float]:
        """Cosine of one vector to rows by id, by Milvus (a search filtered to the ids: 4-byte
        scores cross the wire, not vectors). It may leave rows out (HNSW, when the filter keeps
        much of a segment): the caller scores those otherwise."""
        found: dict[str, float] = {}
        for start in range(0, len(ids), _SCORED):
            batch = list(ids[start : start + _SCORED])
            condition = f"id in {json.dumps(batch, ensure_ascii=False)}"
            for hit in self.search(collection, vector.reshape(1, -1), len(batch),
                                   condition=condition)[0]:
                found[hit.id] = hit.score
        return found

    def search(self, collection: str, vectors: np.ndarray, limit: int,
               fields: Sequence[str] = (), condition: str = "") -> list[list[Hit]]:
        """Cosine top-`limit` for each query vector (among the rows `condition`, a filter
        expression, selects)."""
        if limit <= 0 or len(vectors) == 0:
            return [[] for _ in range(len(vectors))]
        if limit > schema.MAX_TOP_K:
            raise StoreError(f"a Milvus search returns at most {schema.MAX_TOP_K} rows, "
                             f"{limit} were asked for")
        data = [v.tolist() for v in vectors]
        results = self._read(collection, f"searching {collection}", lambda: self._client.search(
            collection, data=data, anns_field="vector", limit=limit,
            output_fields=list(fields), filter=condition,
            search_params={"metric_type": "COSINE", "params": {"ef": schema.search_ef(limit)}},
            consistency_level=self._reads))
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

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete rows by id."""
        ids = [str(i) for i in ids]
        self._written(collection, ids)
        for start in range(0, len(ids), _BATCH):
            batch = ids[start : start + _BATCH]
            self._read(collection, f"deleting from {collection}",
                       partial(self._client.delete, collection, ids=batch))

    def delete_where(self, collection: str, condition: str) -> None:
        """Delete the rows matching a filter expression."""
        self._written(collection, None)
        self._read(collection, f"deleting from {collection}",
                   lambda: self._client.delete(collection, filter=condition))

    def _written(self, collection: str, ids: Iterable[str] | None) -> None:
        """Note rows this thread's write changes (`LeaseReads`), before changing them."""
        lease: LeaseReads | None = getattr(self._strong, "lease", None)
        if lease is not None:
            lease.note(collection, ids)

    def _write(self, collection: str, rows: Iterable[dict[str, Any]], op: Any) -> int:
        batch: list[dict[str, Any]] = []
        total = 0

        def send() -> None:
            self._written(collection, [str(row["id"]) for row in batch])
            op(collection, batch)

        with self._failures(f"writing to {collection}"):
            for row in rows:
                batch.append(row)
                if len(batch) >= _BATCH:
                    send()
                    total += len(batch)
                    batch = []
            if batch:
                send()
                total += len(batch)
        return total

