"""One write to a graph, safe beside any number of other processes.

A write

1. takes the graph's writer lease (`store.lease`): writes are one at a time, across
   processes and machines; the lease is held until the write ends;
2. reads strong from then on, and closes the write of a process that died holding the
   lease: its end part says "stopped" and its documents are marked unfinished in the meta
   row (`recover`);
3. before each change to the rows, announces the ids and documents in the change log
   (`touch`; the first one numbers the write, one above the last closed write);
4. ends with an end part and the meta row: the write counter moves to this write, and the
   documents this write completed are no longer unfinished (`finish`), or, when it failed,
   its documents are marked unfinished (`stop`).

A half-written document stays unfinished, whatever is written after it, until a write
that completes it (ingesting it again) or removes it (`delete`, `check --repair`) ends.
The meta row is read-modified-written only under the lease, so those writes do not race.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from hopgraph.graph import KnowledgeGraph
from hopgraph.store.changes import KEEP_WRITES, WHOLE, ChangeLog, Part, ending, parts_of
from hopgraph.store.lease import WriterLease
from hopgraph.store.milvus import MilvusStore
from hopgraph.store.unfinished import mark

log = logging.getLogger(__name__)


class WriteSession:
    """One write under the lease (see the module docstring)."""

    def __init__(self, store: MilvusStore, doing: str) -> None:
        self.store = store
        self.doing = doing
        self.wait = store.lease_wait
        self.lease = WriterLease(store, store.writers, store.lease_seconds,
                                 single_process=store.is_local)
        self.log = ChangeLog(store, store.changes)
        self.seq: int | None = None  # this write's number, once it changed something
        self.parts = 0
        self.passages_touched = 0  # passage ids announced (the lexicon keeper asks)
        self.docs: set[str] = set()
        self.completed: set[str] = set()  # what `writing` tells `finish`
        self.meta: dict[str, Any] = {}  # the meta row as of `recover` (no one else writes it now)
        self.quiet = False  # whether `recover` found nothing logged after the last close
        self._strong: AbstractContextManager[None] | None = None

    @property
    def who(self) -> str:
        claim = self.lease.claim
        return claim.who if claim else self.doing

    # --- start -------------------------------------------------------------------------------

    def start(self, waiting: Callable[[str], None] | None = None,
              leased: Callable[[], None] | None = None) -> int:
        """Take the lease (then call `leased`), switch this thread to strong reads and close
        a dead writer's write; returns the number of the last closed write."""
        self.lease.acquire(self.doing, self.wait, waiting)
        try:
            if leased is not None:
                leased()
            # Taken now, after the holders before us released: reads of rows this write
            # has not written are made at it (`store.collections.LeaseReads`).
            at = None if self.store.is_local else self.store.timestamp()
            self._strong = self.store.strong_reads(at)
            self._strong.__enter__()
            return self.recover()
        except BaseException:
            self._end_session()
            raise

    def recover(self) -> int:
        """Close writes left open by processes that died holding the lease (any open write
        is one: we hold the lease now); returns the number of the last closed write."""
        meta = self.meta = self.store.fresh_meta()
        closed = int(meta.get("writes", 0))
        parts = self.log.since(closed, WHOLE)
        self.quiet = not parts
        if not parts:
            return closed
        unfinished = dict(meta.get("unfinished", {}))
        by_seq: dict[int, list[Part]] = {}
        for part in parts:
            by_seq.setdefault(part.seq, []).append(part)
        for seq, group in sorted(by_seq.items()):
            docs = {d for p in group if p.kind != "done" for d in p.docs}
            end = next((p for p in group if p.kind == "end"), None)
            if end is None:
                why = f"write #{seq} stopped before it finished"
                log.warning("closing %s (%d documents unfinished)", why, len(docs))
                self.log.append(ending(seq, max(p.part for p in group) + 1, "stopped",
                                       "closed by " + self.who))
                mark(unfinished, docs, why)
            elif end.outcome == "done":
                for doc in {d for p in group if p.kind == "done" for d in p.docs}:
                    unfinished.pop(doc, None)
            else:
                mark(unfinished, docs, f"write #{seq} stopped before it finished")
            closed = seq
        self.meta = {**meta, "writes": closed, "unfinished": unfinished}
        self.store.put_meta(self.meta)
        return closed

    # --- during ------------------------------------------------------------------------------

    def touch(self, kind: str, ids: Sequence[str], docs: Iterable[str]) -> None:
        """Announce that rows `ids` of `kind` (of documents `docs`) are about to change."""
        self.lease.check()
        if self.seq is None:
            self.seq = int(self.meta.get("writes", 0)) + 1
        docs = set(docs)
        self.docs |= docs
        if kind == "passages":
            self.passages_touched += len(ids)
        parts = parts_of(self.seq, self.parts, kind, list(ids), docs)
        self.log.append(parts)
        self.parts += len(parts)

    # --- end ---------------------------------------------------------------------------------

    def finish(self, completed: Iterable[str]) -> int | None:
        """End the write: documents `completed` are whole now. Returns this write's number
        (None: it changed nothing)."""
        try:
            if self.seq is not None:
                completed = sorted(set(completed))
                self.log.append(ending(self.seq, self.parts, "done", self.who, completed))
                meta = self.meta
                unfinished = dict(meta.get("unfinished", {}))
                for doc in completed:
                    unfinished.pop(doc, None)
                meta = {k: v for k, v in meta.items() if k != "writing"}  # an older version's
                self.meta = {**meta, "writes": self.seq, "unfinished": unfinished}
                self.store.put_meta(self.meta)
                self.log.trim(self.seq - KEEP_WRITES)
            return self.seq
        finally:
            self._end_session()

    def stop(self, reason: str) -> None:
        """End a write that failed: what it touched is unfinished (best effort: when Milvus
        itself failed, the next writer's `recover` does this)."""
        try:
            if self.seq is not None:
                self.log.append(ending(self.seq, self.parts, "stopped", self.who))
                meta = self.meta
                unfinished = dict(meta.get("unfinished", {}))
                mark(unfinished, self.docs, f"write #{self.seq} failed: {reason}")
                self.meta = {**meta, "writes": self.seq, "unfinished": unfinished}
                self.store.put_meta(self.meta)
        except Exception as exc:  # the original failure matters more
            log.warning("could not close the failed write #%s: %s", self.seq, exc)
        finally:
            self._end_session()

    def _end_session(self) -> None:
        if self._strong is not None:
            self._strong.__exit__(None, None, None)
            self._strong = None
        self.lease.release()


