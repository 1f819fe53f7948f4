"""The graphs one server serves: every graph of its database, each opened when first asked
for (a `GraphService`), at most `size` open at once.

The least recently used graph is closed first when another must open; it reopens from its
snapshot when asked for again. A graph that requests are still using when it is closed
stays open until the last of them is done (`use`), so closing never breaks a request.
Reading never creates a graph: only `create` does. The database itself (its graph list,
its keys) is reached through a connection of the pool's own (`catalog`), which outlives
every graph.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from hopgraph.api import GraphRAG
from hopgraph.config import DEFAULT_MAX_GRAPHS
from hopgraph.serve.auth import missing
from hopgraph.serve.errors import HTTPError, hiding
from hopgraph.serve.service import CacheStats, GraphService
from hopgraph.store import MilvusStore

log = logging.getLogger(__name__)

Opener = Callable[[str, bool], GraphRAG]  # (name, create) -> the graph opened


@dataclass
class _Open:
    """An open graph and the requests using it."""

    service: GraphService
    owned: bool  # whether the pool closes its GraphRAG (it opened it)
    users: int = 0
    retired: bool = False  # out of the pool: closed once `users` reaches 0


class GraphPool:
    """A `GraphService` per graph name, opened on demand, least recently used closed first.

    `first` is the server's default graph (the routes without `/graphs/{graph}`); other
    graphs open with `opener`, by default as `first`'s GraphRAG was (URI, token, embedder,
    LLM, memory limit)."""

    def __init__(self, first: GraphService, size: int = DEFAULT_MAX_GRAPHS,
                 opener: Opener | None = None, owns_first: bool = False) -> None:
        if size < 1:
            raise ValueError(f"a pool holds at least one graph, not {size}")
        rag = first.rag
        self.default = rag.store.graph
        self.size = size
        self.llm = first.llm
        self._cache_size = first.cache_size
        self._opener = opener or _like(rag)
        self.catalog = MilvusStore.from_settings(rag.settings)
        self.hide = hiding(rag.settings.uri)  # the database's places, out of what keys see
        self.cache: dict[str, CacheStats] = {self.default: first.cache}  # outlive closing
        self._open: OrderedDict[str, _Open] = OrderedDict(
            {self.default: _Open(first, owned=owns_first)})
        self._lock = threading.Lock()
        self._opening: dict[str, threading.RLock] = {}

    # --- the database ----------------------------------------------------------------------

    def names(self) -> list[str]:
        """Every graph of the database."""
        return self.catalog.list_graphs()

    def exists(self, name: str) -> bool:
        """Whether the database holds graph `name`."""
        return self.catalog.has_collection(f"{name}_meta")

    def services(self) -> list[GraphService]:
        """The graphs open now (for `/metrics`)."""
        with self._lock:
            return [entry.service for entry in self._open.values()]

    # --- using a graph ---------------------------------------------------------------------

    @contextmanager
    def use(self, name: str) -> Iterator[GraphService]:
        """Graph `name` while a request needs it (404 if the database has no such graph)."""
        entry = self.acquire(name)
        try:
            yield entry.service
        finally:
            self.release(entry)

    def borrow_if_open(self, name: str) -> _Open | None:
        """Graph `name` for one more request if it is open (never blocks on Milvus: a graph
        gone elsewhere is left for `acquire`); None otherwise. `release` it after."""
        with self._lock:
            entry = self._open.get(name)
            if entry is None or entry.service.gone:
                return None
            self._open.move_to_end(name)
            entry.users += 1
            return entry

    def acquire(self, name: str) -> _Open:
        """Graph `name` for one more request, opened if need be (404 if the database has no
        such graph). `release` it after."""
        return self._acquire(name, create=False)

    def release(self, entry: _Open, close: bool = True) -> bool:
        """A request is done with `entry`. Returns whether that was the last user of a
        graph out of the pool, which is then closed (here, or by the caller through
        `close_entry` when `close` is False)."""
        with self._lock:
            entry.users -= 1
            done = entry.retired and entry.users == 0
        if done and close:
            _close(entry)
        return done

    @staticmethod
    def close_entry(entry: _Open) -> None:
        """Close a graph no request uses any more (`release(..., close=False)`)."""
        _close(entry)

    def create(self, name: str) -> bool:
        """Make graph `name` (and open it); False if it existed already."""
        with self._name_lock(name):
            if self.exists(name):
                return False
            self.release(self._acquire(name, create=True))
            return True

    def drop(self, name: str) -> None:
        """Delete graph `name` with everything in it (404 if missing; 409 for the default
        graph: the routes without a graph name serve it)."""
        if name == self.default:
            raise HTTPError(409, f"graph {name!r} is this server's default graph",
                            "stop the server, then `hopgraph drop --graph NAME`")
        with self._name_lock(name):
            entry = self._acquire(name, create=False)
            try:
                entry.service.drop()
            finally:
                with self._lock:
                    if self._open.get(name) is entry:
                        del self._open[name]
                    entry.retired = True
                self.release(entry)
            self.cache.pop(name, None)
        with self._lock:
            self._opening.pop(name, None)
        log.info("dropped graph %s", name)

    def close(self) -> None:
        """Close every graph the pool opened."""
        with self._lock:
            entries = list(self._open.values())
            self._open.clear()
        for entry in entries:
            _close(entry)
        self.catalog.close()

    # --- inside ----------------------------------------------------------------------------

    def _name_lock(self, name: str) -> threading.RLock:
        with self._lock:
            return self._opening.setdefault(name, threading.RLock())

    def _taken(self, name: str) -> _Open | None:
        """`borrow_if_open`, after retiring the entry of a graph dropped by another process (closed
        now if no request holds it, else by its last user)."""
        with self._lock:
            entry = self._open.get(name)
            closing = None
            if entry is not None and entry.service.gone:
                del self._open[name]
                entry.retired = True
                closing = entry if entry.users == 0 else None
        if closing is not None:
            _close(closing)
        return self.borrow_if_open(name)

    def _acquire(self, name: str, create: bool) -> _Open:
        entry = self._taken(name)
        if entry is not None:
            return entry
        if not create and not self.exists(name):  # before any lock: a name of no graph
            raise missing(name)                   # leaves nothing behind
        with self._name_lock(name):  # one opening per name; `create` holds it already
            entry = self._taken(name)  # opened by a request that was first
            if entry is not None:
                return entry
            if not create and not self.exists(name):  # dropped while this one waited
                raise missing(name)
            rag = self._opener(name, create)
            stats = self.cache.setdefault(name, CacheStats())
            entry = _Open(GraphService(rag, self.llm, self._cache_size, cache=stats),
                          owned=True, users=1)
            with self._lock:
                self._open[name] = entry
                evicted = self._evict()
            for old in evicted:
                _close(old)
            log.info("opened graph %s (%d open)", name, len(self._open))
            return entry

    def _evict(self) -> list[_Open]:
        """Take the least recently used graphs out until `size` are open (under the lock);
        those not in use are returned to be closed now, the others close when released."""
        closing = []
        while len(self._open) > self.size:
            name, entry = self._open.popitem(last=False)
            entry.retired = True
            log.info("closing graph %s (least recently used of %d)", name, self.size + 1)
            if entry.users == 0:
                closing.append(entry)
        return closing



def _like(rag: GraphRAG) -> Opener:
    """Open other graphs of `rag`'s database as `rag` was opened (its embedder shared, its
    rerank stage the same)."""

    def open_graph(name: str, create: bool) -> GraphRAG:
        return GraphRAG(uri=rag.settings.uri, graph=name, token=rag.settings.token,
                        embedder=rag.embedder, create=create, llm=rag.llm,
                        memory_limit=rag.settings.memory_limit, mirror_scan=rag.mirror_scan,
                        rerank=rag.settings.rerank, rerank_top_n=rag.settings.rerank_top_n)

    return open_graph


def _close(entry: _Open) -> None:
    entry.service.close()
    if entry.owned:  # an index build under way ends: the graph's next opener builds it
        entry.service.rag.close(wait=False)  # (no request waits for a build)
