"""One opened graph in one process: its current version, and the machinery that makes the
next one.

Milvus holds the graph; a process holds one `GraphVersion` of it (`state.version`), an
immutable value, and replaces it whole:

- **opened** from the snapshot when the snapshot's stamp equals the number of the graph's
  last closed write (the meta row), else from Milvus (`version.source` says which);
- **followed** (`refresh`): other processes' settled change-log parts, read back from
  Milvus (`store.follow.absorb`, on a copy of the graph), make the next version;
- **written** (`begin` → `finish`): a write takes the writer lease, catches up, and works on
  a graph of its own: a copy of the version's when anything was built on that version (a
  retriever, or `fork` asked), else the version's own graph, lent to it (nobody else holds
  it). Its rows are committed under the lease (`ingest.sync`); closing the write makes the
  next version from the write's graph. A write that fails makes a version too (its graph
  holds what it changed; the next look at the log re-reads those ids: `stop`).

Kept beside the version, for the versions to come: the snapshot (saved when this process
closes a write); the vectors (`store.vectors.GraphVectors`: files beside the snapshot on
Milvus Lite, in memory with a server; a version gets them only while they hold exactly its
rows, `vectors_of`); the retriever of the version (`state.retrievers`), built on first use
by the caller's `build`. What a build learns (texts and vectors read from Milvus) comes
back in `Built` and is kept here; nothing writes into a version.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from types import MappingProxyType
from typing import Any, Generic, TypeVar

import numpy as np

from hopgraph.graph import KnowledgeGraph
from hopgraph.lexicon.keeper import Keeper
from hopgraph.state.retrievers import Built, Held, Retrievers, Start
from hopgraph.state.version import CLOSED, Changes, GraphVersion, advance, opened, with_texts
from hopgraph.store import follow, snapshot
from hopgraph.store.ann import Ann
from hopgraph.store.changes import ChangeLog
from hopgraph.store.follow import scan_graph, sizes
from hopgraph.store.milvus import MilvusStore
from hopgraph.store.unfinished import unfinished_of
from hopgraph.store.vectors import GraphVectors, vector_files
from hopgraph.store.writes import Write, WriteSession

log = logging.getLogger(__name__)

R = TypeVar("R", bound=Held)
_READER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hopgraph-meta")


class GraphState(Generic[R]):
    """One opened graph's version and what makes the next (see the module docstring)."""

    def __init__(self, store: MilvusStore, dim: int, cap: int | None = None) -> None:
        self.store = store
        self.dim = dim
        self.log = ChangeLog(store, store.changes)
        files = vector_files(store.snapshot_path(), dim, shared=store.is_local, cap=cap)
        self.vectors = GraphVectors(files, store.ann_min_rows, cap)  # cap: `config.mirror_cap`
        self.keeper = Keeper(store)
        self.retrievers: Retrievers[R] = Retrievers(self.keeper)
        self._writing = 0  # writes under way in this process
        self._lent: KnowledgeGraph | None = None  # a version's graph a write changes
        self._copy_next = False  # `fork`: the next write copies the graph
        self._meta: dict[str, Any] = {}  # the meta row as last read (it names stopped writes)
        self._open: dict[int, set[str]] = {}  # documents of writes under way, by write
        self._loaded_from = ""
        self.version = self._load()
        self.refresh()  # the parts of a write under way that are already settled
        self.vectors.indexing.landed = self._indexed  # (the index a process ended before
        self.vectors.index(self.version.sizes, opening=True)  # it finished is built now)

    # --- the current version, part by part ------------------------------------------------

    @property
    def graph(self) -> KnowledgeGraph:
        """The current version's graph."""
        return self.version.graph

    @property
    def applied(self) -> tuple[int, int]:
        """(write, part) up to which the current version follows the change log."""
        return self.version.at

    @property
    def source(self) -> str:
        """Where the graph was read from when opened or last reloaded: "snapshot" or
        "Milvus" (what came after is followed: `GraphVersion.source`)."""
        return self._loaded_from

    @property
    def unfinished(self) -> Mapping[str, str]:
        """Documents that may be partial, with why, as of the last look at the log
        (`store.unfinished`)."""
        return self.version.unfinished

    def _looked(self) -> None:
        """The meta row or the writes under way were seen again: the current version names
        the unfinished documents they give."""
        found = unfinished_of(self._meta, self._open)
        if found != dict(self.version.unfinished):
            self.version = replace(self.version, unfinished=MappingProxyType(found))

    # --- the graph and its snapshot --------------------------------------------------------

    def _load(self) -> GraphVersion:
        """The version of the graph's snapshot when that is current, else read from
        Milvus."""
        started = time.perf_counter()
        self.retrievers.forget()
        meta = self.store.fresh_meta()
        path, writes = self.store.snapshot_path(), int(meta.get("writes", 0))
        self._meta = meta
        # The write number is read before the rows: a write meanwhile is refreshed.
        saved = snapshot.load(path, self.store.identity, writes)
        if saved is None:
            graph, source = scan_graph(self.store), "Milvus"
            self.vectors.unknown(sizes(graph))  # not known to match this graph
            self._save_snapshot(graph, writes)
        else:
            graph, self.vectors.rows, source = saved.graph, saved.vector_rows, "snapshot"
        self._loaded_from = source
        log.info("loaded graph %s from %s: %d entities, %d relations in %.2fs",
                 self.store.graph, source, len(graph.entity_ids), len(graph.relations),
                 time.perf_counter() - started)
        return opened((writes, CLOSED), graph, source, unfinished_of(meta, self._open))

    def _save_snapshot(self, graph: KnowledgeGraph, writes: int) -> None:
        """Save the graph as of closed write `writes` (a failure costs speed only: logged)."""
        path = self.store.snapshot_path()
        try:
            snapshot.save(graph, path, self.store.identity, writes, self.vectors.rows)
        except OSError as exc:
            log.warning("could not save the graph snapshot %s (%s); the next open rebuilds "
                        "the graph from Milvus", path, exc)

    def fork(self) -> None:
        """Give the next write its own copy of the graph, even when nothing was built on
        the current version yet (a server hands versions to other threads)."""
        self._copy_next = True

    def drop(self) -> bool:
        """Delete the graph's collections, snapshot, vector and lexicon files; whether it
        existed. Reads then say it does not exist; a write makes it again (`begin`)."""
        found = self.store.drop()  # (its snapshot and vector files too)
        self.vectors.unknown({})
        self.keeper.discard()
        self._meta, self._open = {}, {}
        self.version = opened((0, CLOSED), KnowledgeGraph(), "dropped", {})
        self.retrievers.forget()
        return found

    # --- the vector files -------------------------------------------------------------------

    def vectors_of(self, version: GraphVersion) -> dict[str, np.ndarray | None]:
        """The on-disk vectors that hold exactly `version`'s rows (memory maps), by kind
        (None: stale, or a write of this process is changing the files)."""
        if self._writing:
            return {kind: None for kind in version.sizes}
        return self.vectors.matching(version.sizes)

    def indexes_of(self, version: GraphVersion) -> dict[str, Ann]:
        """The nearest-neighbour indexes of `version`'s vectors (`store.ann`)."""
        return {} if self._writing else self.vectors.indexes(version.sizes)

    def _indexed(self) -> None:
        """A background build saved an index (`store.indexing`): the retriever takes it."""
        self.retrievers.take_indexes(self.version, self.indexes_of)

    def vectors_current(self) -> bool:
        """Whether every vector file holds exactly the current graph's rows."""
        return self.vectors.current(self.version.sizes)

    def _keep_vectors(self, version: GraphVersion, matrices: dict[str, np.ndarray]) -> None:
        """Keep vectors a build read back from Milvus for `version` (on disk on Lite), if it
        is still the current one."""
        if not matrices or self._writing or not self.version.same(version):
            return
        self.vectors.keep(matrices)
        if self.store.is_local and version.closed:
            self._save_snapshot(version.graph, version.at[0])

    # --- following other processes ----------------------------------------------------------

    def refresh(self, quick: bool = False) -> bool:
        """Apply other processes' settled change-log parts after the current version; whether
        the graph changed. Behind the log's start: reloads. `quick`: first a quick look
        (`quiet`)."""
        version = self.version
        if quick and self.log.quiet(*version.at):
            return False
        with self.store.strong_reads():
            pending = self.log.pending(*version.at)
            self._note_under_way(pending.open, {p.seq for p in pending.closed})
            if not (pending.settled or pending.closed or pending.tail):
                self._looked()
                return False
            meta = None
            if pending.closed:  # writes ended: which documents they left unfinished (read
                meta = _READER.submit(self.store.fresh_meta)  # beside the rows)
            if pending.settled or pending.closed:
                first = (pending.settled or pending.closed)[0].seq
                if first > version.at[0] + (1 if version.closed else 0):
                    log.info("graph %s: the change log no longer reaches write #%d; "
                             "reloading", self.store.graph, version.at[0])
                    self.version = self._load()
                    return True
            current = self.vectors_current()
            parts = pending.settled + pending.tail
            done = follow.absorb(self.store, version.graph, parts,
                                 self.dim if current else None)
            touched = follow.touched(parts)["passages"]  # their texts may have changed
            self.retrievers.touched(touched)
            if meta is not None:
                self._meta = meta.result()
        seq, part = pending.last
        at = (seq, CLOSED) if seq in {p.seq for p in pending.closed} else (seq, part)
        unfinished = unfinished_of(self._meta, self._open)
        if not done.changed:  # the same graph, further along the log
            self.version = replace(version, at=at, unfinished=MappingProxyType(unfinished))
            return False
        self.vectors.follow(done.masks, done.added, current, sizes(done.graph))
        self.version = advance(version, Changes(at, done.graph, "followed", touched,
                                                done.texts, unfinished))
        return True

    def _note_under_way(self, found: dict[int, set[str]], closed: set[int]) -> None:
        """Documents of writes under way: named since the last look, or before it."""
        for seq, docs in found.items():
            self._open.setdefault(seq, set()).update(docs)
        for seq in [s for s in self._open if s in closed or s not in found]:
            del self._open[seq]

    # --- the retriever ----------------------------------------------------------------------

    def retriever(self, build: Callable[[Start[R]], Built[R]]) -> R:
        """The retriever of the current version, built by `build` if there is none yet
        (`state.retrievers`)."""
        version = self.version
        found = self.retrievers.of(version)
        if found is not None:
            return found
        if self._writing:  # the graph is changing: build from it alone, keep nothing
            return build(self._start(version, fresh=True)).retriever
        if not self.retrievers.carries:
            version = self._join_saved_texts()
        start = self._start(version)
        made = build(start)
        self._learn(version, made)
        if not self._writing:  # (a write may have begun meanwhile, in another thread)
            self.retrievers.keep(self.version, made.retriever, start)
        return made.retriever

    def _start(self, version: GraphVersion, fresh: bool = False) -> Start[R]:
        return self.retrievers.start(version, self.store, self.vectors_of(version),
                                     lambda: self.indexes_of(version), fresh)

    def _join_saved_texts(self) -> GraphVersion:
        """The current version, knowing the lexicon file's texts that are still current
        (`Keeper.saved_texts`)."""
        version = self.version
        texts = self.keeper.saved_texts(version.at, version.graph, version.texts, self.log)
        if texts and not self._writing and self.version is version:
            self.version = with_texts(version, texts)
        return self.version

    def _learn(self, version: GraphVersion, made: Built[R]) -> None:
        """Keep what building a retriever of `version` read from Milvus, while it is the
        current version: the texts it knows (its mirror's; none with a Milvus searcher,
        whose BM25 index holds what the texts were for) and the vectors it scanned."""
        if self._writing or not self.version.same(version):
            return
        if made.texts is not None:
            self.version = replace(self.version, texts=MappingProxyType(dict(made.texts)))
        self._keep_vectors(self.version, made.vectors)

    def forget_retriever(self) -> None:
        """Drop the retriever: the next one is built from scratch (new search settings)."""
        self.retrievers.forget()

    # --- writes ----------------------------------------------------------------------------

    def begin(self, doing: str = "write", waiting: Callable[[str], None] | None = None,
              leased: Callable[[], None] | None = None) -> Write:
        """Start a write: take the writer lease (`waiting` is told whom we wait for; then
        `leased` is called), close a dead writer's write, catch up, load the collections,
        and give the write its graph: a copy of the version's if anything was built on it
        (or `fork` asked), else the version's own. Rows change only after `Write.touch`."""
        self.store.made_again()  # after `drop`: empty, as opening it would make it
        if not self.retrievers.carries:
            self._join_saved_texts()  # before the write: it drops those it touches
        session = WriteSession(self.store, doing)
        closed = session.start(waiting, leased)
        try:
            if session.quiet and self.applied == (closed, CLOSED):
                self._open = {}  # nothing after our last look
                self._looked()
            else:
                self.refresh()
            self.store.ensure_all_loaded()
        except BaseException as exc:
            session.stop(str(exc))
            raise
        version = self.version
        held = self.retrievers.of(version) is not None
        graph = version.graph.copy() if held or self._copy_next else version.graph
        self._copy_next = False
        if graph is version.graph:
            self._lent = graph
        current = self.vectors_current()
        self._writing += 1
        return Write(session, graph, current, dict(version.texts))

    def vector_sink(self, write: Write) -> Callable[[str, np.ndarray], None] | None:
        """Where a write appends the vectors of rows it adds (None: they are stale)."""
        return self.vectors.sink() if write.vectors_current else None

    def replace_graph(self, graph: KnowledgeGraph, masks: dict[str, np.ndarray],
                      write: Write) -> None:
        """After a removal: the write's graph without the removed rows, the vectors
        compacted with the same masks of rows kept (or discarded when they cannot be)."""
        write.graph = graph
        self.vectors.compact(masks, write.vectors_current)

    def finish(self, write: Write, completed: Iterable[str]) -> None:
        """After a write: trust the vectors only if they hold the write's rows; if anything
        was written, flush, close the write (documents `completed` are whole), make the
        next version of the write's graph, snapshot it and keep the lexicon file in step."""
        seq = write.session.seq
        try:
            keep = None if seq is None else self.keeper.closing(
                write.graph, write.texts, write.session.passages_touched, self.applied[0])
        finally:  # even interrupted, the write is closed
            closed = self._close(write, completed)
        if keep is not None and closed is not None:
            fetched = keep(closed)
            if fetched and self.version.at == (closed, CLOSED):
                self.version = with_texts(self.version, fetched)

    def _close(self, write: Write, completed: Iterable[str]) -> int | None:
        """Close the write and make the next version; the write's number (None: it wrote
        nothing, and the version stays)."""
        try:
            self.vectors.check(write.vectors_current, sizes(write.graph))
            if write.session.seq is not None and self.store.is_local:
                # Milvus Lite searches unflushed rows far slower (benchmarks/RESULTS.md,
                # "Search backends give the same passages"); a server seals its own.
                try:
                    self.store.flush()
                except BaseException as exc:
                    write.session.stop(str(exc) or type(exc).__name__)
                    raise
            closed = write.session.finish(completed)
        except BaseException:
            self._adopt(write)
            raise
        finally:
            self._writing -= 1
            self._lent = None
        if closed is None:  # nothing written: the graph is the version's
            return None
        self._open = {}
        self._meta = write.session.meta
        self.retrievers.touched(write.touched)
        self.version = advance(self.version, Changes(
            (closed, CLOSED), write.graph, "written", write.touched,
            texts={pid: write.texts[pid] for pid in write.touched if pid in write.texts},
            unfinished=unfinished_of(self._meta, self._open)))
        self._save_snapshot(write.graph, closed)
        self.vectors.index(sizes(write.graph))  # in the background: rows join the indexes
        return closed

    def stop(self, write: Write, reason: str) -> None:
        """After a write that failed: what it touched is unfinished; the next version holds
        the write's graph as it changed it (`_adopt`)."""
        self._writing -= 1
        self._lent = None
        self.vectors.check(write.vectors_current, sizes(write.graph))
        try:
            write.session.stop(reason)
        finally:
            self._adopt(write)

    def _adopt(self, write: Write) -> None:
        """A write that did not close: the next version holds its graph as it changed it, at
        the same place in the log (the log's re-read of those ids corrects it on the next
        refresh)."""
        self._meta = write.session.meta
        self.retrievers.touched(write.touched)
        self.version = advance(self.version, Changes(
            self.version.at, write.graph, "stopped", write.touched,
            unfinished=unfinished_of(self._meta, self._open)))
        self.retrievers.drop_built()  # a lent graph changed under it
        self.keeper.failed_write_at = self.version.at
