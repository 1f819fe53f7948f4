"""Milvus storage for one graph: entity, relation, passage and meta collections, and the
writer-lease and change-log collections that let several processes share it.

With `schema`, the only modules that import pymilvus; rows are read and written by the
`Collections` it extends (`store.collections`). Works with Milvus Lite (a local ``.db``
path), a Milvus server (``http://host:19530``) and Zilliz Cloud (URI + token). Failures of
the backend reach callers as `StoreError`, naming the graph and URI.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import secrets
import time
from functools import partial
from pathlib import Path
from typing import Any

from pymilvus.exceptions import MilvusException

from hopgraph.config import (
    DEFAULT_ANN_MIN_ROWS,
    DEFAULT_LEASE_SECONDS,
    DEFAULT_LEASE_WAIT,
    Settings,
    cache_dir,
)
from hopgraph.errors import StoreError
from hopgraph.store import schema
from hopgraph.store.changes import WHOLE, ChangeLog
from hopgraph.store.collections import Collections
from hopgraph.store.lite import connect, disconnect, held_elsewhere, is_local_uri
from hopgraph.store.unfinished import describe_unfinished, unfinished_of

log = logging.getLogger(__name__)

_GRAPH_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,200}$")
_META_ID = "graph"


class MilvusStore(Collections):
    """The four collections of one named graph in one Milvus database."""

    def __init__(self, uri: str, graph: str, token: str | None = None,
                 create: bool = True, *, lease_seconds: float = DEFAULT_LEASE_SECONDS,
                 lease_wait: float = DEFAULT_LEASE_WAIT,
                 ann_min_rows: int = DEFAULT_ANN_MIN_ROWS) -> None:
        """Connect; with `create=False` a Milvus Lite file that does not exist is an error
        (a read never leaves an empty database behind). The writer lease's timing and the
        size from which vectors get a nearest-neighbour index are this graph's settings
        (`config.Settings`; `from_settings`)."""
        self.lease_seconds, self.lease_wait = lease_seconds, lease_wait
        self.ann_min_rows = ann_min_rows
        self.cache = cache_dir()  # a server graph's snapshot lives here (`snapshot_path`)
        if not _GRAPH_NAME.match(graph):
            raise StoreError(f"graph name {graph!r} is invalid",
                             fix="use letters, digits and '_', not starting with a digit")
        if is_local_uri(uri):
            path = Path(uri).expanduser().resolve()
            if not create and not path.exists():
                raise StoreError("no Milvus Lite database here", where=uri,
                                 fix="check --uri / HOPGRAPH_URI, or ingest first")
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            client = connect(uri, token)
        except MilvusException as exc:
            if is_local_uri(uri) and held_elsewhere(Path(uri).expanduser().resolve()):
                raise StoreError(
                    "this Milvus Lite database is open in another process (a Lite file "
                    "serves one process at a time)", where=uri,
                    fix="stop the other process (e.g. a running `hopgraph serve`) or use "
                        "a Milvus server") from None
            raise StoreError(f"cannot open Milvus: {exc}", where=uri,
                             fix="check --uri / HOPGRAPH_URI and --token") from exc
        super().__init__(uri, graph, client)
        self.entities = f"{graph}_entities"
        self.relations = f"{graph}_relations"
        self.passages = f"{graph}_passages"
        self.sentences = f"{graph}_sentences"
        self.meta_collection = f"{graph}_meta"
        self.writers = f"{graph}_writers"
        self.changes = f"{graph}_changes"
        self._meta: dict[str, Any] | None = None
        self.created = False  # whether `open` created the graph (it did not exist)
        self._dropped: tuple[str, int] | None = None  # `drop`: its embedder and width
        self._closed = False

    @classmethod
    def from_settings(cls, settings: Settings, create: bool = True) -> MilvusStore:
        """The store of `settings.graph` at `settings.uri`, with the settings' tuning."""
        return cls(settings.uri, settings.graph, settings.token, create,
                   lease_seconds=settings.lease_seconds, lease_wait=settings.lease_wait,
                   ann_min_rows=settings.ann_min_rows)

    @property
    def is_local(self) -> bool:
        """Whether this is a Milvus Lite file (rather than a server URI)."""
        return is_local_uri(self.uri)

    # --- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Release the connection; the last one of a Milvus Lite file in this process also
        releases the file, for other processes (a Lite file serves one at a time)."""
        if self._closed:
            return
        self._closed = True
        disconnect(self.uri, self._client)

    def exists(self) -> bool:
        """Whether this graph has been created in the database."""
        with self._failures("looking the graph up"):
            found: bool = self._client.has_collection(self.meta_collection)
            return found

    def list_graphs(self) -> list[str]:
        """Names of the graphs in this database (each has a `NAME_meta` collection)."""
        with self._failures("listing the collections"):
            names = self._client.list_collections()
        return sorted(n[: -len("_meta")] for n in names if n.endswith("_meta"))

    def _missing(self, fix: str | None = None) -> StoreError:
        return StoreError(f"graph {self.graph!r} does not exist at {self.uri}", fix=fix)

    @property
    def meta(self) -> dict[str, Any]:
        """The graph's stored settings (embedder name, dimension, write counter)."""
        if self._meta is None:
            if not self.exists():
                raise self._missing()
            rows = self._read(self.meta_collection, "reading the meta row",
                              lambda: self._client.get(self.meta_collection, ids=[_META_ID],
                                                       output_fields=["value"]))
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
            self.migrate()
        elif create:
            with self._failures("creating the graph"):
                self._create(embedder_name, dim)
            self.created = True
        else:
            raise self._missing(fix="ingest first")
        # Collections are loaded when first read (`ensure_loaded`): a reopened graph whose
        # snapshot and vector files are current may never search entities or relations in
        # Milvus, and Milvus Lite is slow to load a large collection (benchmarks/RESULTS.md,
        # "Figures moved from code comments").

    def migrate(self) -> bool:
        """Add what a graph stored by an earlier version lacks: the writer-lease and
        change-log collections, and the sentence collection (idempotent; two processes doing
        it at once is fine). Returns whether anything was added. Its write counter and an
        unfinished write's flag carry over as they are; the passages stored before have no
        sentence rows until they are ingested again (`ingest.writer`), and a query embeds
        the sentences of those it ranks meanwhile (`retrieve.sentences`)."""
        added = []
        index = schema.LITE_INDEX if is_local_uri(self.uri) else schema.SERVER_INDEX
        with self._failures("adding the collections an earlier version lacks"):
            for name, create in (
                    (self.writers, schema.create_writers),
                    (self.changes, schema.create_changes),
                    (self.sentences, partial(schema.create_sentences,
                                             dim=int(self.meta["dim"]), index_type=index))):
                if not self._client.has_collection(name):
                    create(self._client, name)
                    added.append(name)
        if added:
            log.info("graph %s at %s: added %s", self.graph, self.uri, ", ".join(added))
        return bool(added)

    def ensure_all_loaded(self) -> None:
        """Load the entity, relation and passage collections (before writing or searching
        all three)."""
        self.ensure_loaded(self.entities, self.relations, self.passages)

    def drop(self) -> bool:
        """Delete the graph's collections, and its snapshot and vector files here; returns
        whether anything was there."""
        try:  # (a graph without its meta row can be dropped too: it is not made again)
            self._dropped = (self.meta["embedder"], int(self.meta["dim"])) if self.exists() \
                else self._dropped
        except (StoreError, KeyError, ValueError):
            self._dropped = None
        snapshot = self.snapshot_path()
        for path in (snapshot, *snapshot.parent.glob(f"{self.graph}.*.f32"),
                     *snapshot.parent.glob(f".{self.graph}.*.tmp")):  # store.atomic's
            path.unlink(missing_ok=True)
        found = False
        with self._failures("dropping the graph"):
            for name in (self.entities, self.relations, self.passages, self.sentences,
                         self.meta_collection, self.writers, self.changes):
                if self._client.has_collection(name):
                    self._client.drop_collection(name)
                    found = True
        self._meta = None
        self._loaded.clear()
        return found

    def made_again(self) -> None:
        """After `drop`: create the graph again, empty, for the embedder it had (what a
        write to a dropped graph does, as opening it would); else nothing."""
        if self._dropped is not None:
            embedder, dim = self._dropped
            self.open(embedder, dim, create=True)
            self._dropped = None

    def _create(self, embedder_name: str, dim: int) -> None:
        index = schema.LITE_INDEX if is_local_uri(self.uri) else schema.SERVER_INDEX
        schema.create_passages(self._client, self.passages, dim, index)
        schema.create_entities(self._client, self.entities, dim, index)
        schema.create_relations(self._client, self.relations, dim, index)
        schema.create_sentences(self._client, self.sentences, dim, index)
        schema.create_writers(self._client, self.writers)
        schema.create_changes(self._client, self.changes)
        schema.create_meta(self._client, self.meta_collection)
        # `born` tells this graph from an earlier one of the same name (`identity`).
        self._meta = {"embedder": embedder_name, "dim": dim, "born": secrets.token_hex(8)}
        self._client.insert(
            self.meta_collection,
            [{"id": _META_ID, "value": json.dumps(self._meta), "vector": [1.0, 0.0]}],
        )
        log.info("created graph %s at %s", self.graph, self.uri)

    @property
    def identity(self) -> str:
        """The graph's name and when it was made: what its snapshot is stamped with, so a
        snapshot of a dropped graph (on this machine or another's cache) never passes for
        one made again under the same name. (Graphs made before `born` go by name.)"""
        born = self.meta.get("born")
        return f"{self.graph}@{born}" if born else self.graph

    @property
    def writes(self) -> int:
        """The number of the last closed write, as last read (`store.writes`)."""
        return int(self.meta.get("writes", 0))

    def fresh_meta(self) -> dict[str, Any]:
        """The meta row read again now (another process may have changed it)."""
        self._meta = None
        return self.meta

    def put_meta(self, meta: dict[str, Any]) -> None:
        """Replace the meta row (only under the writer lease: `store.writes`)."""
        with self._failures("updating the meta row"):
            self._client.upsert(self.meta_collection, [
                {"id": _META_ID, "value": json.dumps(meta), "vector": [1.0, 0.0]}])
        self._meta = meta

    def unfinished(self) -> dict[str, str]:
        """Documents that may be partial, with why: those of writes that stopped (until a
        write completes or removes them) and of the write under way, if any. Read now."""
        meta = self.fresh_meta()
        return unfinished_of(meta, ChangeLog(self, self.changes).pending(self.writes,
                                                                         WHOLE).open)

    @property
    def incomplete(self) -> str | None:
        """Why the graph may be partial (`unfinished`, said in one line), or None."""
        return describe_unfinished(self.graph, self.unfinished())

    def snapshot_path(self) -> Path:
        """Where this graph's snapshot lives: beside a Milvus Lite file, or in the user cache
        dir (keyed by URI) for a server."""
        if is_local_uri(self.uri):
            db = Path(self.uri).expanduser().resolve()
            return db.parent / f"{db.name}.snapshots" / f"{self.graph}.npz"
        key = hashlib.sha256(self.uri.encode("utf-8")).hexdigest()[:16]
        return self.cache / "snapshots" / key / f"{self.graph}.npz"

    def stats(self) -> dict[str, Any]:
        """Row counts and stored settings (no embedder or graph load needed)."""
        meta = self.meta  # a graph that is not there says so (`_missing`)
        self.ensure_all_loaded()
        return {
            "graph": self.graph,
            "uri": self.uri,
            "passages": self.count(self.passages),
            "entities": self.count(self.entities),
            "relations": self.count(self.relations),
            "embedder": meta["embedder"],
            "dim": meta["dim"],
            "state": self.incomplete or "complete",
            "unfinished": self.unfinished(),
        }

    # --- indexes ---------------------------------------------------------------------------

    def wait_indexed(self, timeout: float = schema.WAIT_TIMEOUT_S) -> float:
        """Wait until Milvus has indexed every row of the graph (at most `timeout` s per
        collection); returns the seconds waited."""
        started = time.monotonic()
        with self._failures("waiting for the indexes"):
            for name in (self.entities, self.relations, self.passages):
                schema.wait_until(partial(schema.indexed, self._client, name),
                                  f"the index of {name}", timeout)
        return time.monotonic() - started

    def flush(self) -> None:
        """Seal freshly written rows so searches use the index, not a brute-force scan."""
        with self._failures("flushing"):
            for name in (self.entities, self.relations, self.passages):
                self._client.flush(name)
