"""Every search backend returns the same thing: the in-memory mirror and Milvus (Lite here;
the Milvus server in test_store_milvus_server.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import MUSIQUE, QUESTION, need
from pymilvus import MilvusClient

from hopgraph import GraphRAG, Query
from hopgraph.graph import KnowledgeGraph
from hopgraph.identity import content_key
from hopgraph.ingest.loaders import load_file
from hopgraph.retrieve import OFFLINE_METHODS
from hopgraph.retrieve.search import MemorySearcher, MilvusSearcher, make_searcher
from hopgraph.store import MilvusStore, schema

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each

SUBSET = 6  # MuSiQue dev questions, with every paragraph they come with


def test_memory_mirror_and_milvus_search_agree(bernoulli: GraphRAG, store_of) -> None:
    store = store_of(bernoulli)
    memory = make_searcher(store, bernoulli.graph, memory_limit=1000)
    milvus = make_searcher(store, bernoulli.graph, memory_limit=0)
    assert isinstance(memory, MemorySearcher) and isinstance(milvus, MilvusSearcher)
    qvec = bernoulli.embedder.embed([QUESTION])
    for a, b in ((memory.relations(qvec, 5)[0], milvus.relations(qvec, 5)[0]),
                 (memory.passages(qvec, 4)[0], milvus.passages(qvec, 4)[0])):
        assert list(a) == list(b)
        assert np.allclose(list(a.values()), list(b.values()), atol=1e-4)
    some = [0, 3, 7]
    ma, mb = memory.score_relations(qvec, some), milvus.score_relations(qvec, some)
    assert ma.keys() == mb.keys()
    assert np.allclose([ma[r] for r in some], [mb[r] for r in some], atol=1e-5)
    ids = [*bernoulli.graph.passage_ids[:3], "not-a-passage"]
    pa, pb = memory.score_passages(qvec, ids)[0], milvus.score_passages(qvec, ids)[0]
    assert list(pa) == list(pb) == ids[:3]  # in the order asked; unknown ids left out
    assert np.allclose(list(pa.values()), list(pb.values()), atol=1e-5)
    dense = memory.passages(qvec, 4)[0]  # the same cosine a search gives
    assert np.allclose([memory.score_passages(qvec, list(dense))[0][p] for p in dense],
                       list(dense.values()), atol=1e-5)
    assert memory.texts([next(iter(a))]) == milvus.texts([next(iter(a))])
    # one BM25 definition on both
    query = ["Daniel Bernoulli fluid dynamics"]
    assert milvus.lexical(query, 3) == memory.lexical(query, 3)


@pytest.fixture(scope="module")
def musique_subset(tmp_path_factory: pytest.TempPathFactory, local_embedder) -> GraphRAG:
    """The passages (with their GPT-3.5 triplets) of the first SUBSET MuSiQue dev questions,
    searched in Milvus through a deliberately weak HNSW index (M=4, efConstruction=8) instead
    of Lite's exact FLAT one: approximate, like a server's index on a large graph."""
    questions = json.loads(need(MUSIQUE / "questions_dev.json").read_text(encoding="utf-8"))
    wanted = {content_key(f"{p['title']}\n{p['paragraph_text']}")
              for q in questions[:SUBSET] for p in q["paragraphs"]}
    report = load_file(MUSIQUE / "openie_gpt-3.5-turbo-1106.json")
    records = [r for r in report.records if content_key(r.text) in wanted]
    uri = str(tmp_path_factory.mktemp("musique") / "m.db")
    rag = GraphRAG(uri=uri, graph="subset", embedder=local_embedder)
    rag.add(records)
    client = MilvusClient(uri=uri)  # a second client of this process's Lite server
    store = MilvusStore(uri, "subset")  # for the names of its collections
    for collection in (store.entities, store.relations, store.passages):
        client.release_collection(collection)
        client.drop_index(collection, "vector")
        index = client.prepare_index_params()
        index.add_index("vector", index_type="HNSW", metric_type="COSINE",
                        params={"M": 4, "efConstruction": 8})
        client.create_index(collection, index)
        client.load_collection(collection)
    store.close()
    client.close()
    rag.questions = [q["question"] for q in questions[:SUBSET]]  # type: ignore[attr-defined]
    yield rag
    rag.close()


def backend_results(rag: GraphRAG, parts_of, method: str) -> dict[str, list[dict]]:
    """Every question's retrieval with `method`, on the mirror and with every search in
    Milvus: passages (ids and scores), relations, bridges and entities."""
    results = {}
    for backend, limit in (("mirror", 10**6), ("milvus", 0)):
        retriever = parts_of(rag, memory_limit=limit).retriever
        expected = MemorySearcher if backend == "mirror" else MilvusSearcher
        assert isinstance(retriever.search, expected)
        results[backend] = [retriever.retrieve(Query(q, top_k=10, method=method)).as_dict()
                            for q in rag.questions]  # type: ignore[attr-defined]
    return results


def same_bridges(x: dict, y: dict) -> bool:
    """The same bridges, reached the same way, with confidences equal to float32 noise (a
    score read from Milvus and one computed here may differ in the 7th digit)."""
    def ways(r: dict) -> list[tuple]:
        return [(b["id"], b["name"], b["relation"]) for b in r["bridges"]]

    return ways(x) == ways(y) and np.allclose([b["confidence"] for b in x["bridges"]],
                                              [b["confidence"] for b in y["bridges"]],
                                              atol=1e-5)


def same_retrievals(a: list[dict], b: list[dict]) -> bool:
    for x, y in zip(a, b, strict=True):
        if [p["id"] for p in x["passages"]] != [p["id"] for p in y["passages"]]:
            return False
        if not np.allclose([p["score"] for p in x["passages"]],
                           [p["score"] for p in y["passages"]], atol=1e-4):
            return False
        if (x["relations"] and [r["id"] for r in x["relations"]]
                != [r["id"] for r in y["relations"]]) or not same_bridges(x, y):
            return False
        if x["entities"] != y["entities"]:
            return False
    return True


def test_the_subset_index_is_approximate(musique_subset: GraphRAG, store_of) -> None:
    """The premise of the next test: searched with Milvus's own candidate list (ef = the
    limit), this index misses some of the exact top 20 relations."""
    rag, store = musique_subset, store_of(musique_subset)
    qvecs = rag.embedder.embed(rag.questions)  # type: ignore[attr-defined]
    ids = rag.graph.relation_ids
    stored = store.vectors(store.relations, ids)
    matrix = np.vstack([stored[i] for i in ids])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(schema, "search_ef", lambda limit: limit)
        hits = store.search(store.relations, qvecs, 20)
    exact = [{ids[i] for i in np.argsort(-(matrix @ q))[:20]} for q in qvecs]
    assert any({h.id for h in row} != want for row, want in zip(hits, exact, strict=True))


@pytest.mark.parametrize("method", OFFLINE_METHODS)
def test_every_backend_gives_the_same_passages_on_musique(musique_subset: GraphRAG, parts_of,
                                                          method: str) -> None:
    """Agreement on real data through an approximate index: the same top 10 passages with
    the same scores, relations, bridges and entities, for every method."""
    results = backend_results(musique_subset, parts_of, method)
    assert all(len(r["passages"]) == 10 for r in results["milvus"])
    assert same_retrievals(results["mirror"], results["milvus"])


def test_without_wide_candidate_lists_the_backends_differ(musique_subset: GraphRAG,
                                                          parts_of) -> None:
    """The comparison above can fail: with Milvus's own candidate list it does."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(schema, "search_ef", lambda limit: limit)
        differs = [not same_retrievals(*backend_results(musique_subset, parts_of,
                                                        method).values())
                   for method in OFFLINE_METHODS]
    assert any(differs)


