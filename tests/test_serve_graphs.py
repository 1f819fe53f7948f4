"""One server for every graph of its database: `/graphs` to list, make and drop graphs, each
graph's routes under `/graphs/{graph}/`, keys scoped to graphs per route, and the pool that
keeps at most `max_graphs` open (least recently used closed first, reopened from its
snapshot, never closed under a request)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import BERNOULLI, QUESTION, need
from fastapi.testclient import TestClient

from hopgraph import GraphRAG
from hopgraph.config import ServeSettings
from hopgraph.serve.app import create_app
from hopgraph.serve.pool import GraphPool
from hopgraph.serve.service import GraphService, database_keys

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each

BASEL = {"passage": "Basel lies on the Rhine. The Rhine flows into the North Sea.",
         "triplets": [["Basel", "lies on", "Rhine"], ["Rhine", "flows into", "North Sea"]]}
BERN = {"passage": "Bern lies on the Aare. The Aare flows into the Rhine.",
        "triplets": [["Bern", "lies on", "Aare"], ["Aare", "flows into", "Rhine"]]}


def bearer(key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


@pytest.fixture
def db(tmp_path: Path, local_embedder) -> Iterator[tuple[str, GraphRAG]]:
    """A database with the default graph `kb` (Bernoulli) and `rivers` (two passages)."""
    uri = str(tmp_path / "many.db")
    with GraphRAG(uri=uri, graph="rivers", embedder=local_embedder) as rivers:
        rivers.add([BASEL], doc_id="basel")
        rivers.add([BERN], doc_id="bern")
    rag = GraphRAG(uri=uri, graph="kb", embedder=local_embedder)
    rag.add_files([need(BERNOULLI)])
    yield uri, rag
    rag.close()


@pytest.fixture
def client(db) -> Iterator[TestClient]:
    _, rag = db
    with TestClient(create_app(GraphService(rag))) as test_client:
        yield test_client


def test_every_graph_is_served_under_its_name(client: TestClient) -> None:
    assert client.get("/graphs").json() == {"graphs": ["kb", "rivers"], "default": "kb"}
    reply = client.post("/graphs/rivers/query", json={"question": "Which river flows into "
                                                      "the river Basel lies on?", "top_k": 2})
    assert reply.status_code == 200, reply.text
    docs = {p["doc_id"] for p in reply.json()["graph"]}
    assert docs <= {"basel", "bern"} and docs
    assert client.get("/graphs/rivers/stats").json()["passages"] == 2
    assert client.get("/graphs/rivers/documents").json()["documents"] == [
        {"doc_id": "basel", "passages": 1}, {"doc_id": "bern", "passages": 1}]
    rhine = client.get("/graphs/rivers/entities/rhine").json()
    assert rhine["name"] == "Rhine" and len(rhine["relations"]) == 3
    assert client.get("/graphs/kb/entities/rhine").status_code == 404  # not kb's
    asked = client.post("/graphs/rivers/ask", json={"question": "Where does Bern lie?"})
    assert asked.status_code == 200 and asked.json()["passages"]
    # The routes without a graph name are the default graph's, as before.
    assert client.get("/stats").json()["graph"] == "kb"
    default = client.post("/query", json={"question": QUESTION, "top_k": 3}).json()
    named = client.post("/graphs/kb/query", json={"question": QUESTION, "top_k": 3}).json()
    assert [p["id"] for p in default["graph"]] == [p["id"] for p in named["graph"]]


def test_writes_go_to_the_named_graph_only(client: TestClient) -> None:
    row = {"passage": "Zurich lies on the Limmat.", "triplets": [["Zurich", "lies on",
                                                                   "Limmat"]]}
    added = client.post("/graphs/rivers/documents", json={"rows": [row], "doc_id": "zurich"})
    assert added.status_code == 200, added.text
    assert client.get("/graphs/rivers/stats").json()["documents"] == 3
    assert client.get("/stats").json()["documents"] == 1  # kb untouched
    assert client.delete("/documents/zurich").status_code == 404  # not in kb
    assert client.delete("/graphs/rivers/documents/zurich").status_code == 200
    assert client.get("/graphs/rivers/stats").json()["documents"] == 2


def test_unknown_graphs_are_404_and_reading_never_creates_one(client: TestClient) -> None:
    question = {"json": {"question": "Who?"}}
    for method, path, extra in (
            ("GET", "/graphs/nosuch/stats", {}), ("POST", "/graphs/nosuch/query", question),
            ("POST", "/graphs/nosuch/ask", question), ("GET", "/graphs/nosuch/documents", {}),
            ("POST", "/graphs/nosuch/documents", {"json": {"rows": [BASEL]}}),
            ("DELETE", "/graphs/nosuch/documents/a", {}), ("GET", "/graphs/nosuch/entities/a",
                                                           {}),
            ("DELETE", "/graphs/nosuch", {})):
        reply = client.request(method, path, **extra)
        assert reply.status_code == 404, (method, path, reply.text)
        assert reply.json()["error"]["message"] == "no graph 'nosuch'"
    assert client.get("/graphs").json()["graphs"] == ["kb", "rivers"]


@pytest.mark.parametrize("name", ["1abc", "a-b", "a b", "é", "x" * 65, ""])
def test_graph_names_are_validated(client: TestClient, name: str) -> None:
    made = client.post("/graphs", json={"name": name})
    assert made.status_code == 422 and "name" in made.json()["error"]["message"]
    if name and "/" not in name:
        assert client.get(f"/graphs/{name}/stats").status_code in (404, 422)
    assert client.get("/graphs").json()["graphs"] == ["kb", "rivers"]


def test_graphs_are_made_and_dropped(client: TestClient, db) -> None:
    uri, _ = db
    made = client.post("/graphs", json={"name": "fresh_1"})
    assert made.status_code == 201 and made.json()["created"] is True
    assert client.post("/graphs", json={"name": "fresh_1"}).status_code == 409
    assert client.get("/graphs/fresh_1/stats").json()["passages"] == 0
    added = client.post("/graphs/fresh_1/documents", json={"rows": [BERN], "doc_id": "bern"})
    assert added.status_code == 200
    snapshot = Path(f"{uri}.snapshots") / "fresh_1.npz"
    assert snapshot.is_file()
    dropped = client.delete("/graphs/fresh_1")
    assert dropped.status_code == 200 and dropped.json()["dropped"] is True
    assert not snapshot.exists()
    assert client.get("/graphs/fresh_1/stats").status_code == 404
    assert client.get("/graphs").json()["graphs"] == ["kb", "rivers"]
    refused = client.delete("/graphs/kb")  # the default graph: the plain routes serve it
    assert refused.status_code == 409 and "default" in refused.json()["error"]["message"]
    assert client.get("/stats").status_code == 200


def test_keys_are_scoped_to_each_routes_graph(db) -> None:
    _, rag = db
    keys = database_keys(rag)
    river_reader, _ = keys.create("read", ["rivers"], "river-reader")
    writer, _ = keys.create("write", ["rivers", "kb"], "writer")
    admin, _ = keys.create("admin", [], "ops")
    app = create_app(GraphService(rag), ServeSettings())
    with TestClient(app) as client:
        def status(key: str | None, method: str, path: str, **extra: object) -> int:
            return client.request(method, path, headers=bearer(key), **extra).status_code

        question = {"json": {"question": "Where does Bern lie?"}}
        assert status(river_reader, "POST", "/graphs/rivers/query", **question) == 200
        assert status(river_reader, "POST", "/query", **question) == 404  # kb is not its
        assert status(river_reader, "POST", "/graphs/kb/query", **question) == 404
        assert status(river_reader, "GET", "/graphs/nosuch/stats") == 404  # the same answer
        assert status(river_reader, "POST", "/graphs/rivers/documents",
                      json={"rows": [BASEL]}) == 403
        assert status(river_reader, "POST", "/graphs/kb/documents",
                      json={"rows": [BASEL]}) == 404  # a foreign graph: 404 before 403
        listed = client.get("/graphs", headers=bearer(river_reader)).json()
        assert listed["graphs"] == ["rivers"]
        assert status(writer, "POST", "/graphs", json={"name": "new"}) == 403
        assert status(writer, "DELETE", "/graphs/rivers") == 403
        assert status(river_reader, "DELETE", "/graphs/rivers") == 403
        assert status(None, "POST", "/graphs", json={"name": "new"}) == 401
        assert status(admin, "POST", "/graphs", json={"name": "new"}) == 201
        assert status(writer, "GET", "/graphs/new/stats") == 404  # made after its key
        assert status(admin, "DELETE", "/graphs/new") == 200


def test_the_pool_keeps_at_most_max_graphs_open_and_reopens_from_the_snapshot(db, caplog
                                                                            ) -> None:
    uri, rag = db
    with GraphRAG(uri=uri, graph="third", embedder=rag.embedder) as third:
        third.add([BASEL], doc_id="basel")
    pool = GraphPool(GraphService(rag), size=2)
    with TestClient(create_app(pool)) as client:
        question = {"question": "Which river flows into the North Sea?", "top_k": 2}
        first = client.post("/graphs/rivers/query", json=question).json()
        assert len(pool.services()) == 2
        client.post("/graphs/third/query", json=question)
        open_now = {s.rag.name for s in pool.services()}
        assert open_now == {"rivers", "third"}  # kb, least recently used, closed
        again = client.post("/query", json={"question": QUESTION}).json()  # kb reopened
        assert again["graph"] and {s.rag.name for s in pool.services()} == {
            "third", "kb"}
        with caplog.at_level(logging.INFO, logger="hopgraph.state.opened"):
            reopened = client.post("/graphs/rivers/query", json=question).json()
        assert any(r.getMessage().startswith("loaded graph rivers from snapshot:")
                   for r in caplog.records)
        assert [p["id"] for p in reopened["graph"]] == [p["id"] for p in first["graph"]]
        assert [p["score"] for p in reopened["graph"]] == pytest.approx(
            [p["score"] for p in first["graph"]])
    pool.close()


def test_a_graph_in_use_is_closed_only_after_its_last_request(db) -> None:
    _, rag = db
    pool = GraphPool(GraphService(rag), size=1)
    inside, leave = threading.Event(), threading.Event()
    seen: list[int] = []

    def long_request() -> None:
        with pool.use("rivers") as service:
            inside.set()
            leave.wait(timeout=60)
            seen.append(len(service.rag.retrieve("Where does Bern lie?", top_k=1).passages))
            seen.append(service.rag.stats()["passages"])  # Milvus still reachable

    worker = threading.Thread(target=long_request)
    worker.start()
    assert inside.wait(timeout=60)
    with pool.use("kb"):  # evicts rivers (size 1) while the request holds it
        assert [s.rag.name for s in pool.services()] == ["kb"]
    leave.set()
    worker.join(timeout=60)
    assert seen == [1, 2]
    pool.close()


def test_metrics_and_the_access_log_name_each_graph(client: TestClient, caplog) -> None:
    with caplog.at_level(logging.INFO, logger="hopgraph.access"):
        client.get("/graphs/rivers/stats")
        client.get("/graphs/nosuch/stats")
        client.post("/query", json={"question": QUESTION})
        client.post("/query", json={"question": QUESTION})
    lines = [r.getMessage() for r in caplog.records if r.name == "hopgraph.access"]
    assert any("route=/graphs/{graph}/stats graph=rivers status=200" in line for line in lines)
    assert any("graph= status=404" in line for line in lines)  # no label for a non-graph
    text = client.get("/metrics").text
    assert 'hopgraph_requests_total{graph="rivers",route="/graphs/{graph}/stats",' \
           'status="200"} 1.0' in text
    assert "nosuch" not in text
    assert 'hopgraph_answer_cache_total{graph="kb",result="hit"} 1.0' in text
    assert "hopgraph_open_graphs 2.0" in text
    assert 'hopgraph_graph_rows{graph="rivers",kind="passages"} 2.0' in text


def test_the_openapi_document_describes_the_graph_routes(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/graphs/{graph}/query", "/graphs/{graph}/ask", "/graphs/{graph}/documents",
                 "/graphs/{graph}/documents/{doc_id}", "/graphs/{graph}/entities/{name}",
                 "/graphs/{graph}/stats", "/graphs/{graph}", "/graphs"):
        assert path in paths, path
    drop = paths["/graphs/{graph}"]["delete"]
    assert {"403", "404", "409", "422"} <= set(drop["responses"])
    graph = next(p for p in drop["parameters"] if p["name"] == "graph")
    assert graph["schema"]["pattern"] and graph["schema"]["maxLength"] == 64
    assert json.dumps(paths["/graphs"]["post"]["requestBody"]).count("GraphRequest")


@pytest.mark.server
def test_on_a_server_a_graph_dropped_by_another_server_is_404(milvus_server: str,
                                                              local_embedder) -> None:
    """Two servers of one Milvus database (as two replicas would be): one makes a graph,
    the other serves it at once; one drops it, the other's follower sees it gone."""
    def server() -> tuple[GraphPool, TestClient]:
        rag = GraphRAG(uri=milvus_server, graph="pool_home", embedder=local_embedder)
        pool = GraphPool(GraphService(rag), owns_first=True)
        return pool, TestClient(create_app(pool))

    (one, first), (two, second) = server(), server()
    try:
        if first.get("/graphs/pool_shared/stats").status_code == 200:
            first.delete("/graphs/pool_shared")  # left by an earlier run
        assert first.post("/graphs", json={"name": "pool_shared"}).status_code == 201
        added = first.post("/graphs/pool_shared/documents", json={"rows": [BERN]})
        assert added.status_code == 200
        assert second.get("/graphs/pool_shared/stats").json()["passages"] == 1
        assert first.delete("/graphs/pool_shared").status_code == 200
        shared = next(s for s in two.services() if s.rag.name == "pool_shared")
        deadline = threading.Event()
        for _ in range(600):  # the follower looks every 0.5 s
            if shared.gone:
                break
            deadline.wait(0.1)
        assert shared.gone
        assert second.get("/graphs/pool_shared/stats").status_code == 404
        assert "pool_shared" not in second.get("/graphs").json()["graphs"]
    finally:
        for pool in (one, two):
            pool.close()