class Write:
    """One write: its session under the lease, the graph it changes (its own; see
    `state.opened`), whether the vectors matched that graph when it started, the passage
    texts still current, and the passages it touched."""

    def __init__(self, session: WriteSession, graph: KnowledgeGraph, vectors_current: bool,
                 texts: dict[str, str]) -> None:
        self.session = session
        self.graph = graph
        self.vectors_current = vectors_current
        self.texts = texts  # known passage texts, less those the write touched
        self.touched: set[str] = set()  # passages whose texts may have changed

    def touch(self, kind: str, ids: list[str], docs: Iterable[str]) -> None:
        """Announce a change of rows `ids` of `kind` (documents `docs`) before making it."""
        self.session.touch(kind, ids, docs)
        if kind == "passages":
            self.touched.update(ids)
            for pid in ids:
                self.texts.pop(pid, None)


@contextmanager
def writing(store: MilvusStore, doing: str,
            waiting: Callable[[str], None] | None = None) -> Iterator[WriteSession]:
    """A write session for code that has no graph to keep in step (`check --repair`):
    finished when the block ends (documents in `session.completed` are whole), stopped if
    it raises."""
    session = WriteSession(store, doing)
    session.start(waiting)
    try:
        yield session
    except BaseException as exc:
        session.stop(str(exc) or type(exc).__name__)
        raise
    session.finish(session.completed)
