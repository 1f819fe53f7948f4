"""The query pipeline: check the request, embed the question, dispatch to one method, time it.

Methods (README, "Retrieval methods"):
- ``naive``, ``naive_lexical``: dense passage search, without / with a BM25 term (`naive`);
- ``seed``: the reference method with the LLM rerank replaced by cosine (`seed`);
- ``default``: graph-guided re-query through bridge entities (`default`, `bridge`);
- ``llm``: the reference method with an LLM, falling back to offline ranking (`llm_method`).
"""

from __future__ import annotations

import time

import numpy as np

from hopgraph.embed import Embedder
from hopgraph.errors import UsageError
from hopgraph.graph import KnowledgeGraph
from hopgraph.llm import LLMClient
from hopgraph.records import Retrieval
from hopgraph.retrieve.context import Clock, Context, entity_dicts, fill_texts, query_entities
from hopgraph.retrieve.default import run_default
from hopgraph.retrieve.link import EntityLinker
from hopgraph.retrieve.llm_method import run_llm
from hopgraph.retrieve.naive import run_naive
from hopgraph.retrieve.search import Searcher
from hopgraph.retrieve.seed import run_seed
from hopgraph.store import MAX_TOP_K

OFFLINE_METHODS = ("default", "naive", "naive_lexical", "seed")
# Questions are sentences, not documents: linking a 100 kB "question" took 81 s on MuSiQue
# (every n-gram is a fuzzy lookup). The same limit holds for the API, the CLI and the server.
MAX_QUESTION_CHARS = 4096
METHODS = (*OFFLINE_METHODS, "llm")


class Retriever:
    """Runs the retrieval methods over one stored graph."""

    def __init__(self, graph: KnowledgeGraph, embedder: Embedder, searcher: Searcher,
                 llm: LLMClient | None = None) -> None:
        self.ctx = Context(graph, embedder, searcher, llm)

    @property
    def graph(self) -> KnowledgeGraph:
        """The graph searched."""
        return self.ctx.graph

    @property
    def search(self) -> Searcher:
        """The search backend (Milvus or the in-memory mirror)."""
        return self.ctx.search

    @property
    def linker(self) -> EntityLinker:
        """The entity-name index used to find the question's entities."""
        return self.ctx.linker

    def compare(self, question: str, top_k: int = 5, degree: int = 1,
                entities: list[str] | None = None, method: str = "default"
                ) -> tuple[Retrieval, Retrieval]:
        """`retrieve` with `method`, and naive retrieval beside it, the question embedded
        once for both (the time it took is in the first one's timings)."""
        _check(question, top_k, method, self.ctx.llm is not None)
        started = time.perf_counter()
        qvec = self.ctx.embedder.embed([question])
        embed_ms = (time.perf_counter() - started) * 1000
        graph = self.retrieve(question, top_k, degree, entities, method, qvec)
        graph.timings_ms["embed_question"] = round(embed_ms, 2)
        graph.timings_ms["total"] = round(graph.timings_ms["total"] + embed_ms, 2)
        return graph, self.retrieve(question, top_k, method="naive", question_vector=qvec)

    def retrieve(self, question: str, top_k: int = 5, degree: int = 1,
                 entities: list[str] | None = None, method: str = "default",
                 question_vector: np.ndarray | None = None) -> Retrieval:
        """Retrieve the `top_k` passages for `question` with the named method
        (`question_vector`: the question's embedding, when the caller has it already)."""
        _check(question, top_k, method, self.ctx.llm is not None)
        ctx, clock = self.ctx, Clock()
        started = time.perf_counter()
        with clock.stage("embed_question"):
            qvec = (ctx.embedder.embed([question]) if question_vector is None
                    else question_vector)
        if method in ("naive", "naive_lexical"):
            result = run_naive(ctx, question, qvec, top_k, clock,
                               lexical=method == "naive_lexical")
        elif method == "llm":
            result = run_llm(ctx, question, qvec, top_k, degree, entities, clock)
        else:
            link_notes: list[str] = []
            with clock.stage("link_entities"):
                matches = query_entities(ctx, question, entities, link_notes)
            if method == "seed":
                result = run_seed(ctx, question, qvec, matches, top_k, degree, clock)
            else:
                result = run_default(ctx, question, qvec, matches, top_k, clock)
            result.notes[:0] = link_notes
            result.entities = entity_dicts(matches, ctx.graph)
        with clock.stage("fetch_passages"):
            fill_texts(ctx, result.passages)
        clock.ms["total"] = (time.perf_counter() - started) * 1000
        result.timings_ms = {k: round(v, 2) for k, v in clock.ms.items()}
        return result


def check_question(question: str) -> None:
    """UsageError for an empty question or one over MAX_QUESTION_CHARS."""
    if not question.strip():
        raise UsageError("the question is empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise UsageError(f"the question is {len(question)} characters long; the limit is "
                         f"{MAX_QUESTION_CHARS}", fix="ask a shorter question")


def _check(question: str, top_k: int, method: str, has_llm: bool) -> None:
    """Refuse requests no method can answer, with what to do instead."""
    if method not in METHODS:
        raise UsageError(f"unknown method {method!r}", fix=f"choose one of {', '.join(METHODS)}")
    check_question(question)
    if not 1 <= top_k <= MAX_TOP_K:
        raise UsageError(f"top_k must be between 1 and {MAX_TOP_K}, got {top_k}")
    if method == "llm" and not has_llm:
        raise UsageError("method 'llm' needs an LLM",
                         fix="set HOPGRAPH_LLM_MODEL or pass --llm")
