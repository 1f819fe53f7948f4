"""Filtered retrieval (`Query.where`) on real data: MuSiQue passages with metadata. Every
method returns only passages the filter matches, and its relations, bridges and entities
come from them; the mirror and Milvus (Lite here, the server below) give the same results
for filters of every selectivity; the CLI and the REST API take the same filters."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from conftest import MUSIQUE, need, run_cli
from fastapi.testclient import TestClient

from hopgraph import GraphRAG, Query
from hopgraph.identity import content_key
from hopgraph.ingest.loaders import load_file
from hopgraph.retrieve import OFFLINE_METHODS
from hopgraph.retrieve.scope import Scopes
from hopgraph.retrieve.search import MemorySearcher, MilvusSearcher
from hopgraph.serve.app import create_app
from hopgraph.serve.service import GraphService
from hopgraph.store import MilvusStore
from hopgraph.where import Where

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each

QUESTIONS = 12  # MuSiQue dev questions, with every paragraph they come with

# Filters of every selectivity and shape: documents only (answered from the graph), metadata,
# both, negations, absent keys.
FILTERS: list[dict[str, Any]] = [
    {"doc_id": "wiki/A"},
    {"doc_id": {"$in": ["wiki/A", "wiki/B", "wiki/C", "wiki/D"]}},
    {"doc_id": {"$nin": ["wiki/A", "wiki/B"]}},
    {"doc_id": {"$ne": "wiki/S"}},
    {"letter": {"$in": ["M", "N", "O", "P"]}},
    {"year": {"$gte": 1960}},
    {"year": {"$lt": 1930}},
    {"year": {"$gte": 1950, "$lt": 1990}},
    {"words": {"$gt": 120}},
    {"lang": "de"},
    {"lang": {"$ne": "de"}},
    {"digits": True},
    {"rank": {"$exists": True}},
    {"rank": {"$exists": False}, "lang": "en"},
    {"$not": {"rank": {"$gte": 2}}},
    {"$or": [{"letter": "T"}, {"year": {"$lt": 1925}}]},
    {"$and": [{"digits": False}, {"$or": [{"lang": "de"}, {"words": {"$lte": 60}}]}]},
    {"title": {"$gte": "M"}},
    {"doc_id": {"$in": ["wiki/B", "wiki/T"]}, "year": {"$gte": 1940}},
    {"$not": {"$or": [{"lang": "de"}, {"digits": True}]}},
    {"letter": "Q"},  # may match nothing at all
]


def metadata_of(title: str, text: str) -> tuple[str, dict[str, Any]]:
    """A passage's document and metadata, from its title and text (deterministic)."""
    letter = title[:1].upper() if title[:1].isalpha() else "#"
    code = sum(map(ord, title))
    meta: dict[str, Any] = {"title": title, "letter": letter, "words": len(text.split()),
                            "year": 1900 + code % 120, "lang": "de" if code % 3 == 0 else "en",
                            "digits": any(ch.isdigit() for ch in text)}
    if code % 2:
        meta["rank"] = code % 5
    return f"wiki/{letter}", meta


@pytest.fixture(scope="module")
def dataset() -> tuple[list[Any], list[str]]:
    """The passages (GPT-3.5 triplets, documents and metadata) of the first QUESTIONS
    MuSiQue dev questions, and those questions."""
    questions = json.loads(need(MUSIQUE / "questions_dev.json").read_text(encoding="utf-8"))
    wanted = {content_key(f"{p['title']}\n{p['paragraph_text']}")
              for q in questions[:QUESTIONS] for p in q["paragraphs"]}
    report = load_file(MUSIQUE / "openie_gpt-3.5-turbo-1106.json")
    records = []
    for record in report.records:
        if content_key(record.text) in wanted:
            title, _, text = record.text.partition("\n")
            doc, meta = metadata_of(title, text)
            records.append(dataclasses.replace(record, doc_id=doc, metadata=meta))
    return records, [q["question"] for q in questions[:QUESTIONS]]


@pytest.fixture(scope="module")
def musique(tmp_path_factory: pytest.TempPathFactory, local_embedder, dataset
            ) -> Iterator[GraphRAG]:
    rag = GraphRAG(uri=str(tmp_path_factory.mktemp("where") / "w.db"), graph="where",
                   embedder=local_embedder)
    rag.add(dataset[0])
    rag.questions = dataset[1]  # type: ignore[attr-defined]
    yield rag
    rag.close()


