"""Relation vectors fetched from Milvus are kept by id (retrieve/vector_cache.py)."""

from __future__ import annotations

import numpy as np

from hopgraph.retrieve.search import MilvusSearcher
from hopgraph.retrieve.vector_cache import VectorCache


def test_only_missing_ids_are_fetched_and_the_least_recent_leave_first() -> None:
    stored = {f"r{i}": np.full(4, i, dtype=np.float32) for i in range(10)}
    asked: list[list[str]] = []

    def fetch(ids: list[str]) -> dict[str, np.ndarray]:
        asked.append(ids)
        return {i: stored[i] for i in ids if i in stored}

    cache = VectorCache(limit=3)
    got = cache.get(["r1", "r2", "nope"], fetch)
    assert sorted(got) == ["r1", "r2"] and asked == [["r1", "r2", "nope"]]
    assert float(got["r2"][0]) == 2.0
    cache.get(["r1", "r3"], fetch)  # r1 from the cache; r3 fetched
    assert asked[-1] == ["r3"] and len(cache) == 3
    cache.get(["r4"], fetch)  # r2 was used least recently: it leaves
    cache.get(["r1", "r2"], fetch)
    assert asked[-1] == ["r2"]


def test_a_write_keeps_the_searchers_cache(open_graph) -> None:
    from test_store_ann import records

    rag = open_graph(graph="vcache", memory_limit=0)  # every search in Milvus
    rag.add(records(20))
    rag.retrieve("Where was Person 3 born?")
    searcher = rag.retriever.search
    assert isinstance(searcher, MilvusSearcher)
    rag.add(records(25)[20:])  # a write: a new retriever, the same vectors by id
    assert rag.retriever.search is not searcher
    assert rag.retriever.search.vector_cache is searcher.vector_cache
