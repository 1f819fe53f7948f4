"""One opened graph served to many requests at once.

Queries run concurrently, each on the retriever current when it started (its graph, search
mirror and BM25 index are never changed in place). Writes run one at a time on a fork of the
graph (`GraphRAG.fork`); when a write is done, its new retriever is built and then replaces
the old one in a single assignment, so a query sees the graph before a write or after it,
never half of it. Adds that arrive while a write runs queue up and are written together by
the next one (group commit, `GraphService.add`): one lease round for all of them, each with
its own outcome. Answers to repeated requests come from a cache that lives and dies with
the retriever, so a write invalidates it.

With a Milvus server, other processes write too: a follower thread looks at the graph's
change log every `follow_seconds` and, when something changed (or a write began or ended
elsewhere), swaps in a new version the same way, so their writes reach this server's
answers (and empty its cache) within about that long.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hopgraph.api import GraphRAG
from hopgraph.config import DEFAULT_ANSWER_CACHE
from hopgraph.identity import entity_id
from hopgraph.ingest.sync import Part
from hopgraph.llm import LLMClient
from hopgraph.records import IngestSummary, Retrieval, comparison_json, with_sources
from hopgraph.retrieve import Retriever, registry
from hopgraph.retrieve.query import Query
from hopgraph.serve import subgraph
from hopgraph.serve.group import GROUP_LIMIT, Queued, write_group
from hopgraph.store.keys import KeyStore

_T = TypeVar("_T")
log = logging.getLogger(__name__)


class GraphService:
    """The graph, its current version (retriever and answers), and the lock that keeps
    writes one at a time."""

    def __init__(self, rag: GraphRAG, llm: LLMClient | None = None,
                 cache_size: int = DEFAULT_ANSWER_CACHE,
                 follow_seconds: float | None = None, cache: CacheStats | None = None
                 ) -> None:
        self.rag = rag
        self.llm = llm
        self._writes = threading.Lock()
        self._ended = threading.Condition()  # told when `_writes` is released (`_release`)
        self._adds: list[Queued] = []  # adds waiting for a write (`add`)
        self._adds_lock = threading.Lock()  # guards `_adds`
        self.cache_size = cache_size
        self.cache = cache or CacheStats()  # of every version, for /metrics
        self.gone = False  # the graph was dropped by another process (seen by the follower)
        self._current = self._version()  # built now: queries start warm
        if getattr(rag.embedder, "runtime", None) is not None:  # a local model: loaded now,
            rag.embedder.embed(["hopgraph"])  # not by the first request (a remote one waits)
        self._stop = threading.Event()
        self._follower: threading.Thread | None = None
        seconds = rag.follow_seconds if follow_seconds is None else follow_seconds
        if not rag.store.is_local and seconds > 0:  # a Lite file has no other writer
            self._follower = threading.Thread(target=self._follow, args=(seconds,),
                                              name="hopgraph-follow", daemon=True)
            self._follower.start()

    def _version(self) -> ServedVersion:
        notes = self.rag.incomplete()
        return ServedVersion(self.rag.retriever, self.cache_size, [notes] if notes else [],
                            self.cache)

    def _follow(self, seconds: float) -> None:
        while not self._stop.wait(seconds):
            try:
                self.follow(busy=False)
            except Exception as exc:  # keep following; say why once per failure
                if self._dropped():
                    log.warning("graph %s was dropped by another process",
                                self.rag.store.graph)
                    self.gone = True
                    return
                log.warning("could not follow the graph's change log: %s", exc)

    def _dropped(self) -> bool:
        try:
            return not self.rag.store.exists()
        except Exception:  # Milvus unreachable: not known to be gone
            return False

    def follow(self, busy: bool = True) -> bool:
        """Apply other processes' writes now; returns whether a new version was swapped in.
        Not `busy`: not while a write of this service runs (the follower thread: that write
        catches up with the others itself, and a look would hold up the adds queued behind
        it); the next look comes."""
        if not self._writes.acquire(blocking=busy):
            return False
        try:
            changed = self.rag.follow(now=True)
            if changed:
                self._current = self._version()
            return changed
        finally:
            self._release()

    def close(self) -> None:
        """Stop following the change log."""
        self._stop.set()
        if self._follower is not None:
            self._follower.join(timeout=30)
            self._follower = None

    @property
    def current(self) -> ServedVersion:
        """The version of the latest finished write (read once per request)."""
        return self._current

    @property
    def retriever(self) -> Retriever:
        """The retriever of the latest finished write."""
        return self._current.retriever

    def default_method(self) -> str:
        """The method of a request that names none (`llm` with an LLM, as in the CLI)."""
        return registry.default_for(self.llm is not None)

    def query_json(self, query: Query) -> bytes:
        """Graph and naive retrieval side by side, with the subgraph to draw, as the JSON the
        API sends. A query answered since the last write comes from the cache (`"cached":
        true`); identical queries arriving together are computed once. Methods that use an
        LLM are never cached (a model may choose otherwise)."""
        current = self._current

        def compute() -> dict[str, Any]:
            return _answer(current.retriever, query, current.notes, self.rag.passage_metadata)

        if registry.get(query.method).needs_llm or current.size <= 0:
            return _dumps({**compute(), "cached": False})
        return current.answer(query, compute)

    def retrieve(self, query: Query) -> Retrieval:
        """One retrieval (for answers), on the current version."""
        current = self._current
        result = current.retriever.retrieve(query)
        result.notes.extend(current.notes)
        with_sources([result], self.rag.passage_metadata)
        return result

    def entity(self, name: str) -> dict[str, Any] | None:
        """An entity by its name (normalized: case and spacing do not matter), with its
        relations and neighbours; None if no entity has that name."""
        graph = self._current.retriever.graph
        index = graph.entity_index.get(entity_id(name))
        return None if index is None else subgraph.around_entity(graph, index)

    def documents(self) -> dict[str, int]:
        """Stored documents and their passage counts."""
        return self._current.retriever.graph.documents()

    def write(self, change: Callable[[GraphRAG], _T], wait: float | None = None) -> _T:
        """Run `change` alone on a fork of the graph, then swap in the new version. With
        `wait`, give up after that many seconds behind another write (an upload's file,
        say): `WriteBusy`, and nothing is written, then or later."""
        if not self._writes.acquire(timeout=-1 if wait is None else wait):
            raise WriteBusy(f"graph {self.rag.store.graph!r} was busy with another write "
                            f"for {wait:g} s")
        try:
            self.rag.fork()
            try:
                return change(self.rag)
            finally:  # built before it replaces the old one (and its cache) at once
                self._current = self._version()
        finally:
            self._release()

    def _release(self) -> None:
        """Release the write lock and wake the adds waiting for a write to end (theirs may
        be done, or they may write next)."""
        with self._ended:
            self._writes.release()
            self._ended.notify_all()

    @property
    def queued(self) -> int:
        """How many adds wait for a write now (`add`)."""
        with self._adds_lock:
            return len(self._adds)

    def add(self, part: Part, wait: float | None = None) -> IngestSummary:
        """Store `part` (`hopgraph.api.items_part`, `extracted_part`), in one write with the
        other adds queued for this graph by then (group commit): whichever request gets the
        write lock writes every queued add, each as if alone and in arrival order, and each
        request gets its own summary or error. If the group's write fails, each of its adds
        is written alone, so that only a bad one fails. With `wait`, give up after that many
        seconds unless a write has taken the add by then: `WriteBusy`, and nothing of it is
        written, then or later."""
        queued = Queued(part)
        with self._adds_lock:
            self._adds.append(queued)
        deadline = None if wait is None else time.monotonic() + wait
        while not queued.done.is_set():
            if self._writes.acquire(blocking=False):
                try:
                    if not queued.done.is_set():
                        self._write_queued()
                finally:
                    self._release()
                continue
            left = None if deadline is None else deadline - time.monotonic()
            if left is None or left > 0:
                # A write runs: wait for it to end (ours may be in it), not for the lock, so
                # that the adds of its group return at once and queue their next.
                with self._ended:
                    if not queued.done.is_set() and self._writes.locked():
                        self._ended.wait(left)
                continue
            with self._adds_lock:
                if queued in self._adds:  # no write has taken it: it never will
                    self._adds.remove(queued)
                    raise WriteBusy(f"graph {self.rag.store.graph!r} was busy with another "
                                    f"write for {wait:g} s")
            queued.done.wait()  # a write took it: its outcome comes
        if queued.error is not None:
            raise queued.error
        assert queued.summary is not None, "a write sets one or the other"
        return queued.summary

    def _write_queued(self) -> None:
        """Write the queued adds (at most GROUP_LIMIT) in one write; under the write lock.
        The group is taken from the queue once the write holds the graph's writer lease:
        the adds that came meanwhile join it. Every add taken gets its outcome (a summary
        or an error); nothing is raised but an interrupt."""
        group: list[Queued] = []

        def take() -> list[Queued]:
            with self._adds_lock:
                group.extend(self._adds[:GROUP_LIMIT])
                del self._adds[:len(group)]
            return group

        try:
            self.rag.fork()
            try:
                write_group(self.rag, take, group)
            finally:  # built before it replaces the old one (and its cache) at once
                self._current = self._version()
        except BaseException as exc:  # failed before taking the group (the lease), or the
            if not group:  # fork or the new version failed: the adds with no outcome hear it
                take()
            for queued in group:
                if not queued.settled:
                    queued.error = exc
            if not isinstance(exc, Exception):
                raise
            log.warning("a write of %d adds failed: %s", len(group), exc)
        finally:
            for queued in group:
                queued.done.set()

    def drop(self) -> None:
        """Delete the graph (after any write of this process); the service is `gone`."""
        self._writes.acquire()
        try:
            self.rag.drop()
            self.gone = True
        finally:
            self._release()
        self.close()


def database_keys(rag: GraphRAG) -> KeyStore:
    """The API keys kept in the database of `rag`'s graph (`hopgraph keys`), read through
    its connection: those `hopgraph serve` and `hopgraph mcp --http` accept."""
    return KeyStore(rag.store)


class WriteBusy(TimeoutError):
    """Another write held the graph for longer than the caller would wait."""


def _answer(retriever: Retriever, query: Query, notes: list[str],
            metadata_of: Callable[[list[str]], dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """The retrieval view (`records.comparison_json`) plus the subgraph behind it; `notes`
    (the graph's unfinished documents) join both retrievals' notes; the passages' sources
    come from their stored metadata (`metadata_of`)."""
    result, naive = retriever.compare(query)
    result.notes.extend(notes)
    naive.notes.extend(notes)
    with_sources([result, naive], metadata_of)
    seen = retriever.context(query)  # the drawing shows what the query's filter lets in
    return {**comparison_json(result, naive),
            "subgraph": subgraph.for_retrieval(seen.graph, seen.linker, result)}


@dataclass
class CacheStats:
    """Answers served from a cache (`hits`) or computed for one (`misses`)."""

    hits: int = 0
    misses: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count(self, hit: bool) -> None:
        """Count one answer."""
        with self._lock:
            if hit:
                self.hits += 1
            else:
                self.misses += 1


@dataclass
class _Flight:
    """One computation other identical requests wait for."""

    done: threading.Event = field(default_factory=threading.Event)
    value: bytes | None = None


class ServedVersion:
    """The retriever of one graph version (`state.GraphVersion`) and the answers computed
    on it, as JSON (least recently used dropped first). A write replaces both together, so
    a cached answer is never older than the graph."""

    def __init__(self, retriever: Retriever, size: int, notes: list[str] | None = None,
                 stats: CacheStats | None = None) -> None:
        self.retriever = retriever
        self.size = size
        self.notes = notes or []  # said with every answer of this version
        self.stats = stats or CacheStats()
        self._answers: OrderedDict[Query, bytes] = OrderedDict()
        self._flights: dict[Query, _Flight] = {}
        self._lock = threading.Lock()

    def answer(self, key: Query, compute: Callable[[], dict[str, Any]]) -> bytes:
        """The cached answer for `key`, or the one being computed for it, or compute it."""
        with self._lock:
            if key in self._answers:
                self._answers.move_to_end(key)
                self.stats.count(hit=True)
                return self._answers[key]
            flight = self._flights.get(key)
            leader = flight is None
            if flight is None:
                flight = self._flights[key] = _Flight()
        self.stats.count(hit=not leader)
        if not leader:
            flight.done.wait()
            if flight.value is not None:
                return flight.value
            return _dumps({**compute(), "cached": False})  # the first one failed
        try:
            answer = compute()
            with self._lock:
                flight.value = self._answers[key] = _dumps({**answer, "cached": True})
                while len(self._answers) > self.size:
                    self._answers.popitem(last=False)
            return _dumps({**answer, "cached": False})
        finally:
            with self._lock:
                self._flights.pop(key, None)
            flight.done.set()


def _dumps(answer: dict[str, Any]) -> bytes:
    return json.dumps(answer, ensure_ascii=False).encode("utf-8")