def stored(rag: GraphRAG) -> dict[str, tuple[str, dict[str, Any]]]:
    """Every passage's document and metadata, as Milvus holds them."""
    store = MilvusStore.from_settings(rag.settings, create=False)
    try:
        return {row["id"]: (row["doc_id"], row["metadata"])
                for row in store.scan(store.passages, ["id", "doc_id", "metadata"])}
    finally:
        store.close()


def test_every_method_stays_inside_the_filter(musique: GraphRAG) -> None:
    rag, rows = musique, stored(musique)
    graph = rag.graph
    sizes = []
    for spec in FILTERS:
        where = Where.parse(spec)
        allowed = {pid for pid, (doc, meta) in rows.items() if where.matches(doc, meta)}
        sizes.append(len(allowed))
        relations = {r for r in range(len(graph.relation_ids))
                     if set(graph.passages_of(r)) & allowed}
        entities = {int(e) for r in relations for e in (graph.subjects[r], graph.objects[r])}
        for method in OFFLINE_METHODS:
            for question in rag.questions[:4]:  # type: ignore[attr-defined]
                result = rag.retrieve(Query(question, method, top_k=8, where=where))
                where_ = f"{method} {spec}"
                assert {p.id for p in result.passages} <= allowed, where_
                assert len(result.passages) == min(8, len(allowed)), where_
                for hit in result.passages:
                    assert {graph.relation_index[v] for v in hit.via} <= relations, where_
                assert {graph.relation_index[r.id] for r in result.relations} <= relations
                for bridge in result.bridges:
                    assert graph.entity_index[bridge["id"]] in entities, where_
                    assert graph.relation_index[bridge["relation"]] in relations, where_
                assert {graph.entity_index[e["id"]] for e in result.entities} <= entities
    assert min(sizes) == 0 and max(sizes) > len(rows) // 2 and len(set(sizes)) > 15


def retrievals(rag: GraphRAG, method: str, filters: list[dict[str, Any]] = FILTERS,
               questions: int = 3) -> list[dict[str, Any]]:
    return [rag.retrieve(Query(q, method, top_k=10, where=spec)).as_dict()
            for spec in filters for q in rag.questions[:questions]]  # type: ignore[attr-defined]


