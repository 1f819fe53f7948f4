"""The lexicon of a graph: its BM25 index and entity linker, the two structures a first
query would otherwise build over the whole graph, kept beside the snapshot with the passage
texts (`store.sidecar`) so that a new process starts from them.

Both are determined by content: a passage's term counts by its id (the id hashes the
normalized text that `lexical.tokens` reads), a linker by its entity names in order. So a
lexicon saved at any write is a starting point that `carried` brings to the graph at the
cost of what differs (passages added or removed, by id; names added at the end, else the
linker is built again), and the result equals a build from scratch. Texts, which a write may
change under the same id (case, spacing), join the state's known texts only while the graph
is at the write they were saved at (`Keeper.texts_into`); the state then drops those that a
change touches, as it does for texts a mirror read.

A `LexiconState` (the graph state `GraphRAG` uses) keeps the file in step: its `Keeper`
makes a write's lexicon under the write's lease and saves it once the write closed, stamped
with it; the first retriever of a process saves one when the file is behind the graph.
`start` and `built` are what the retriever pipeline asks and tells.
"""

from __future__ import annotations

import hashlib
import logging
import time
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hopgraph.graph import KnowledgeGraph
from hopgraph.retrieve.lexical import LocalBM25, carried_bm25, passage_bm25
from hopgraph.retrieve.link import STOPWORDS, EntityLinker
from hopgraph.store import MilvusStore, sidecar
from hopgraph.store.state import CLOSED, GraphState, R
from hopgraph.store.writes import Write

log = logging.getLogger(__name__)

# Bump when `lexical.tokens`, `link.match_key` or the trigram index change what they give:
# a saved lexicon of another version is not used. The stopwords are in it as they stand.
VERSION = "1:" + hashlib.blake2b(" ".join(sorted(STOPWORDS)).encode(), digest_size=4).hexdigest()


@dataclass(frozen=True)
class Lexicon:
    """A graph's BM25 index over its passages and its entity linker (with its trigram
    index)."""

    bm25: LocalBM25
    linker: EntityLinker

    def saved_form(self) -> tuple[dict[str, list[str]], dict[str, np.ndarray]]:
        """Strings and arrays to save (`from_saved` reads them back)."""
        ids, terms, counts = self.bm25.arrays()
        keys, grams, lookups = self.linker.arrays()
        strings = {"bm25_ids": ids, "bm25_terms": terms, "names": self.linker.names,
                   "keys": keys, "grams": grams or []}
        return strings, {**{f"bm25_{k}": v for k, v in counts.items()}, **lookups}

    @classmethod
    def from_saved(cls, saved: sidecar.Saved) -> Lexicon:
        """The lexicon a file held (ValueError if its parts do not fit)."""
        strings, arrays = saved.strings, saved.arrays
        bm25 = LocalBM25.from_arrays(strings["bm25_ids"], strings["bm25_terms"],
                                     {k: arrays[f"bm25_{k}"] for k in _BM25})
        linker = EntityLinker.from_arrays(strings["names"], strings["keys"], strings["grams"],
                                          arrays)
        return cls(bm25, linker)


_BM25 = ("indptr", "indices", "data", "lengths")
_STRINGS = ("bm25_ids", "bm25_terms", "names", "keys", "grams")
_ARRAYS = (*(f"bm25_{k}" for k in _BM25), "key_indptr", "key_entities", "unspaced_key",
           "unspaced_entity", "gram_indptr", "gram_keys")


def read(path: Path, graph: str) -> tuple[Lexicon, sidecar.Saved] | None:
    """The lexicon saved at `path` for graph `graph` (its identity), and what the file
    says of itself; None (logged) when there is none that fits."""
    saved = sidecar.load(path, graph, _STRINGS, _ARRAYS, version=VERSION)
    if saved is None:
        return None
    try:
        return Lexicon.from_saved(saved), saved
    except (ValueError, KeyError, IndexError) as exc:
        log.warning("lexicon file %s does not fit together (%s); it is built again", path,
                    exc)
        return None


