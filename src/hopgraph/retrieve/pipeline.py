"""The query pipeline: embed the question, run the query's method (from the `registry`), fetch
the passages' texts, rerank them when a reranker is set (`rerank`), time every stage.

Methods (docs/methods.md): ``naive``, ``naive_lexical`` (`naive`); ``seed`` (`seed`);
``default``, graph-guided re-query through bridge entities (`default`, `bridge`); ``llm``, the
reference method with an LLM, falling back to the offline ranking (`llm_method`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from hopgraph.config import DEFAULT_FANOUT, DEFAULT_RERANK_TOP_N
from hopgraph.embed import Embedder
from hopgraph.errors import UsageError
from hopgraph.graph import KnowledgeGraph
from hopgraph.lexicon.link import EntityLinker
from hopgraph.llm import LLMClient
from hopgraph.records import Retrieval
from hopgraph.retrieve import registry, rerank
from hopgraph.retrieve.context import Clock, Context, fill_texts
from hopgraph.retrieve.query import Query, as_query
from hopgraph.retrieve.rerank import Reranker
from hopgraph.retrieve.scope import Scopes
from hopgraph.retrieve.search import MemorySearcher, MilvusSearcher, Searcher, make_searcher
from hopgraph.state import Built, Start
from hopgraph.store import MilvusStore
from hopgraph.store.ann import Ann


class Retriever:
    """Runs the retrieval methods over one graph, as it was when the retriever was built."""

    def __init__(self, graph: KnowledgeGraph, embedder: Embedder, searcher: Searcher,
                 llm: LLMClient | None = None, store: MilvusStore | None = None,
                 fanout: int = DEFAULT_FANOUT, reranker: Reranker | None = None,
                 rerank_top_n: int = DEFAULT_RERANK_TOP_N) -> None:
        self.searcher = searcher
        self.reranker = reranker  # the rerank stage (`rerank`), None: off
        self.rerank_top_n = rerank_top_n
        self.ctx = Context(graph, embedder, searcher, llm, fanout=fanout)
        self.scopes = Scopes(graph, store)  # of the filters asked for on this graph

    @classmethod
    def over(cls, start: Start[Retriever], embedder: Embedder, llm: LLMClient | None,
             memory_limit: int | None, scan: bool = True, fanout: int = DEFAULT_FANOUT,
             reranker: Reranker | None = None,
             rerank_top_n: int = DEFAULT_RERANK_TOP_N) -> Built[Retriever]:
        """A retriever of the start's graph version, searching where `memory_limit` says
        (`search.make_searcher`), with what building it learned: the texts its mirror read
        and the vectors it had to read from Milvus, for the state to keep. Its BM25 index
        and entity linker start where `start` says (a previous retriever's, or the saved
        lexicon: brought up to date at the cost of the change, not of the graph).
        `fanout`: the graph's `Settings.fanout` (`retrieve.fanout`); `reranker` and
        `rerank_top_n`: the rerank stage (`retrieve.rerank`)."""
        version = start.version
        searcher = make_searcher(start.store, version.graph, memory_limit, start.vectors,
                                 scan=scan, known_texts=version.texts,
                                 previous=start.search_from, stale=start.stale,
                                 indexes=start.indexes)
        learned: Built[Retriever]
        previous = start.previous
        if previous is not None and isinstance(searcher, MilvusSearcher) and isinstance(
                previous.search, MilvusSearcher):  # vectors by relation id: still true
            searcher.vector_cache = previous.search.vector_cache
        made = cls(version.graph, embedder, searcher, llm, start.store, fanout, reranker,
                   rerank_top_n)
        made.ctx.linker_from = start.linker_from
        if previous is not None:
            made.ctx.sentences = previous.ctx.sentences
        if isinstance(searcher, MemorySearcher):
            learned = Built(made, dict(searcher.passage_texts), {
                kind: matrix for kind, matrix in searcher.matrices().items()
                if kind in searcher.scanned})
        else:  # the texts followed since the last one: in its BM25 index now, if it has one
            learned = Built(made, {})
        return learned

    def carried(self) -> tuple[Searcher, EntityLinker | None]:
        """Where the next retriever's BM25 index and linker start: this one's searcher (the
        holder of its index) and linker, built or inherited."""
        return self.searcher, self.ctx.linker_base()

    def use_indexes(self, found: dict[str, Ann]) -> None:
        """Search with nearest-neighbour indexes built after this retriever (the mirror's
        vector files' `store.ann`; a search in Milvus uses Milvus's own)."""
        if isinstance(self.searcher, MemorySearcher):
            self.searcher.use_indexes(found)

    @property
    def graph(self) -> KnowledgeGraph:
        """The graph searched."""
        return self.ctx.graph

    @property
    def search(self) -> Searcher:
        """The search backend (Milvus or the in-memory mirror)."""
        return self.searcher

    @property
    def linker(self) -> EntityLinker:
        """The entity-name index used to find the question's entities."""
        return self.ctx.linker

    def context(self, query: Query) -> Context:
        """What the query's method runs on: the whole graph, or the scope of its `where`."""
        if query.where is None:
            return self.ctx
        return self.ctx.scoped(self.scopes.of(query.where), self.searcher)

    def compare(self, query: Query | str, **options: Any) -> tuple[Retrieval, Retrieval]:
        """`retrieve(query)` and naive retrieval beside it, the question embedded once for
        both (the time it took is in the first one's timings)."""
        query = as_query(query, options)
        self._check(query)
        started = time.perf_counter()
        qvec = self.ctx.embedder.embed([query.question])
        embed_ms = (time.perf_counter() - started) * 1000
        graph = self.retrieve(query, qvec)
        graph.timings_ms["embed_question"] = round(embed_ms, 2)
        graph.timings_ms["total"] = round(graph.timings_ms["total"] + embed_ms, 2)
        return graph, self.retrieve(query.with_options(method="naive"), qvec)

    def retrieve(self, query: Query | str, question_vector: np.ndarray | None = None,
                 **options: Any) -> Retrieval:
        """The query's `top_k` passages by its method (`question_vector`: the question's
        embedding, when the caller has it already), ordered by the reranker when there is
        one (of `rerank_top_n` candidates). A question with `Query` options works too."""
        query = wanted = as_query(query, options)
        method = self._check(query)
        if self.reranker is not None and query.top_k < self.rerank_top_n:
            query = query.with_options(top_k=self.rerank_top_n)  # the reranker's candidates
        clock = Clock()
        started = time.perf_counter()
        if query.where is None:
            ctx = self.ctx
        else:
            with clock.stage("filter"):
                ctx = self.context(query)
        with clock.stage("embed_question"):
            qvec = (ctx.embedder.embed([query.question]) if question_vector is None
                    else question_vector)
        result = method.run(ctx, query, qvec, clock)
        with clock.stage("fetch_passages"):
            fill_texts(ctx, result.passages)
        if self.reranker is not None:
            with clock.stage("rerank"):
                rerank.reorder(self.reranker, result, wanted.top_k)
        clock.ms["total"] = (time.perf_counter() - started) * 1000
        result.timings_ms = {k: round(v, 2) for k, v in clock.ms.items()}
        return result

    def _check(self, query: Query) -> registry.Method:
        """The query's method, if this retriever can run it (`llm` needs an LLM)."""
        method = registry.get(query.method)
        if method.needs_llm and self.ctx.llm is None:
            raise UsageError(f"method {method.name!r} needs an LLM",
                             fix="set HOPGRAPH_LLM_MODEL or pass --llm")
        return method
