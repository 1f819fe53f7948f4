"""What every retrieval method works with, and the steps they share.

A `Context` holds the graph, the embedder, the searcher and the optional LLM of one opened
graph; a `Clock` times named stages. Methods (naive, seed, default, llm_method) are plain
functions of a context and a `Query`: they return a `Retrieval`, and `pipeline` dispatches
between them through the `registry`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from hopgraph.config import DEFAULT_FANOUT
from hopgraph.embed import Embedder
from hopgraph.graph import KnowledgeGraph
from hopgraph.lexicon.link import EntityLinker, EntityMatch
from hopgraph.llm import LLMClient
from hopgraph.records import PassageHit, Retrieval
from hopgraph.retrieve.query import Query
from hopgraph.retrieve.scope import Scope, ScopedGraph, ScopedLinker, ScopedSearch
from hopgraph.retrieve.search import Searcher, Searches
from hopgraph.retrieve.sentences import SentenceCache


class Clock:
    """Milliseconds spent per named stage (a stage entered twice adds up)."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the enclosed block as stage `name`."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = self.ms.get(name, 0.0) + (time.perf_counter() - started) * 1000


@dataclass
class Context:
    """One opened graph as the retrieval methods see it."""

    graph: KnowledgeGraph
    embedder: Embedder
    search: Searches
    llm: LLMClient | None = None
    fanout: int = DEFAULT_FANOUT  # relations of one entity followed per step (Settings.fanout)
    # Sentence vectors read or embedded so far (`retrieve.sentences`): a later version's
    # context takes this one's.
    sentences: SentenceCache = field(default_factory=SentenceCache)
    _linker: EntityLinker | None = field(default=None, repr=False)
    # An earlier graph's linker: the new one extends it when only entities were added.
    linker_from: EntityLinker | None = field(default=None, repr=False)

    @property
    def linker(self) -> EntityLinker:
        """Entity-name index over the graph, built on first use."""
        if self._linker is None:
            names, base = self.graph.entity_names, self.linker_from
            self._linker = (base.extended(names) if base is not None and base.extends_to(names)
                            else EntityLinker(names))
            self.linker_from = None
        return self._linker

    def linker_base(self) -> EntityLinker | None:
        """What a later graph's linker may extend: this one's, built or inherited."""
        return self._linker or self.linker_from

    def scoped(self, scope: Scope, search: Searcher) -> Context:
        """This context as a filtered query sees it: graph, searches and linker inside
        `scope` (`retrieve.scope`); the methods run on it unchanged. `search` is the
        backend behind this context's searches (which do not take a scope themselves)."""
        return Context(ScopedGraph(self.graph, scope), self.embedder,  # type: ignore[arg-type]
                       ScopedSearch(search, scope), self.llm, self.fanout, self.sentences,
                       _linker=ScopedLinker(self.linker, scope))  # type: ignore[arg-type]


@dataclass
class Linked:
    """The query entities of a question, and what linking had to say about them."""

    matches: list[EntityMatch]
    notes: list[str]

    def attached_to(self, result: Retrieval, graph: KnowledgeGraph) -> Retrieval:
        """`result` with these entities listed and the linking notes first."""
        result.notes[:0] = self.notes
        result.entities = entity_dicts(self.matches, graph)
        return result


def link_query(ctx: Context, query: Query, clock: Clock) -> Linked:
    """The query's entities (given, else linked from its question), timed as a stage."""
    notes: list[str] = []
    with clock.stage("link_entities"):
        matches = query_entities(ctx, query.question, query.given_entities, notes)
    return Linked(matches, notes)


def query_entities(ctx: Context, question: str, given: list[str] | None,
                   notes: list[str]) -> list[EntityMatch]:
    """Given names resolved to graph entities, else entities linked from the question."""
    if not given:
        return ctx.linker.link(question)
    matches: list[EntityMatch] = []
    for name in given:
        found = ctx.linker.resolve(name)
        if not found:
            notes.append(f"entity {name!r} is not in the graph")
        matches.extend(found)
    if not matches:
        notes.append("no given entity is in the graph; entities linked from the question")
        return ctx.linker.link(question)
    return matches


def entity_dicts(matches: list[EntityMatch], graph: KnowledgeGraph
                 ) -> list[dict[str, object]]:
    """The query entities as a result lists them."""
    return [{"id": graph.entity_ids[m.index], "name": m.name, "matched": m.matched,
             "how": m.how, "score": round(m.score, 3)} for m in matches]


def fill_texts(ctx: Context, passages: list[PassageHit]) -> None:
    """Give each hit its passage text and document (methods rank by id; texts are fetched
    once, at the end)."""
    text = ctx.search.texts([p.id for p in passages])
    for p in passages:
        p.text = text.get(p.id, "")
        index = ctx.graph.passage_index.get(p.id)
        p.doc_id = None if index is None else ctx.graph.doc_of(index)
