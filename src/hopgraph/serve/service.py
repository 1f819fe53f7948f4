"""One opened graph served to many requests at once.

Queries run concurrently, each on the retriever current when it started (its graph, search
mirror and BM25 index are never changed in place). Writes run one at a time on a fork of the
graph (`GraphRAG.fork`); when a write is done, its new retriever is built and then replaces
the old one in a single assignment, so a query sees the graph before a write or after it,
never half of it. Answers to repeated requests come from a cache that lives and dies with
the retriever, so a write invalidates it.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hopgraph.api import GraphRAG
from hopgraph.graph import KnowledgeGraph
from hopgraph.identity import entity_id
from hopgraph.llm import LLMClient
from hopgraph.records import PassageHit, Retrieval
from hopgraph.retrieve import Retriever
from hopgraph.serve import subgraph

_T = TypeVar("_T")
DEFAULT_CACHE = 1024  # answers kept per graph version (a MuSiQue answer is ~10 kB)


class GraphService:
    """The graph, its current retriever, and the lock that keeps writes one at a time."""

    def __init__(self, rag: GraphRAG, llm: LLMClient | None = None,
                 cache_size: int = DEFAULT_CACHE) -> None:
        self.rag = rag
        self.llm = llm
        self._writes = threading.Lock()
        self._cache_size = cache_size
        self._current = _Current(rag.retriever, cache_size)  # built now: queries start warm

    @property
    def retriever(self) -> Retriever:
        """The retriever of the latest finished write (read once per request)."""
        return self._current.retriever

    def default_method(self) -> str:
        """`llm` when the server has an LLM, else `default` (as the CLI chooses)."""
        return "llm" if self.llm is not None else "default"

    def query(self, question: str, method: str | None, top_k: int, degree: int,
              entities: list[str] | None) -> dict[str, Any]:
        """Graph and naive retrieval side by side, with the subgraph to draw."""
        return json.loads(self.query_json(question, method, top_k, degree, entities))

    def query_json(self, question: str, method: str | None, top_k: int, degree: int,
                   entities: list[str] | None) -> bytes:
        """`query` as the JSON the API sends. A request answered since the last write comes
        from the cache (`"cached": true`); identical requests arriving together are
        computed once. `llm` answers are never cached (a model may choose otherwise)."""
        current = self._current
        method = method or self.default_method()

        def compute() -> dict[str, Any]:
            return self._answer(current.retriever, question, method, top_k, degree, entities)

        if method == "llm" or current.size <= 0:
            return _dumps({**compute(), "cached": False})
        return current.answer((question, method, top_k, degree, tuple(entities or ())),
                              compute)

    @staticmethod
    def _answer(retriever: Retriever, question: str, method: str, top_k: int, degree: int,
                entities: list[str] | None) -> dict[str, Any]:
        graph = retriever.graph
        result, naive = retriever.compare(question, top_k=top_k, degree=degree,
                                          entities=entities, method=method)
        view = result.as_dict()
        return {
            "question": result.question, "method": result.method,
            "graph": passages(graph, result), "naive": passages(graph, naive),
            "entities": view["entities"], "relations": view["relations"],
            "bridges": view["bridges"], "timings_ms": result.timings_ms,
            "naive_timings_ms": naive.timings_ms, "notes": result.notes, "llm": result.llm,
            "subgraph": subgraph.for_retrieval(graph, retriever.linker, result),
        }

    def retrieve(self, question: str, method: str | None, top_k: int
                 ) -> tuple[KnowledgeGraph, Retrieval]:
        """One retrieval (for answers), with the graph it ran on."""
        retriever = self._current.retriever
        return retriever.graph, retriever.retrieve(question, top_k=top_k,
                                                   method=method or self.default_method())

    def entity(self, name: str) -> dict[str, Any] | None:
        """An entity by its name (normalized: case and spacing do not matter), with its
        relations and neighbours; None if no entity has that name."""
        graph = self._current.retriever.graph
        index = graph.entity_index.get(entity_id(name))
        return None if index is None else subgraph.around_entity(graph, index)

    def documents(self) -> dict[str, int]:
        """Stored documents and their passage counts."""
        return self._current.retriever.graph.documents()

    def write(self, change: Callable[[GraphRAG], _T]) -> _T:
        """Run `change` alone on a fork of the graph, then swap in the new retriever."""
        with self._writes:
            self.rag.fork()
            try:
                return change(self.rag)
            finally:  # built before it replaces the old one (and its cache) at once
                self._current = _Current(self.rag.retriever, self._cache_size)


@dataclass
class _Flight:
    """One computation other identical requests wait for."""

    done: threading.Event = field(default_factory=threading.Event)
    value: bytes | None = None


class _Current:
    """A retriever and the answers computed on it, as JSON (least recently used dropped
    first). A write replaces both together, so a cached answer is never older than the
    graph."""

    def __init__(self, retriever: Retriever, size: int) -> None:
        self.retriever = retriever
        self.size = size
        self._answers: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()
        self._flights: dict[tuple[Any, ...], _Flight] = {}
        self._lock = threading.Lock()

    def answer(self, key: tuple[Any, ...], compute: Callable[[], dict[str, Any]]) -> bytes:
        """The cached answer for `key`, or the one being computed for it, or compute it."""
        with self._lock:
            if key in self._answers:
                self._answers.move_to_end(key)
                return self._answers[key]
            flight = self._flights.get(key)
            leader = flight is None
            if flight is None:
                flight = self._flights[key] = _Flight()
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


def passages(graph: KnowledgeGraph, result: Retrieval) -> list[dict[str, Any]]:
    """A retrieval's passages as the API returns them, each with its document."""
    return [_passage(graph, hit) for hit in result.passages]


def _passage(graph: KnowledgeGraph, hit: PassageHit) -> dict[str, Any]:
    index = graph.passage_index.get(hit.id)
    return {"id": hit.id, "text": hit.text, "score": round(hit.score, 6),
            "relations": hit.relations, "via": hit.via,
            "doc_id": graph.doc_of(index) if index is not None else None}