def carried(store: MilvusStore, graph: KnowledgeGraph, bm25: LocalBM25 | None,
            linker: EntityLinker | None, known: dict[str, str]
            ) -> tuple[Lexicon, dict[str, str]]:
    """The lexicon of `graph` from a BM25 index and a linker of any earlier state (None:
    built from scratch), and the texts read for it from Milvus (those `known` are not)."""
    read: dict[str, str] = {}

    def text_of(ids: list[str]) -> dict[str, str]:
        read.update(passage_texts(store, graph, [i for i in ids if i not in known]))
        return {i: known[i] if i in known else read[i] for i in ids if i in known or i in read}

    if bm25 is None:
        texts = text_of(graph.passage_ids)
        bm25 = passage_bm25([(pid, texts[pid]) for pid in graph.passage_ids if pid in texts])
    else:
        bm25 = carried_bm25(bm25, graph.passage_ids, set(), text_of)
    names = graph.entity_names
    linker = (linker.extended(names) if linker is not None and linker.extends_to(names)
              else EntityLinker(names))
    return Lexicon(bm25, linker), read


def passage_texts(store: MilvusStore, graph: KnowledgeGraph, ids: list[str]) -> dict[str, str]:
    """Texts of the graph's passages `ids` from Milvus: by id when they are few, else in
    one scan of the collection."""
    if not ids:
        return {}
    if len(ids) * 4 <= len(graph.passage_ids):
        rows = store.get(store.passages, ids, ["id", "text"])
        return {row["id"]: row["text"] for row in rows}
    wanted = set(ids)
    return {row["id"]: row["text"] for row in store.scan(store.passages, ["id", "text"])
            if row["id"] in wanted}