def same(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> None:
    for x, y in zip(a, b, strict=True):
        assert [p["id"] for p in x["passages"]] == [p["id"] for p in y["passages"]], x["question"]
        assert np.allclose([p["score"] for p in x["passages"]],
                           [p["score"] for p in y["passages"]], atol=1e-4)
        assert [r["id"] for r in x["relations"]] == [r["id"] for r in y["relations"]]
        assert [(b["id"], b["relation"]) for b in x["bridges"]] == [
            (b["id"], b["relation"]) for b in y["bridges"]]
        assert np.allclose([b["confidence"] for b in x["bridges"]],
                           [b["confidence"] for b in y["bridges"]], atol=1e-5)
        assert x["entities"] == y["entities"]


@pytest.mark.parametrize("method", OFFLINE_METHODS)
def test_the_mirror_and_milvus_agree_under_every_filter(musique: GraphRAG, parts_of,
                                                       method: str) -> None:
    rag = musique
    rag.memory_limit = 10**6
    assert isinstance(parts_of(rag).retriever.search, MemorySearcher)  # as its settings say
    mirror = retrievals(rag, method)
    rag.memory_limit = 0
    assert isinstance(parts_of(rag).retriever.search, MilvusSearcher)
    try:
        milvus = retrievals(rag, method)
    finally:
        rag.memory_limit = None
    same(mirror, milvus)


def test_a_document_filter_is_answered_from_the_graph_as_milvus_would(musique: GraphRAG,
                                                                      store_of) -> None:
    rag = musique
    docs = {"doc_id": {"$in": ["wiki/A", "wiki/M", "wiki/nosuch"]}}
    assert Where.parse(docs).only_docs() == frozenset({"wiki/A", "wiki/M", "wiki/nosuch"})
    through_milvus = {"$and": [docs, {"$or": [{"doc_id": {"$exists": True}}]}]}
    assert Where.parse(through_milvus).only_docs() is None
    scopes = Scopes(rag.graph, store_of(rag))  # as the graph's retriever finds them
    fast, slow = scopes.of(Where.parse(docs)), scopes.of(Where.parse(through_milvus))
    assert fast.passage_ids == slow.passage_ids and fast.passage_ids
    assert (fast.relations == slow.relations).all() and (fast.entities == slow.entities).all()


def test_the_cli_filters_with_where_and_doc(musique: GraphRAG) -> None:
    rag = musique
    uri, graph = rag.uri, rag.name
    question = rag.questions[0]  # type: ignore[attr-defined]
    done = run_cli("query", question, "--uri", uri, "--graph", graph, "--json",
                   "--where", '{"year": {"$gte": 1960}}', "--doc", "wiki/A", "--doc", "wiki/B")
    assert done.code == 0, done.stderr
    rows = stored(rag)
    out = json.loads(done.stdout)
    for side in ("graph", "naive"):
        for passage in out[side]:
            doc, meta = rows[passage["id"]]
            assert doc in ("wiki/A", "wiki/B") and meta["year"] >= 1960
    bad = run_cli("query", question, "--uri", uri, "--graph", graph,
                  "--where", '{"year": {"$regex": "19"}}')
    assert bad.code != 0 and "$regex" in bad.stderr and "year" in bad.stderr
    broken = run_cli("query", question, "--uri", uri, "--graph", graph, "--where", "{year")
    assert broken.code != 0 and "where" in broken.stderr.lower()


def test_the_api_filters_the_passages_and_the_drawing(musique: GraphRAG) -> None:
    rag, rows = musique, stored(musique)
    question = rag.questions[1]  # type: ignore[attr-defined]
    spec = {"lang": "en", "year": {"$lt": 1960}}
    where = Where.parse(spec)
    with TestClient(create_app(GraphService(rag))) as client:
        reply = client.post("/query", json={"question": question, "where": spec})
        assert reply.status_code == 200, reply.text
        body = reply.json()
        for passage in body["graph"] + body["naive"]:
            assert where.matches(*rows[passage["id"]])
        for node in body["subgraph"]["nodes"]:
            if node["kind"] == "passage":
                continue
            entity = rag.graph.entity_index[node["id"][2:]]
            assert set().union(*(set(rag.graph.passages_of(int(r))) for r in
                                 rag.graph.relations_of(np.array([entity])))) & {
                pid for pid, (d, m) in rows.items() if where.matches(d, m)}
        unfiltered = client.post("/query", json={"question": question}).json()
        assert [p["id"] for p in unfiltered["graph"]] != [p["id"] for p in body["graph"]]
        asked = client.post("/ask", json={"question": question, "where": {"doc_id": "wiki/A"}})
        assert asked.status_code == 200
        assert all(rows[p["id"]][0] == "wiki/A" for p in asked.json()["passages"])
        bad = client.post("/query", json={"question": question, "where": {"year": {"$in": 5}}})
        assert bad.status_code == 422 and "year" in bad.json()["error"]["message"]


@pytest.mark.server
def test_a_milvus_server_gives_what_lite_gives(musique: GraphRAG, milvus_server: str,
                                               local_embedder, dataset) -> None:
    """The same passages with their metadata on the real 2.3 server (HNSW, its own JSON
    expression engine): the default method under each of the 21 filters (every operator is
    among them) and one question each, on the mirror and with Milvus search, as on Lite.
    (Each filter's scope is one strong query on the server: this test's cost.)"""
    assert len(FILTERS) == 21
    lite = {"default": retrievals(musique, "default", FILTERS, questions=1)}
    served = GraphRAG(uri=milvus_server, graph="where_server", embedder=local_embedder)
    try:
        served.drop()
        served.close()
        served = GraphRAG(uri=milvus_server, graph="where_server", embedder=local_embedder)
        served.add(dataset[0])
        served.questions = musique.questions  # type: ignore[attr-defined]
        for limit in (10**6, 0):
            served.memory_limit = limit
            for method, expected in lite.items():
                same(expected, retrievals(served, method, FILTERS, questions=1))
    finally:
        served.drop()
        served.close()