def test_backend_choice_by_limit_place_and_vector_files(bernoulli: GraphRAG, parts_of
                                                        ) -> None:
    """None (the default) mirrors any size on Milvus Lite; scan=False (one-shot CLI) mirrors
    only from current vector files, else searches Milvus; 0 always searches Milvus."""
    parts = parts_of(bernoulli)  # the graph reopened, its vector files current
    store, graph = parts.store, parts.state.graph
    current = parts.state.vectors_of(parts.state.version)
    assert all(v is not None for v in current.values())
    assert isinstance(make_searcher(store, graph, None, current), MemorySearcher)
    mirror = make_searcher(store, graph, None, current, scan=False)
    assert isinstance(mirror, MemorySearcher) and mirror.scanned == []
    stale = {kind: None for kind in current}
    assert isinstance(make_searcher(store, graph, None, stale, scan=False), MilvusSearcher)
    assert isinstance(make_searcher(store, graph, 0, current), MilvusSearcher)
    assert isinstance(make_searcher(store, graph, 3, current), MilvusSearcher)  # too small


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    rows = rng.normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_every_relation_asked_about_is_scored_exactly(shared_db: str) -> None:
    """Every relation asked about gets its exact score: the first time from Milvus (a
    filtered search, which may leave rows out, as it did on Milvus Lite:
    benchmarks/RESULTS.md, "Search backends give the same passages"; those are fetched),
    the second time from fetched vectors, then from the cache."""
    rng = np.random.default_rng(7)
    n, dim = 5_000, 32
    store = MilvusStore(shared_db, "large_random")
    try:
        store.open("random:32", dim)
        vectors = unit_rows(rng, n, dim)
        graph = KnowledgeGraph()
        rows = []
        for r in range(n):
            rows.append({"id": f"r{r}", "subject_id": f"e{r % 997}", "object_id": f"e{r % 991}",
                         "text": f"relation {r}", "vector": vectors[r], "passage_ids": []})
            graph.add_relation(f"r{r}", f"e{r % 997}", f"e{r % 991}", f"relation {r}", [])
        store.insert(store.relations, rows)
        store.flush()
        milvus = MilvusSearcher(store, graph)
        queries = unit_rows(rng, 8, dim)
        exact = queries @ vectors.T
        asked = rng.choice(n, size=3000, replace=False).tolist()
        calls: list[str] = []
        for name in ("scores", "vectors"):
            original = getattr(store, name)
            setattr(store, name, lambda *args, _name=name, _f=original: calls.append(_name)
                    or _f(*args))
        rounds = []
        for _ in range(3):
            calls.clear()
            scores = milvus.score_relations(queries[0], asked)
            assert list(scores) == asked  # every relation asked about is scored, in order
            assert np.allclose([scores[r] for r in asked], exact[0][asked], atol=1e-5)
            rounds.append(set(calls))
        assert "scores" in rounds[0]  # Milvus scored them first
        assert rounds[1] == {"vectors"} and rounds[2] == set()  # then fetched, then kept
        assert len(milvus.vector_cache) == len(asked)
    finally:
        store.drop()
        store.close()


def test_search_asks_hnsw_for_enough_candidates() -> None:
    """HNSW returns at most its candidate list: it must cover the limit, with room to spare
    (on MuSiQue a list of 256 was needed for an exact top 20)."""
    from hopgraph.store.schema import search_ef

    for limit in (1, 3, 20, 30, 100, 2000, 16384):
        assert search_ef(limit) >= max(limit, 256)
    assert search_ef(20) >= 8 * 20 and search_ef(16384) <= 32768