class Keeper:
    """Keeps one graph's lexicon file: the starting point of a process's first retriever,
    saved again when a write closes (see the module docstring)."""

    def __init__(self, store: MilvusStore) -> None:
        self.store = store
        self.path = sidecar.lexicon_path(store.snapshot_path())
        self.last: Lexicon | None = None  # the last one read or saved, of write `last_at`
        self.last_at = -1
        self.saved_at = -1  # the write of the file on disk, as far as this process knows
        self.complete = False  # whether that file holds every passage's text
        self.latest: Callable[[], Any] = lambda: None  # the last retriever built (weakly)
        self._texts_tried: tuple[int, int] = (-1, 0)
        self.spoiled: tuple[int, int] = (-1, 0)  # `applied` of a graph a failed write changed

    def start(self) -> Lexicon | None:
        """The last lexicon this process read or saved, else the file's (of any write; None
        if there is none or it is unreadable)."""
        if self.last is None:
            started = time.perf_counter()
            found = read(self.path, self.store.identity)
            if found is not None:
                self.last, saved = found
                self.last_at = self.saved_at = saved.writes
                self.complete = saved.texts >= self.last.bm25.size
                log.info("read the lexicon of write #%d from %s in %.2fs", saved.writes,
                         self.path, time.perf_counter() - started)
        return self.last

    def texts_into(self, state: GraphState[Any]) -> None:
        """Add the saved texts to the state's known ones when the graph is at the write they
        were saved at (from then on, the state drops those a change touches)."""
        writes, part = state.applied
        known = state.passage_texts
        if (part != CLOSED or state.writing or len(known) >= len(state.graph.passage_ids)
                or self._texts_tried == (writes, id(known)) or self.spoiled == state.applied):
            return
        self._texts_tried = (writes, id(known))
        texts = sidecar.texts(self.path, self.store.identity, writes)
        if texts:
            known.update((pid, text) for pid, text in texts.items() if pid not in known)

    def closing(self, state: GraphState[Any]) -> Callable[[int], None] | None:
        """Before a write closes (under its lease: what Milvus holds is this write's): the
        lexicon of the graph it leaves, carried from the last retriever's or the saved one.
        Returns what saves it once the write closed (None: it could not be made)."""
        latest = self.latest()
        bm25 = None if latest is None else latest.search.bm25
        linker = None if latest is None else latest.ctx.linker_base()
        saved = self.start() if bm25 is None or linker is None else None
        if saved is not None:
            bm25, linker = bm25 or saved.bm25, linker or saved.linker
        known, started = state.passage_texts, time.perf_counter()
        try:
            lexicon, read = carried(self.store, state.graph, bm25, linker, known)
            missing = [p for p in state.graph.passage_ids if p not in known and p not in read]
            if len(missing) * 4 <= len(state.graph.passage_ids):  # else a reader scans
                read.update(passage_texts(self.store, state.graph, missing))
        except Exception as exc:  # the write itself is done: this costs only speed later
            log.warning("could not bring the lexicon file %s up to date (%s: %s); a later "
                        "process builds it", self.path, type(exc).__name__, exc)
            return None
        texts = {pid: known[pid] if pid in known else read[pid]
                 for pid in state.graph.passage_ids if pid in known or pid in read}
        log.info("brought the lexicon up to date in %.2fs (%d texts read)",
                 time.perf_counter() - started, len(read))

        def save(writes: int) -> None:
            state.passage_texts.update(read)  # read under the lease: current at `writes`
            self.keep(lexicon, texts, writes, len(texts) == len(state.graph.passage_ids))

        return save

    def built(self, state: GraphState[Any], retriever: Any, first: bool) -> None:
        """After a retriever was built (not during a write): it is the next write's start;
        the first of a process saves its lexicon when the file is behind the graph's write
        or lacks texts (and the graph is at a closed write, its texts all known)."""
        self.latest = weakref.ref(retriever)
        writes, part = state.applied
        bm25 = retriever.search.bm25
        if not first or bm25 is None or part != CLOSED or (
                self.saved_at == writes and self.complete):
            return
        known = state.passage_texts
        if all(pid in known for pid in state.graph.passage_ids):
            self.keep(Lexicon(bm25, retriever.ctx.linker), known, writes, complete=True)

    def keep(self, lexicon: Lexicon, texts: dict[str, str], writes: int,
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
        self.saved_at, self.complete = writes, complete
        log.info("saved the lexicon of write #%d to %s in %.2fs", writes, self.path,
                 time.perf_counter() - started)

    def discard(self) -> None:
        """Forget the lexicon and remove its file (the graph was dropped)."""
        self.path.unlink(missing_ok=True)
        self.last, self.last_at, self.saved_at, self.complete = None, -1, -1, False

    def current(self, state: GraphState[Any]) -> bool:
        """Whether the last lexicon is of the graph as the state holds it (made when the
        write the graph is at closed): the cheapest start."""
        return self.last is not None and state.applied == (self.last_at, CLOSED)


class LexiconState(GraphState[R]):
    """A `GraphState` that keeps the lexicon file in step with writes: a write's lexicon is
    made under its lease and saved once it closed; the saved texts join the known ones when
    a write starts on the graph they were saved for."""

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
            keep = None if seq is None else self.keeper.closing(self)
        finally:  # even interrupted, the write is finished (the base class counts it)
            super().finish(write, completed)
        if keep is not None and self.applied == (seq, CLOSED):
            keep(seq)

    def stop(self, write: Write, reason: str) -> None:
        super().stop(write, reason)
        self.keeper.spoiled = self.applied  # the graph keeps what the failed write changed

    def drop(self) -> bool:
        found = super().drop()
        self.keeper.discard()
        return found


def start(state: GraphState[Any], previous: Any) -> tuple[Any, EntityLinker | None]:
    """Where a new retriever's BM25 index and linker start from: the lexicon a write of
    this process left when the graph is still at that write, else the `previous`
    retriever's searcher and linker, else the saved lexicon (whose texts then join the
    state's known texts, when they are of the graph's write)."""
    keeper = state.keeper if isinstance(state, LexiconState) else None
    if previous is not None and (keeper is None or not keeper.current(state)):
        return previous.search, previous.ctx.linker_base()
    if keeper is None:
        return None, None
    if previous is None:
        keeper.texts_into(state)
    base = keeper.start()
    return base, None if base is None else base.linker


def built(state: GraphState[Any], retriever: Any, previous: Any) -> None:
    """Tell the state's keeper of a retriever built (`Keeper.built`)."""
    if isinstance(state, LexiconState) and not state.writing:
        state.keeper.built(state, retriever, previous is None)
