"""The state of one opened graph: everything a process keeps of it, and when each part is stale.

Milvus holds the graph; this process keeps caches of it, each valid for one known state:

- **the graph** (`graph`, a `KnowledgeGraph`): read from the snapshot when the snapshot's
  stamp equals the number of the graph's last closed write (the meta row), else rebuilt
  from Milvus (`source` says which); then kept current by following the change log
  (`refresh`: other processes' writes, applied by `store.follow`) and by this process's
  own writes, which change it in step with Milvus. `applied` is how far in the log it is.
- **the snapshot** (`store.snapshot_path()`): saved when this process closes a write (it
  then holds the graph as of that write: it caught up under the writer lease).
- **the vectors** (`vectors`, graph order, `store.vectors.GraphVectors`): files beside the
  snapshot on Milvus Lite (one process), in memory with a server; trusted only when they
  hold as many rows as the graph; appended by writes and refreshes that started with them
  current, compacted by removals, discarded otherwise.
- **the retriever** (whatever `retriever(build)` built: search mirror, BM25, linker): built
  on first use from the current graph; dropped whenever the graph changes (a write starts,
  even one that fails; a refresh applies something), on `fork`, and when the caller says its
  settings changed (`forget_retriever`). The next one is built from the last one and the
  passages touched since (`stale_passages`), so that its BM25 index and linker cost the
  change, not the graph; not after a reload, a change of settings, or while a write is
  under way (it then starts afresh).

Writes go through `store.writes.WriteSession` (the writer lease, the change log, the
unfinished documents); `begin` catches the graph up under the lease before anything is
planned on it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Generic, TypeVar

import numpy as np

from hopgraph.graph import KnowledgeGraph
from hopgraph.store import follow, snapshot
from hopgraph.store.ann import Ann
from hopgraph.store.changes import WHOLE, ChangeLog
from hopgraph.store.follow import scan_graph, sizes
from hopgraph.store.milvus import MilvusStore
from hopgraph.store.unfinished import unfinished_of
from hopgraph.store.vectors import GraphVectors, vector_files
from hopgraph.store.writes import Write, WriteSession

log = logging.getLogger(__name__)

R = TypeVar("R")
_READER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hopgraph-meta")
CLOSED = WHOLE  # `applied` part number of a write applied whole


class GraphState(Generic[R]):
    """One opened graph's in-process caches of Milvus (see the module docstring)."""

    def __init__(self, store: MilvusStore, dim: int) -> None:
        self.store = store
        self.dim = dim
        self.log = ChangeLog(store, store.changes)
        self.vectors = GraphVectors(vector_files(store.snapshot_path(), dim,
                                                 shared=store.is_local), store.ann_min_rows)
        self.applied = (0, CLOSED)  # (write, part) up to which the graph follows the log
        self.source = ""  # where the graph was read from: "snapshot" or "Milvus"
        self._retriever: R | None = None
        self._previous: R | None = None  # the last retriever built: the next one's start
        self.stale_passages: set[str] = set()  # texts changed since (with a last one)
        self._writing = 0  # writes under way in this process
        self.passage_texts: dict[str, str] = {}  # read by the last mirror, still current
        self._meta: dict[str, Any] = {}  # the meta row as last read (it names stopped writes)
        self._open: dict[int, set[str]] = {}  # documents of writes under way, by write
        self.graph = self._load()
        self.refresh()  # the parts of a write under way that are already settled

    @property
    def unfinished(self) -> dict[str, str]:
        """Documents that may be partial, with why, as of the last look at the log
        (`store.unfinished`)."""
        return unfinished_of(self._meta, self._open)

    # --- the graph and its snapshot --------------------------------------------------------

    def _load(self) -> KnowledgeGraph:
        """The graph from its snapshot when that is current, else rebuilt from Milvus."""
        started = time.perf_counter()
        self.passage_texts = {}
        self._previous = None
        self.stale_passages.clear()
        meta = self.store.fresh_meta()
        path, writes = self.store.snapshot_path(), int(meta.get("writes", 0))
        self._meta = meta
        self.applied = (writes, CLOSED)  # read before the rows: a write meanwhile is refreshed
        saved = snapshot.load(path, self.store.identity, writes)
        if saved is None:
            graph, self.source = scan_graph(self.store), "Milvus"
            self.vectors.unknown(sizes(graph))  # not known to match this graph
            self._save_snapshot(graph, writes)
        else:
            graph, self.vectors.rows, self.source = saved.graph, saved.vector_rows, "snapshot"
        log.info("loaded graph %s from %s: %d entities, %d relations in %.2fs",
                 self.store.graph, self.source, len(graph.entity_ids), len(graph.relations),
                 time.perf_counter() - started)
        return graph

    def _save_snapshot(self, graph: KnowledgeGraph, writes: int) -> None:
        """Save the graph as of closed write `writes` (a failure costs speed only: logged)."""
        path = self.store.snapshot_path()
        try:
            snapshot.save(graph, path, self.store.identity, writes, self.vectors.rows)
        except OSError as exc:
            log.warning("could not save the graph snapshot %s (%s); the next open rebuilds "
                        "the graph from Milvus", path, exc)

    def fork(self) -> None:
        """Give the next write its own copy of the graph (retrievers keep theirs, whole)."""
        self.graph = self.graph.copy()
        self._retriever = None

    def drop(self) -> bool:
        """Delete the graph's collections, snapshot and vector files; whether it existed."""
        found = self.store.drop()
        self.store.snapshot_path().unlink(missing_ok=True)
        self.vectors.unknown({})
        self.graph, self.passage_texts = KnowledgeGraph(), {}
        self._retriever = self._previous = None
        self.stale_passages.clear()
        return found

    # --- the vector files -------------------------------------------------------------------

    def vectors_current(self) -> bool:
        """Whether every vector file holds exactly the graph's rows, as the snapshot says."""
        return self.vectors.current(sizes(self.graph))

    def current_vectors(self) -> dict[str, np.ndarray | None]:
        """The on-disk vectors that match the graph (memory maps), by kind (None: stale)."""
        return self.vectors.matching(sizes(self.graph))

    def current_indexes(self) -> dict[str, Ann]:
        """The nearest-neighbour indexes of the vectors that match the graph (store.ann)."""
        return self.vectors.indexes(sizes(self.graph))

    def keep_vectors(self, matrices: dict[str, np.ndarray]) -> None:
        """Keep vectors read back from Milvus (graph order, by kind): on disk on Lite."""
        self.vectors.keep(matrices)
        if self.store.is_local and self.applied[1] == CLOSED:
            self._save_snapshot(self.graph, self.applied[0])

    # --- following other processes ----------------------------------------------------------

    def refresh(self, quick: bool = False) -> bool:
        """Apply other processes' settled change-log parts after `applied`; whether the
        graph changed. Behind the log's start: reloads. `quick`: first a quick look (`quiet`)."""
        if quick and self.log.quiet(*self.applied):
            return False
        with self.store.strong_reads():
            pending = self.log.pending(*self.applied)
            self._note_under_way(pending.open, {p.seq for p in pending.closed})
            if not (pending.settled or pending.closed or pending.tail):
                return False
            meta = None
            if pending.closed:  # writes ended: which documents they left unfinished (read
                meta = _READER.submit(self.store.fresh_meta)  # beside the rows: ~0.2 s each)
            if pending.settled or pending.closed:
                first = (pending.settled or pending.closed)[0].seq
                if first > self.applied[0] + (1 if self.applied[1] == CLOSED else 0):
                    log.info("graph %s: the change log no longer reaches write #%d; "
                             "reloading", self.store.graph, self.applied[0])
                    self.graph = self._load()
                    self._retriever = None
                    return True
            current = self.vectors_current()
            parts = pending.settled + pending.tail
            done = follow.absorb(self.store, self.graph, parts,
                                 self.dim if current else None)
            touched = follow.touched(parts)["passages"]  # their texts may have changed
            for pid in touched:
                self.passage_texts.pop(pid, None)
            if self._previous is not None:  # kept only for a next retriever to carry over
                self.stale_passages.update(touched)
                self.passage_texts.update(done.texts)
            if meta is not None:
                self._meta = meta.result()
        seq, part = pending.last
        self.applied = (seq, CLOSED) if seq in {p.seq for p in pending.closed} else (seq, part)
        if not done.changed:
            return False
        self._take(done, current)
        return True

    def _note_under_way(self, found: dict[int, set[str]], closed: set[int]) -> None:
        """Documents of writes under way: named since the last look, or before it."""
        for seq, docs in found.items():
            self._open.setdefault(seq, set()).update(docs)
        for seq in [s for s in self._open if s in closed or s not in found]:
            del self._open[seq]

    def _take(self, done: follow.Absorbed, current: bool) -> None:
        """Make an absorbed change the graph, with the vectors in step."""
        self.graph = done.graph
        self._retriever = None
        self.vectors.follow(done.masks, done.added, current, sizes(self.graph))

    # --- the retriever ----------------------------------------------------------------------

    def retriever(self, build: Callable[[R | None, frozenset[str]], R]) -> R:
        """The retriever over the current graph, built by `build(previous, stale)` if none:
        `previous` the last one (None: start afresh), `stale` passages changed since."""
        if self._retriever is None:
            if self._writing:  # the graph is changing: build from it alone, start no chain
                self._retriever = build(None, frozenset())
                return self._retriever
            stale = frozenset(self.stale_passages)
            self._retriever = self._previous = build(self._previous, stale)
            self.stale_passages.difference_update(stale)
        return self._retriever

    def forget_retriever(self) -> None:
        """Drop the retriever: the next one is built from scratch (new search settings)."""
        self._retriever = self._previous = None
        self.stale_passages.clear()

    @property
    def writing(self) -> bool:
        """Whether a write of this process is under way (the graph is changing)."""
        return self._writing > 0

    # --- writes ----------------------------------------------------------------------------

    def begin(self, doing: str = "write",
              waiting: Callable[[str], None] | None = None) -> Write:
        """Start a write: take the writer lease (`waiting` is told whom we wait for), close
        a dead writer's write, catch the graph up, load the collections, drop the
        retriever. Rows change only after `Write.touch`."""
        session = WriteSession(self.store, doing)
        closed = session.start(waiting)
        try:
            if session.quiet and self.applied == (closed, CLOSED):
                self._open = {}  # nothing after our last look
            else:
                self.refresh()
            self.store.ensure_all_loaded()
        except BaseException as exc:
            session.stop(str(exc))
            raise
        self._retriever = None
        self._writing += 1
        return Write(session, self.vectors_current(), self.passage_texts,
                     self.stale_passages if self._previous is not None else None)

    def vector_sink(self, write: Write) -> Callable[[str, np.ndarray], None] | None:
        """Where a write appends the vectors of rows it adds (None: they are stale)."""
        return self.vectors.sink() if write.vectors_current else None

    def replace_graph(self, graph: KnowledgeGraph, masks: dict[str, np.ndarray],
                      write: Write) -> None:
        """After a removal: the graph without the removed rows, the vectors compacted with
        the same masks of rows kept (or discarded when they cannot be)."""
        self.graph = graph
        self._retriever = None
        self.vectors.compact(masks, write.vectors_current)

    def finish(self, write: Write, completed: Iterable[str]) -> None:
        """After a write: trust the vectors only if they hold the graph's rows; if anything
        was written, flush, close the write (documents `completed` are whole) and snapshot
        the graph."""
        try:
            self._finish(write, completed)
        finally:
            self._writing -= 1
            self._retriever = None  # one built during the write saw it half done

    def _finish(self, write: Write, completed: Iterable[str]) -> None:
        self.vectors.check(write.vectors_current, sizes(self.graph))
        if write.session.seq is not None and self.store.is_local:
            # Milvus Lite searches unflushed rows far slower (benchmarks/RESULTS.md, "Search
            # backends give the same passages"); a server seals its own.
            try:
                self.store.flush()
            except BaseException as exc:
                write.session.stop(str(exc))
                raise
        seq = write.session.finish(completed)
        if seq is None:  # nothing written: the snapshot stays current
            return
        self.applied = (seq, CLOSED)
        self._open = {}
        self._meta = write.session.meta
        self._save_snapshot(self.graph, seq)
        self.vectors.index(sizes(self.graph))  # after the write: its rows join the indexes

    def stop(self, write: Write, reason: str) -> None:
        """After a write that failed: what it touched is unfinished; the graph keeps what
        it changed (the log's re-read of those ids corrects it on the next refresh)."""
        self._retriever = None
        self._writing -= 1
        self.vectors.check(write.vectors_current, sizes(self.graph))
        write.session.stop(reason)
        self._meta = write.session.meta
