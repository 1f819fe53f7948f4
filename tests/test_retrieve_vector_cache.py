"""Relation vectors fetched from Milvus are kept by id (retrieve/vector_cache.py)."""

from __future__ import annotations

import numpy as np
import pytest

from hopgraph import Query
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


@pytest.mark.slow
def test_a_write_keeps_the_searchers_cache(open_graph, parts_of) -> None:
    from test_store_ann import records

    parts = parts_of(open_graph(graph="vcache", memory_limit=0))  # every search in Milvus
    parts.add(records(20))
    parts.retriever.retrieve(Query("Where was Person 3 born?"))
    searcher = parts.retriever.search
    assert isinstance(searcher, MilvusSearcher)
    parts.add(records(25)[20:])  # a write: a new retriever, the same vectors by id
    assert parts.retriever.search is not searcher
    assert parts.retriever.search.vector_cache is searcher.vector_cache


def test_ids_are_admitted_the_second_time_they_are_wanted() -> None:
    cache = VectorCache()
    assert cache.admit(["a", "b"]) == []  # wanted once: remembered
    assert cache.admit(["b", "c"]) == ["b"]  # wanted again: to fetch and keep
    assert cache.admit(["b"]) == []  # handed out once; kept from now on by `get`


@pytest.mark.slow
def test_relations_are_scored_alike_by_milvus_fetched_vectors_and_the_cache(
        open_graph, parts_of, monkeypatch) -> None:
    """The first time, Milvus scores the relations (a filtered search; ids it leaves out
    are fetched), the second time their vectors are fetched, then they come from the
    cache: the same relations, the same scores every time."""
    from test_store_ann import records

    from hopgraph.retrieve import search as search_module

    rag = open_graph(graph="vscores", memory_limit=0)
    rag.add(records(40))
    parts = parts_of(rag)  # its store, its graph and a retriever over them
    searcher = parts.retriever.search
    assert isinstance(searcher, MilvusSearcher)
    searcher.vector_cache = VectorCache()
    searcher._relation_vectors = None  # as in a server process that did not write them
    monkeypatch.setattr(search_module, "SCORED_THERE", 0)
    graph, store = parts.state.graph, parts.store
    qvec = rag.embedder.embed(["Who works for Company 3?"])[0]
    wanted = list(range(len(graph.relations)))
    stored = store.vectors(store.relations, [graph.relation_ids[r] for r in wanted])
    matrix = np.vstack([stored[graph.relation_ids[r]] for r in wanted])
    expected = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)) @ (
        qvec / np.linalg.norm(qvec))
    fetched: list[int] = []
    vectors = store.vectors
    monkeypatch.setattr(store, "vectors", lambda c, ids: fetched.append(len(ids))
                        or vectors(c, ids))
    for round_ in range(3):
        scores = searcher.score_relations(qvec, wanted)
        assert sorted(scores) == wanted, round_
        assert np.allclose([scores[r] for r in wanted], expected, atol=1e-5), round_
        # Kept: after the first round only what Milvus's search left out (fetched at once).
        assert len(searcher.vector_cache) == (sum(fetched) if round_ == 0 else len(wanted))
    assert sum(fetched) == len(wanted)  # each fetched once: left out, or wanted again
    # Ids the filtered search leaves out are fetched and scored here.
    searcher.vector_cache = VectorCache()
    scores_of = store.scores
    monkeypatch.setattr(store, "scores", lambda c, v, ids: dict(
        list(scores_of(c, v, ids).items())[::2]))
    scores = searcher.score_relations(qvec, wanted)
    assert sorted(scores) == wanted
    assert np.allclose([scores[r] for r in wanted], expected, atol=1e-5)
    assert len(searcher.vector_cache) == len(wanted) // 2


def test_the_cache_holds_true_vectors_and_drops_the_least_recently_wanted() -> None:
    """Random traffic over 60 ids through a cache of 10: every vector handed out is the
    stored one, the cache never holds more than its limit, what a call wanted is held
    after it, and nothing held was wanted less recently than something dropped."""
    rng = np.random.default_rng(4)
    stored = {f"r{i}": rng.standard_normal(8).astype(np.float32) for i in range(60)}
    cache = VectorCache(limit=10)
    last: dict[str, int] = {}
    for call in range(400):
        ids = [f"r{i}" for i in rng.choice(60, int(rng.integers(1, 8)), replace=False)]
        got = cache.get(ids, lambda wanted: {i: stored[i] for i in wanted})
        assert sorted(got) == sorted(ids)
        assert all(np.array_equal(got[i], stored[i]) for i in ids)
        last.update((i, call) for i in ids)
        held = list(cache._slot)  # looked at without wanting them (`gather` would)
        dropped = [i for i in last if i not in cache._slot]
        assert len(held) == len(cache) <= 10
        assert set(ids) <= set(held)
        for i in held:
            assert np.array_equal(cache._slab[cache._slot[i]], stored[i])
            assert np.isclose(cache._norms[cache._slot[i]], np.linalg.norm(stored[i]))
        if dropped:
            assert min(last[i] for i in held) >= max(last[i] for i in dropped)
    held_mask, vectors, norms = cache.gather(["r0", "nope", *held])
    assert held_mask.tolist() == ["r0" in held, False, *[True] * len(held)]
    assert all(np.array_equal(v, stored[i]) for i, v in zip(
        [i for i, h in zip(["r0", "nope", *held], held_mask.tolist(), strict=True) if h],
        vectors, strict=True))
    assert np.allclose(norms, np.linalg.norm(vectors, axis=1))


def test_the_cache_grows_past_its_first_block_and_keeps_at_most_its_limit() -> None:
    rng = np.random.default_rng(5)
    stored = {f"r{i}": rng.standard_normal(6).astype(np.float32) for i in range(5000)}
    fetch = lambda wanted: {i: stored[i] for i in wanted}  # noqa: E731
    empty = VectorCache()
    held, vectors, norms = empty.gather(["r1"])
    assert held.tolist() == [False] and len(vectors) == 0 and len(norms) == 0
    cache = VectorCache(limit=3000)
    cache.get([f"r{i}" for i in range(2500)], fetch)  # past the first 1,024 rows
    cache.get([f"r{i}" for i in range(2500, 4000)], fetch)  # 1,000 of the older leave
    assert len(cache) == 3000
    ids = [f"r{i}" for i in range(4000)]
    held, vectors, _ = cache.gather(ids)
    assert held[:2500].sum() == 1500 and held[2500:].all()
    kept = [i for i, h in zip(ids, held.tolist(), strict=True) if h]
    assert np.array_equal(vectors, np.vstack([stored[i] for i in kept]))
    cache.get([f"r{i}" for i in range(5000)], fetch)  # more than the limit in one call
    assert len(cache) == 3000
    nothing = VectorCache(limit=0)
    assert sorted(nothing.get(["r1", "r2"], fetch)) == ["r1", "r2"] and len(nothing) == 0
