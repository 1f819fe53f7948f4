"""One opened graph served to many requests at once.

Queries run concurrently, each on the retriever current when it started (its graph, search
mirror and BM25 index are never changed in place). Writes run one at a time on a fork of the
graph (`GraphRAG.fork`); when a write is done, its new retriever is built and then replaces
the old one in a single assignment, so a query sees the graph before a write or after it,
never half of it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from hopgraph.api import GraphRAG
from hopgraph.graph import KnowledgeGraph
from hopgraph.identity import entity_id
from hopgraph.llm import LLMClient
from hopgraph.records import PassageHit, Retrieval
from hopgraph.retrieve import Retriever
from hopgraph.serve import subgraph

_T = TypeVar("_T")


class GraphService:
    """The graph, its current retriever, and the lock that keeps writes one at a time."""

    def __init__(self, rag: GraphRAG, llm: LLMClient | None = None) -> None:
        self.rag = rag
        self.llm = llm
        self._writes = threading.Lock()
        self._current: Retriever = rag.retriever  # built now: the first query is warm

    @property
    def retriever(self) -> Retriever:
        """The retriever of the latest finished write (read once per request)."""
        return self._current

    def default_method(self) -> str:
        """`llm` when the server has an LLM, else `default` (as the CLI chooses)."""
        return "llm" if self.llm is not None else "default"

    def query(self, question: str, method: str | None, top_k: int, degree: int,
              entities: list[str] | None) -> dict[str, Any]:
        """Graph and naive retrieval side by side, with the subgraph to draw."""
        retriever = self._current
        graph = retriever.graph
        result = retriever.retrieve(question, top_k=top_k, degree=degree, entities=entities,
                                    method=method or self.default_method())
        naive = retriever.retrieve(question, top_k=top_k, method="naive")
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
        retriever = self._current
        return retriever.graph, retriever.retrieve(question, top_k=top_k,
                                                   method=method or self.default_method())

    def entity(self, name: str) -> dict[str, Any] | None:
        """An entity by its name (normalized: case and spacing do not matter), with its
        relations and neighbours; None if no entity has that name."""
        graph = self._current.graph
        index = graph.entity_index.get(entity_id(name))
        return None if index is None else subgraph.around_entity(graph, index)

    def documents(self) -> dict[str, int]:
        """Stored documents and their passage counts."""
        return self._current.graph.documents()

    def write(self, change: Callable[[GraphRAG], _T]) -> _T:
        """Run `change` alone on a fork of the graph, then swap in the new retriever."""
        with self._writes:
            self.rag.fork()
            try:
                return change(self.rag)
            finally:
                self._current = self.rag.retriever  # built before it replaces the old one


def passages(graph: KnowledgeGraph, result: Retrieval) -> list[dict[str, Any]]:
    """A retrieval's passages as the API returns them, each with its document."""
    return [_passage(graph, hit) for hit in result.passages]


def _passage(graph: KnowledgeGraph, hit: PassageHit) -> dict[str, Any]:
    index = graph.passage_index.get(hit.id)
    return {"id": hit.id, "text": hit.text, "score": round(hit.score, 6),
            "relations": hit.relations, "via": hit.via,
            "doc_id": graph.doc_of(index) if index is not None else None}
