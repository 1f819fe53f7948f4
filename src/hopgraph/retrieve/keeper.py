"""Keeping a graph's lexicon file (`lexicon`: BM25 index, entity linker, passage texts) in
step with writes, at the cost of what changed rather than of the graph.

The file is a start, not a copy that must be current: a lexicon saved at any write is
brought to the graph by `lexicon.carried` at the cost of what differs. So it is read and
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
  reads the file's texts, `texts_into`, which costs far less: benchmarks/RESULTS.md,
  "Figures moved from code comments".)
- The first retriever of a process saves its lexicon when the file lacks texts or is that
  far behind.
Saved texts join the state's known texts when the graph is at the write they were saved
at, or at a later one if the change log still holds every write since: then all but the
passages those writes touched (`Keeper.texts_into`). From then on the state drops those a
change touches, as it does for texts a mirror read.
`retriever_start` and `retriever_built` are what the retriever pipeline asks and tells.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from hopgraph.retrieve.lexical import LocalBM25
from hopgraph.retrieve.lexicon import VERSION, Lexicon, carried, passage_texts, read
from hopgraph.retrieve.link import EntityLinker
from hopgraph.store import MilvusStore, sidecar
from hopgraph.store.changes import WHOLE
from hopgraph.store.state import CLOSED, GraphState, R
from hopgraph.store.writes import Write

log = logging.getLogger(__name__)

STALE_SHARE = 8  # the file is saved again once 1/8 of the passages changed since
STALE_WRITES = 100  # or once it is this many writes behind (the change log keeps 1,000)


def changed_between(old: LocalBM25, new: LocalBM25) -> int:
    """Passages in one index and not the other."""
    return len(set(old.ids).symmetric_difference(new.ids))


class Keeper:
    """Keeps one graph's lexicon file: the starting point of a process's first retriever,
    saved again when enough changed (see the module docstring)."""

    def __init__(self, store: MilvusStore) -> None:
        self.store = store
        self.path = sidecar.lexicon_path(store.snapshot_path())
        self.last: Lexicon | None = None  # the last one read, made or saved, of write `last_at`
        self.last_at = -1
        self.saved_at = -1  # the write of the file on disk, as far as this process knows
        self.complete = False  # whether that file holds every passage's text
        self.unsaved = 0  # passages changed since that file, as far as this process knows
        self.unusable_texts = False  # whether the log no longer says which of its texts hold
        self.latest: Callable[[], Any] = lambda: None  # the last retriever built (weakly)
        self._texts_tried: tuple[int, int] = (-1, 0)
        # `applied` of the graph when a write failed: it holds what that write changed
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

    def texts_into(self, state: GraphState[Any]) -> None:
        """Add the saved texts to the state's known ones: all of them when the graph is at
        the write they were saved at; at a later write, those of passages no write since
        touched (when the change log still holds them all)."""
        writes, part = state.applied
        known = state.passage_texts
        if (part != CLOSED or state.writing or len(known) >= len(state.graph.passage_ids)
                or self._texts_tried == (writes, id(known))
                or self.failed_write_at == state.applied):
            return
        self._texts_tried = (writes, id(known))
        saved_at, texts = sidecar.texts(self.path, self.store.identity)
        if texts and saved_at < writes:
            touched = self._touched(state, saved_at, writes)
            if touched is None:  # unusable: the first query saves the file again
                self.unusable_texts, texts = True, {}
            else:
                texts = {pid: text for pid, text in texts.items() if pid not in touched}
        if texts and saved_at <= writes and state.applied == (writes, CLOSED) and (
                not state.writing):  # a write may have begun meanwhile (another thread)
            known.update((pid, text) for pid, text in texts.items() if pid not in known)

    @staticmethod
    def _touched(state: GraphState[Any], since: int, upto: int) -> set[str] | None:
        """Passages the writes after `since` up to `upto` touched (None: the log no longer
        holds them all)."""
        parts = [p for p in state.log.since(since, WHOLE) if p.seq <= upto]
        if {p.seq for p in parts if p.kind == "end"} != set(range(since + 1, upto + 1)):
            return None
        return {pid for p in parts if p.kind == "passages" for pid in p.ids}

    def closing(self, state: GraphState[Any], touched: int) -> Callable[[int], None] | None:
        """Before a write closes (under its lease: what Milvus holds is this write's): the
        lexicon of the graph it leaves, carried from the last retriever's or the last one
        made or read. Returns what keeps it once the write closed (saving it when enough
        changed); None when it could not be made, or was not worth making (`touched`: the
        passages the write touched)."""
        latest = self.latest()
        bm25 = None if latest is None else latest.search.bm25
        linker = None if latest is None else latest.ctx.linker_base()
        passages = len(state.graph.passage_ids)
        if bm25 is None or linker is None:
            if self.last is None and touched * STALE_SHARE < passages and (
                    self._behind(state) < STALE_WRITES):
                log.info("a write of %d passages left the lexicon file %s as it was (a "
                         "reader brings it up to date)", touched, self.path)
                return None
            saved = self.starting_lexicon()
            if saved is not None:
                bm25, linker = bm25 or saved.bm25, linker or saved.linker
        known, started = state.passage_texts, time.perf_counter()
        try:
            lexicon, fetched = carried(self.store, state.graph, bm25, linker, known)
            missing = [p for p in state.graph.passage_ids if p not in known and p not in fetched]
            if len(missing) * 4 <= passages:  # else a reader scans
                fetched.update(passage_texts(self.store, state.graph, missing))
        except Exception as exc:  # the write itself is done: this costs only speed later
            log.warning("could not bring the lexicon file %s up to date (%s: %s); a later "
                        "process builds it", self.path, type(exc).__name__, exc)
            return None
        log.info("brought the lexicon up to date in %.2fs (%d texts read)",
                 time.perf_counter() - started, len(fetched))

        def keep(writes: int) -> None:
            state.passage_texts.update(fetched)  # read under the lease: current at `writes`
            self.last, self.last_at = lexicon, writes
            self.unsaved += touched
            if self.worth_saving(passages):
                texts = {pid: known[pid] if pid in known else fetched[pid]
                         for pid in state.graph.passage_ids if pid in known or pid in fetched}
                self.save(lexicon, texts, writes, len(texts) == passages)

        return keep

    def _behind(self, state: GraphState[Any]) -> int:
        """How many writes the file is behind the graph's last closed one (its header only;
        a missing or unreadable file is infinitely behind)."""
        saved = sidecar.load(self.path, self.store.identity, version=VERSION)
        return state.applied[0] - saved.writes if saved is not None else 1 << 62

    def worth_saving(self, passages: int) -> bool:
        """Whether the file is missing, lacks texts or has texts the log can no longer
        vouch for, or is STALE_SHARE behind."""
        return (self.saved_at < 0 or not self.complete or self.unusable_texts
                or self.unsaved * STALE_SHARE >= max(passages, 1))

    def note_built(self, state: GraphState[Any], retriever: Any, first: bool) -> None:
        """After a retriever was built (not during a write): it is the next write's start;
        the first of a process saves its lexicon when the file is worth saving again (and
        the graph is at a closed write, its texts all known)."""
        self.latest = weakref.ref(retriever)
        writes, part = state.applied
        bm25 = retriever.search.bm25
        if not first or bm25 is None or part != CLOSED or (
                self.saved_at == writes and self.complete):
            return
        if self.last is not None and self.last_at == self.saved_at:  # the file's lexicon
            self.unsaved = changed_between(self.last.bm25, bm25)
        known = state.passage_texts
        if self.worth_saving(len(state.graph.passage_ids)) and all(
                pid in known for pid in state.graph.passage_ids):
            self.save(Lexicon(bm25, retriever.ctx.linker), known, writes, complete=True)

    def save(self, lexicon: Lexicon, texts: dict[str, str], writes: int,
             complete: bool) -> None:
        """Save `lexicon` with `texts` at write `writes`; a failure is logged (it costs only
        a later process's speed)."""
        started = time.perf_counter()
        self.last, self.last_at = lexicon, writes
        try:
            strings, arrays = lexicon.saved_form()
            sidecar.save(self.path, self.store.identity, writes, VERSION, texts, strings,
                         arrays)
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

    def current(self, state: GraphState[Any]) -> bool:
        """Whether the last lexicon is of the graph as the state holds it (made when the
        write the graph is at closed): the cheapest start."""
        return self.last is not None and state.applied == (self.last_at, CLOSED)


class LexiconState(GraphState[R]):
    """A `GraphState` that keeps the lexicon file in step with writes (`Keeper`); the saved
    texts join the known ones when a write starts."""

    def __init__(self, store: MilvusStore, dim: int) -> None:
        self.keeper = Keeper(store)
        super().__init__(store, dim)

    def begin(self, doing: str = "write", waiting: Callable[[str], None] | None = None
              ) -> Write:
        self.keeper.texts_into(self)  # before the write: it drops those it touches
        return super().begin(doing, waiting)

    def finish(self, write: Write, completed: Iterable[str]) -> None:
        seq = write.session.seq
        try:
            keep = (None if seq is None else
                    self.keeper.closing(self, write.session.passages_touched))
        finally:  # even interrupted, the write is finished (the base class counts it)
            super().finish(write, completed)
        if keep is not None and seq is not None and self.applied == (seq, CLOSED):
            keep(seq)  # (`keep` is None when `seq` is)

    def stop(self, write: Write, reason: str) -> None:
        super().stop(write, reason)
        self.keeper.failed_write_at = self.applied  # the graph keeps what the failed write changed

    def drop(self) -> bool:
        found = super().drop()
        self.keeper.discard()
        return found


def retriever_start(state: GraphState[Any], previous: Any) -> tuple[Any, EntityLinker | None]:
    """Where a new retriever's BM25 index and linker start from: the lexicon a write of
    this process left when the graph is still at that write, else the `previous`
    retriever's searcher and linker, else the saved lexicon (whose texts then join the
    state's known texts, where they still fit)."""
    keeper = state.keeper if isinstance(state, LexiconState) else None
    if previous is not None and (keeper is None or not keeper.current(state)):
        return previous.search, previous.ctx.linker_base()
    if keeper is None:
        return None, None
    if previous is None:
        keeper.texts_into(state)
    base = keeper.starting_lexicon()
    return base, None if base is None else base.linker


def retriever_built(state: GraphState[Any], retriever: Any, previous: Any) -> None:
    """Tell the state's keeper of a retriever built (`Keeper.note_built`)."""
    if isinstance(state, LexiconState) and not state.writing:
        state.keeper.note_built(state, retriever, previous is None)
