"""Keeping a graph's lexicon file (`saved`: BM25 index, entity linker, passage texts) in
step with writes, at the cost of what changed rather than of the graph.

The file is a start, not a copy that must be current: a lexicon saved at any write is
brought to the graph by `saved.carried` at the cost of what differs. So it is read and
written only when that pays:
- A write whose process holds the lexicon (a retriever built, or one read before) carries
  it under the write's lease. It saves it once the write closed, if the passages changed
  since the file was saved reach an eighth of the graph's (`STALE_SHARE`), or there is no
  complete file.
- A write whose process holds none reads the file only when the write itself changes that
  share of the passages, or the file is missing or STALE_WRITES behind (so the change log
  still names what changed since). A small write into a large graph leaves the file
  behind: reading and saving it cost most of a 10-passage add at 1M relations
  (benchmarks/RESULTS.md, "Small writes into a large graph"). (The write's start still
  reads the file's texts, `saved_texts`, which costs far less: benchmarks/RESULTS.md,
  "Figures moved from code comments".)
- The first retriever of a process saves its lexicon when the file lacks texts or is that
  far behind.
Saved texts join a version's known texts when the graph is at the write they were saved
at, or at a later one if the change log still holds every write since: then all but the
passages those writes touched (`Keeper.saved_texts`).

The keeper knows graph versions (`state.version`) only as the values they are: the opened
graph's state (`state.opened`) asks it and tells it, and keeps what it answers.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from hopgraph.graph import KnowledgeGraph
from hopgraph.lexicon.lexical import LocalBM25
from hopgraph.lexicon.link import EntityLinker
from hopgraph.lexicon.saved import VERSION, Lexicon, carried, passage_texts, read
from hopgraph.store import MilvusStore, sidecar
from hopgraph.store.changes import WHOLE, ChangeLog

log = logging.getLogger(__name__)

STALE_SHARE = 8  # the file is saved again once 1/8 of the passages changed since
STALE_WRITES = 100  # or once it is this many writes behind (the change log keeps 1,000)


CLOSED = WHOLE  # the part number of a write taken whole


class Carrier(Protocol):
    """What the keeper asks of a retriever: where the next one's BM25 index and linker
    start (`carried`: the holder of its BM25 index, and its linker if built or
    inherited), and its linker (built if not yet)."""

    def carried(self) -> tuple[Any, EntityLinker | None]: ...

    @property
    def linker(self) -> EntityLinker: ...


def changed_between(old: LocalBM25, new: LocalBM25) -> int:
    """Passages in one index and not the other."""
    return len(set(old.ids).symmetric_difference(new.ids))


class Keeper:
    """Keeps one graph's lexicon file: the starting point of a process's first retriever,
    saved again when enough changed (see the module docstring). `at` arguments are a
    version's place in the change log: (write, part), part CLOSED for a write taken whole."""

    def __init__(self, store: MilvusStore) -> None:
        self.store = store
        self.path = sidecar.lexicon_path(store.snapshot_path())
        self.last: Lexicon | None = None  # the last one read, made or saved, of write `last_at`
        self.last_at = -1
        self.saved_at = -1  # the write of the file on disk, as far as this process knows
        self.complete = False  # whether that file holds every passage's text
        self.unsaved = 0  # passages changed since that file, as far as this process knows
        self.unusable_texts = False  # whether the log no longer says which of its texts hold
        self.latest: Callable[[], Carrier | None] = lambda: None  # the last retriever (weakly)
        self._texts_tried: tuple[int, int] = (-1, 0)
        # Where the graph was when a write failed: it holds what that write changed.
        self.failed_write_at: tuple[int, int] = (-1, 0)

    def starting_lexicon(self) -> Lexicon | None:
        """The last lexicon this process read or made, else the file's (of any write; None
        if there is none or it is unreadable)."""
        if self.last is None:
            started = time.perf_counter()
            found = read(self.path, self.store.identity)
            if found is not None:
                self.last, saved = found
                self.last_at = self.saved_at = saved.writes
                self.complete = saved.texts >= self.last.bm25.size
                self.unsaved = 0
                log.info("read the lexicon of write #%d from %s in %.2fs", saved.writes,
                         self.path, time.perf_counter() - started)
        return self.last

    def saved_texts(self, at: tuple[int, int], graph: KnowledgeGraph,
                    known: Mapping[str, str], changes: ChangeLog) -> dict[str, str]:
        """The saved texts that may join `known` (a version's, at `at`): all of them when
        the graph is at the write they were saved at; at a later write, those of passages
        no write since touched (when the change log still holds them all). The file is read
        once per graph and write."""
        writes, part = at
        if (part != CLOSED or len(known) >= len(graph.passage_ids)
                or self._texts_tried == (writes, id(graph)) or self.failed_write_at == at):
            return {}
        self._texts_tried = (writes, id(graph))
        saved_at, texts = sidecar.texts(self.path, self.store.identity)
        if texts and saved_at < writes:
            touched = self._touched(changes, saved_at, writes)
            if touched is None:  # unusable: the first query saves the file again
                self.unusable_texts = True
                return {}
            texts = {pid: text for pid, text in texts.items() if pid not in touched}
        if not texts or saved_at > writes:
            return {}
        return {pid: text for pid, text in texts.items() if pid not in known}

    @staticmethod
    def _touched(changes: ChangeLog, since: int, upto: int) -> set[str] | None:
        """Passages the writes after `since` up to `upto` touched (None: the log no longer
        holds them all)."""
        parts = [p for p in changes.since(since, WHOLE) if p.seq <= upto]
        if {p.seq for p in parts if p.kind == "end"} != set(range(since + 1, upto + 1)):
            return None
        return {pid for p in parts if p.kind == "passages" for pid in p.ids}

    def closing(self, graph: KnowledgeGraph, known: Mapping[str, str], touched: int,
                writes: int) -> Callable[[int], dict[str, str]] | None:
        """Before a write closes (under its lease: what Milvus holds is this write's): the
        lexicon of the graph it leaves (`known`: the texts still current), carried from the
        last retriever's or the last one made or read (`writes`: the last closed write
        before this one). Returns what keeps it once the write closed, saving it when
        enough changed, and gives the texts it read (current at that write); None when it
        could not be made, or was not worth making (`touched`: the passages the write
        touched)."""
        latest = self.latest()
        holder, linker = (None, None) if latest is None else latest.carried()
        bm25: LocalBM25 | None = None if holder is None else holder.bm25
        passages = len(graph.passage_ids)
        if bm25 is None or linker is None:
            if self.last is None and touched * STALE_SHARE < passages and (
                    self._behind(writes) < STALE_WRITES):
                log.info("a write of %d passages left the lexicon file %s as it was (a "
                         "reader brings it up to date)", touched, self.path)
                return None
            saved = self.starting_lexicon()
            if saved is not None:
                bm25, linker = bm25 or saved.bm25, linker or saved.linker
        started = time.perf_counter()
        try:
            lexicon, fetched = carried(self.store, graph, bm25, linker, known)
            missing = [p for p in graph.passage_ids if p not in known and p not in fetched]
            if len(missing) * 4 <= passages:  # else a reader scans
                fetched.update(passage_texts(self.store, graph, missing))
        except Exception as exc:  # the write itself is done: this costs only speed later
            log.warning("could not bring the lexicon file %s up to date (%s: %s); a later "
                        "process builds it", self.path, type(exc).__name__, exc)
            return None
        log.info("brought the lexicon up to date in %.2fs (%d texts read)",
                 time.perf_counter() - started, len(fetched))

        def keep(closed: int) -> dict[str, str]:
            self.last, self.last_at = lexicon, closed
            self.unsaved += touched
            if self.worth_saving(passages):
                texts = {pid: known[pid] if pid in known else fetched[pid]
                         for pid in graph.passage_ids if pid in known or pid in fetched}
                self.save(lexicon, texts, closed, len(texts) == passages)
            return fetched

        return keep

    def _behind(self, writes: int) -> int:
        """How many writes the file is behind write `writes` (its header only; a missing or
        unreadable file is infinitely behind)."""
        saved = sidecar.load(self.path, self.store.identity, version=VERSION)
        return writes - saved.writes if saved is not None else 1 << 62

    def worth_saving(self, passages: int) -> bool:
        """Whether the file is missing, lacks texts or has texts the log can no longer
        vouch for, or is STALE_SHARE behind."""
        return (self.saved_at < 0 or not self.complete or self.unusable_texts
                or self.unsaved * STALE_SHARE >= max(passages, 1))

    def note_built(self, at: tuple[int, int], graph: KnowledgeGraph,
                   known: Mapping[str, str], retriever: Carrier, first: bool) -> None:
        """After a retriever was built on a version (at `at`, its texts `known`), not on a
        graph being written: it is the next write's start; the first of a process saves its
        lexicon when the file is worth saving again (and the version is at a closed write,
        its texts all known)."""
        self.latest = weakref.ref(retriever)
        writes, part = at
        holder, _ = retriever.carried()
        bm25: LocalBM25 | None = holder.bm25
        if not first or bm25 is None or part != CLOSED or (
                self.saved_at == writes and self.complete):
            return
        if self.last is not None and self.last_at == self.saved_at:  # the file's lexicon
            self.unsaved = changed_between(self.last.bm25, bm25)
        if self.worth_saving(len(graph.passage_ids)) and all(
                pid in known for pid in graph.passage_ids):
            self.save(Lexicon(bm25, retriever.linker), dict(known), writes, complete=True)

    def save(self, lexicon: Lexicon, texts: Mapping[str, str], writes: int,
             complete: bool) -> None:
        """Save `lexicon` with `texts` at write `writes`; a failure is logged (it costs only
        a later process's speed)."""
        started = time.perf_counter()
        self.last, self.last_at = lexicon, writes
        try:
            strings, arrays = lexicon.saved_form()
            sidecar.save(self.path, self.store.identity, writes, VERSION, dict(texts),
                         strings, arrays)
        except Exception as exc:  # after a write closed: it must not fail because of this
            log.warning("could not save the lexicon file %s (%s: %s); a later process "
                        "builds it", self.path, type(exc).__name__, exc)
            return
        self.saved_at = writes
        self.complete = complete
        self.unsaved = 0
        self.unusable_texts = False
        log.info("saved the lexicon of write #%d to %s in %.2fs", writes, self.path,
                 time.perf_counter() - started)

    def discard(self) -> None:
        """Forget the lexicon and remove its file (the graph was dropped)."""
        self.path.unlink(missing_ok=True)
        self.last = None
        self.last_at = -1
        self.saved_at = -1
        self.complete = False
        self.unsaved = 0
        self.unusable_texts = False

    def current(self, at: tuple[int, int]) -> bool:
        """Whether the last lexicon is of the graph at `at` (made when that write closed):
        the cheapest start."""
        return self.last is not None and at == (self.last_at, CLOSED)
