"""The HTTP API, in process (FastAPI's TestClient) over a real Milvus Lite graph: every
endpoint, bad input, size limits, auth, CORS, streamed answers, and writes that queries never
see half of."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from urllib.parse import quote

import pytest
from conftest import BERNOULLI, QUESTION, SAFETY, need, run_cli, write_three_page_report
from llm_server import Reply

fastapi = pytest.importorskip("fastapi", reason="the 'serve' extra is missing: "
                                                 "pip install -e '.[dev]'")
from fastapi.testclient import TestClient  # noqa: E402

from hopgraph import GraphRAG, Query  # noqa: E402
from hopgraph.config import ServeSettings  # noqa: E402
from hopgraph.errors import UsageError  # noqa: E402
from hopgraph.ingest.loaders import source_doc_id  # noqa: E402
from hopgraph.retrieve.query import MAX_QUESTION_CHARS  # noqa: E402
from hopgraph.serve.app import create_app  # noqa: E402
from hopgraph.serve.service import GraphService  # noqa: E402

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each

DOC = source_doc_id(BERNOULLI)
NEPHEW = Query("Who was Jacob Bernoulli's nephew?", top_k=3)


def answer(service: GraphService, query: Query) -> dict:
    """What `POST /query` sends for `query`, straight from the service."""
    return json.loads(service.query_json(query))


@pytest.fixture
def rag(open_graph) -> GraphRAG:
    graph = open_graph("serve")
    graph.add_files([need(BERNOULLI)])
    return graph


@pytest.fixture
def client(rag: GraphRAG) -> Iterator[TestClient]:
    with TestClient(create_app(GraphService(rag))) as test_client:
        yield test_client


def test_health_stats_graphs(client: TestClient, rag: GraphRAG) -> None:
    assert client.get("/health").json()["status"] == "ok"
    stats = client.get("/stats").json()
    assert (stats["passages"], stats["entities"], stats["relations"]) == (4, 24, 22)
    assert stats["documents"] == 1 and stats["state"] == "complete"
    graphs = client.get("/graphs").json()
    name = rag.name
    assert graphs["default"] == name and name in graphs["graphs"]


def test_query_returns_both_rankings_and_the_path_to_each_passage(client: TestClient) -> None:
    reply = client.post("/query", json={"question": QUESTION, "top_k": 2})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert "Daniel Bernoulli" in body["graph"][1]["text"]
    assert all("Daniel" not in p["text"] for p in body["naive"])  # why the graph is needed
    assert body["graph"][0]["doc_id"] == DOC and body["timings_ms"]["total"] > 0
    nodes = {n["id"]: n for n in body["subgraph"]["nodes"]}
    by_label = {n["label"]: n for n in nodes.values()}
    assert by_label["Euler"]["kind"] == "query"
    assert by_label["Daniel Bernoulli"]["kind"] == "bridge"
    # The way to the Daniel passage: Euler -> Johann Bernoulli's influence -> (named in)
    # Johann Bernoulli -> Daniel Bernoulli -> passage #2, every step marked on_path.
    path = [e for e in body["subgraph"]["edges"] if e["on_path"]]
    steps = {(nodes[e["source"]]["label"], nodes[e["target"]]["label"], e["kind"])
             for e in path}
    assert {("Johann Bernoulli's influence", "Euler", "relation"),
            ("Johann Bernoulli's influence", "Johann Bernoulli", "name"),
            ("Daniel Bernoulli", "Johann Bernoulli", "relation")} <= steps
    assert ("Daniel Bernoulli", "#2") in {(s, t) for s, t, _ in steps}
    assert all(e["source"] in nodes and e["target"] in nodes
               for e in body["subgraph"]["edges"])


def test_every_method_and_given_entities(client: TestClient) -> None:
    for method in ("default", "seed", "naive", "naive_lexical"):
        reply = client.post("/query", json={"question": QUESTION, "method": method,
                                            "entities": ["Leonhard Euler"]})
        assert reply.status_code == 200, (method, reply.text)
        assert reply.json()["method"] == method and reply.json()["graph"]


@pytest.mark.parametrize(("body", "status", "says"), [
    ({"question": ""}, 422, "question"),
    ({"question": "x" * (MAX_QUESTION_CHARS + 1)}, 422, "question"),
    ({"question": "Who?", "method": "magic"}, 422, "method"),
    ({"question": "Who?", "top_k": 0}, 422, "top_k"),
    ({"question": "Who?", "degree": 9}, 422, "degree"),
    ({"question": "Who?", "method": "llm"}, 422, "needs an LLM"),
    ({"top_k": 3}, 422, "question"),
])
def test_bad_queries_are_4xx_naming_the_problem(client: TestClient, body: dict, status: int,
                                                says: str) -> None:
    reply = client.post("/query", json=body)
    assert reply.status_code == status
    assert says in json.dumps(reply.json())


def test_not_json_is_400(client: TestClient) -> None:
    reply = client.post("/query", content=b"{not json", headers={"content-type":
                                                                  "application/json"})
    assert reply.status_code == 400 and reply.json()["error"]["code"] == "bad_input"


def test_question_limit_holds_in_the_python_api_and_the_cli(rag: GraphRAG) -> None:
    with pytest.raises(UsageError, match="limit is 4096"):
        rag.retrieve("why " * 2000)
    ran = run_cli("query", "why " * 2000, "--uri", rag.uri, "--graph",
                  rag.name)
    assert ran.code == 2 and "limit is 4096" in ran.stderr


def test_bodies_over_the_limit_are_413(rag: GraphRAG) -> None:
    app = create_app(GraphService(rag), ServeSettings(max_body_bytes=1000))
    with TestClient(app) as small:
        declared = small.post("/documents", json={"rows": [{"passage": "x" * 2000}]})
        assert declared.status_code == 413 and "1000 bytes" in declared.json()["error"]["message"]

        def chunked() -> Iterator[bytes]:  # no content-length: counted as it arrives
            yield b'{"rows": ['
            for _ in range(50):
                yield b'{"passage": "' + b"y" * 100 + b'"},'
            yield b'{"passage": "z"}]}'

        streamed = small.post("/documents", content=chunked(),
                              headers={"content-type": "application/json"})
        assert streamed.status_code == 413
        assert small.post("/query", json={"question": QUESTION}).status_code == 200


def test_api_key(rag: GraphRAG) -> None:
    app = create_app(GraphService(rag), ServeSettings(api_key="s3cret"))
    with TestClient(app) as keyed:
        assert keyed.get("/stats").status_code == 401
        assert keyed.get("/stats", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert keyed.post("/query", json={"question": QUESTION}).status_code == 401
        good = {"Authorization": "Bearer s3cret"}
        assert keyed.get("/stats", headers=good).status_code == 200
        assert keyed.post("/query", json={"question": QUESTION}, headers=good).status_code == 200
        assert keyed.get("/health").status_code == 200  # probes need no key
        assert keyed.get("/openapi.json").status_code == 200


def test_cors_is_off_unless_origins_are_configured(rag: GraphRAG) -> None:
    origin = {"Origin": "http://example.test"}
    with TestClient(create_app(GraphService(rag))) as plain:
        assert "access-control-allow-origin" not in plain.get("/stats", headers=origin).headers
    app = create_app(GraphService(rag), ServeSettings(cors_origins=["http://example.test"]))
    with TestClient(app) as open_to:
        allowed = open_to.get("/stats", headers=origin).headers
        assert allowed["access-control-allow-origin"] == "http://example.test"


def test_ask_without_an_llm_gives_the_evidence_and_how_to_add_one(client: TestClient) -> None:
    body = client.post("/ask", json={"question": QUESTION, "top_k": 2}).json()
    assert body["answer"] is None and "HOPGRAPH_LLM_MODEL" in body["message"]
    assert any("Daniel" in p["text"] for p in body["passages"])


def test_ask_streams_the_answer_as_server_sent_events(rag: GraphRAG, server,
                                                      llm_client_factory: Callable) -> None:
    server.script(Reply(content="Daniel Bernoulli worked on fluid dynamics [2]."))
    with TestClient(create_app(GraphService(rag, llm_client_factory()))) as with_llm:
        reply = with_llm.post("/ask", json={"question": QUESTION, "method": "default",
                                            "top_k": 2})
    assert reply.headers["content-type"].startswith("text/event-stream")
    events = [block.split("\n", 1) for block in reply.text.strip().split("\n\n")]
    names = [head.removeprefix("event: ") for head, _ in events]
    assert names[0] == "evidence" and names[-1] == "done" and "token" in names
    tokens = "".join(json.loads(data.removeprefix("data: "))["text"]
                     for head, data in events if head == "event: token")
    assert tokens == "Daniel Bernoulli worked on fluid dynamics [2]."


def test_answers_give_each_passage_its_source(open_graph, tmp_path, server,
                                              llm_client_factory: Callable) -> None:
    """A three-page PDF beside rows stored without sources: `/query` (and its metadata),
    `/ask`'s evidence, and the answer prompt say where each passage came from."""
    rag = open_graph("sources")
    rag.add_documents([write_three_page_report(tmp_path / "report.pdf")], root=tmp_path)
    rag.add([{"passage": "Keller Polymers makes the Kestrel Probe casing.",
              "triplets": [["Keller Polymers", "makes", "the Kestrel Probe casing"]],
              "doc_id": "old-notes"}])
    question = "How is the Kestrel Probe battery charged?"
    server.script(Reply(content="Charge it at room temperature [1]."))
    with TestClient(create_app(GraphService(rag, llm_client_factory()))) as api:
        body = api.post("/query", json={"question": question, "top_k": 4, "method": "default",
                                        "include_metadata": True}).json()
        asked = api.post("/ask", json={"question": question, "top_k": 1, "method": "default",
                                       "where": {"page": {"$gte": 3}}})
        filtered = api.post("/query", json={"question": question, "method": "default",
                                            "where": {"type": "pdf"}}).json()
    sources = {p["text"].split("\n")[-1]: p["source"] for p in body["graph"] + body["naive"]}
    assert sources[SAFETY] == {"file": "report.pdf", "page": 3,
                               "headings": ["Field report", "3. Safety"],
                               "start": sources[SAFETY]["start"],
                               "end": sources[SAFETY]["end"]}
    assert sources[SAFETY]["end"] - sources[SAFETY]["start"] == len(SAFETY)
    old = next(s for t, s in sources.items() if t.startswith("Keller"))
    assert old == {"file": "old-notes", "page": None, "headings": [], "start": None,
                   "end": None}
    safety = next(p for p in body["graph"] if p["text"].endswith(SAFETY))
    assert safety["metadata"]["type"] == "pdf" and safety["metadata"]["page"] == 3
    assert {p["source"]["file"] for p in filtered["graph"]} == {"report.pdf"}
    events = [block.split("\n", 1) for block in asked.text.strip().split("\n\n")]
    data = {head.removeprefix("event: "): json.loads(raw.removeprefix("data: "))
            for head, raw in events}
    assert data["evidence"]["passages"][0]["source"]["page"] == 3
    assert data["done"]["citations"] == ["[1] report.pdf · p. 3 · Field report › 3. Safety"]
    prompt = server.chat_requests[-1].body["messages"][0]["content"]
    assert f"[1] Field report › 3. Safety\n{SAFETY}\nSource: report.pdf · p. 3 · " in prompt


def test_entity_lookup(client: TestClient) -> None:
    body = client.get("/entities/" + quote("johann  BERNOULLI")).json()
    assert body["name"] == "Johann Bernoulli" and body["total_relations"] >= 3
    assert "Daniel Bernoulli" in {n["name"] for n in body["neighbours"]}
    assert len(body["subgraph"]["edges"]) == len(body["relations"])
    missing = client.get("/entities/Nobody%20at%20all")
    assert missing.status_code == 404 and "Nobody at all" in missing.json()["error"]["message"]


def test_documents_list_add_replace_delete(client: TestClient) -> None:
    assert client.get("/documents").json() == {"documents": [{"doc_id": DOC, "passages": 4}],
                                               "total": 1, "offset": 0, "limit": None}
    rows = [{"passage": "Nicolaus Bernoulli was a nephew of Jacob Bernoulli.",
             "triplets": [["Nicolaus Bernoulli", "nephew of", "Jacob Bernoulli"]]},
            {"passage": ""}, "not an object"]
    added = client.post("/documents", json={"rows": rows, "doc_id": "notes/extra.md"}).json()
    assert added["passages_added"] == 1 and added["rows_skipped"] == 2
    assert any("item 1" in p for p in added["problems"])
    found = client.post("/query", json={"question": "Who was Jacob Bernoulli's nephew?",
                                        "top_k": 3}).json()
    assert any("Nicolaus" in p["text"] for p in found["graph"])  # queries see the write
    again = client.post("/documents", json={"rows": rows[:1], "doc_id": "notes/extra.md"})
    assert again.json()["texts_embedded"] == 0
    gone = client.delete("/documents/" + quote("notes/extra.md", safe=""))
    assert gone.status_code == 200 and gone.json()["passages"] == 1
    assert gone.json()["entities"] == 2  # Nicolaus and Jacob (the file spells him Jakob)
    assert client.delete("/documents/" + quote("notes/extra.md")).status_code == 404
    after = client.post("/query", json={"question": "Who was Jacob Bernoulli's nephew?",
                                        "top_k": 3}).json()
    assert not any("Nicolaus" in p["text"] for p in after["graph"] + after["naive"])
    assert client.post("/documents", json={"rows": "nope"}).status_code == 422


def test_a_query_during_a_write_sees_the_graph_before_it(rag: GraphRAG) -> None:
    """The write is held half way (its passages are stored, its relations not); a query
    then runs on the graph from before the write, and one after it sees all of it."""
    service = GraphService(rag)
    halfway, release = threading.Event(), threading.Event()
    from hopgraph.ingest.writer import Ingestor

    original = Ingestor._store_relations

    def held(self, *args: object, **kwargs: object) -> object:
        halfway.set()
        assert release.wait(60)
        return original(self, *args, **kwargs)

    rows = [{"passage": "Nicolaus Bernoulli was a nephew of Jacob Bernoulli.",
             "triplets": [["Nicolaus Bernoulli", "nephew of", "Jacob Bernoulli"]]}]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Ingestor, "_store_relations", held)
        writer = threading.Thread(target=service.write,
                                  args=(lambda g: g.add(rows, doc_id="extra"),))
        writer.start()
        assert halfway.wait(60)
        during = answer(service, NEPHEW)
        release.set()
        writer.join(60)
    assert service.documents() == {DOC: 4, "extra": 1}
    assert all("Nicolaus" not in p["text"] for p in during["graph"] + during["naive"])
    assert all(p["text"] for p in during["graph"] + during["naive"])
    after = answer(service, NEPHEW)
    assert any("Nicolaus" in p["text"] for p in after["graph"])


def test_a_write_waits_behind_another_at_most_write_wait(rag: GraphRAG) -> None:
    """POST and DELETE /documents wait at most --write-wait behind another write of their
    graph (an upload's file, say): then a 503 with Retry-After, and nothing is written,
    then or after."""
    service = GraphService(rag)
    holding, release = threading.Event(), threading.Event()

    def hold(graph: GraphRAG) -> None:
        holding.set()
        assert release.wait(60)

    rows = [{"passage": "Nicolaus Bernoulli was a nephew of Jacob Bernoulli."}]
    with TestClient(create_app(service, ServeSettings(write_wait=0.2))) as client:
        other = threading.Thread(target=service.write, args=(hold,))
        other.start()
        try:
            assert holding.wait(60)
            added = client.post("/documents", json={"rows": rows, "doc_id": "late"})
            deleted = client.delete("/documents/" + quote(DOC, safe=""))
        finally:
            release.set()
            other.join(60)
        for busy in (added, deleted):
            assert busy.status_code == 503 and busy.headers["retry-after"] == "5", busy.text
            error = busy.json()["error"]
            assert "busy with another write for 0.2 s" in error["message"]
            assert "nothing was written" in error["message"]
            assert "--write-wait" in error["fix"] and "HOPGRAPH_WRITE_WAIT" in error["fix"]
        assert service.documents() == {DOC: 4}  # the requests gave up: no late write
        assert client.post("/documents", json={"rows": rows, "doc_id": "now"}
                           ).status_code == 200
    with pytest.raises(UsageError, match="HOPGRAPH_WRITE_WAIT"):
        ServeSettings(write_wait=-1)


def test_concurrent_queries_and_writes_never_fail(client: TestClient) -> None:
    errors: list[str] = []
    rows = [{"passage": "Nicolaus Bernoulli was a nephew of Jacob Bernoulli.",
             "triplets": [["Nicolaus Bernoulli", "nephew of", "Jacob Bernoulli"]]}]

    def reader() -> None:
        for _ in range(8):
            reply = client.post("/query", json={"question": QUESTION, "top_k": 3})
            if reply.status_code != 200 or not all(p["text"] for p in reply.json()["graph"]):
                errors.append(reply.text)

    def writer() -> None:
        for _ in range(3):
            client.post("/documents", json={"rows": rows, "doc_id": "extra"})
            client.delete("/documents/extra")

    threads = [threading.Thread(target=reader) for _ in range(4)] + [
        threading.Thread(target=writer)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    assert client.get("/documents").json()["documents"] == [{"doc_id": DOC, "passages": 4}]


def test_the_page_and_its_files_are_served(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "cytoscape" in page.text and "http://" not in page.text.replace(
        "http://www.w3.org", "")  # nothing fetched from elsewhere
    assert client.get("/docs").status_code == 200


def test_answers_follow_the_schema_and_repeats_come_from_the_cache_until_a_write(
        client: TestClient) -> None:
    from hopgraph.serve.models import QueryResponse

    first = client.post("/query", json={"question": QUESTION, "top_k": 3}).json()
    QueryResponse.model_validate(first)  # the documented schema, field for field
    again = client.post("/query", json={"question": QUESTION, "top_k": 3}).json()
    assert (first["cached"], again["cached"]) == (False, True)
    assert {k: v for k, v in again.items() if k != "cached"} == {
        k: v for k, v in first.items() if k != "cached"}
    other = client.post("/query", json={"question": QUESTION, "top_k": 2}).json()
    assert other["cached"] is False  # another request, another answer
    client.post("/documents", json={"rows": [{"passage": "A note."}], "doc_id": "n"})
    after = client.post("/query", json={"question": QUESTION, "top_k": 3}).json()
    assert after["cached"] is False  # a write empties the cache


def test_identical_requests_at_once_are_computed_once(rag: GraphRAG) -> None:
    """The first computation is held until the other five have asked: they must wait for
    it (not compute, and not find it cached yet)."""
    service = GraphService(rag)
    query = Query(QUESTION, top_k=4)
    calls, started, release = [], threading.Event(), threading.Event()
    current = service.current
    compare, cached_answer = current.retriever.compare, current.answer

    def held(*args: object) -> object:
        calls.append(1)
        started.set()
        assert release.wait(60)
        return compare(*args)

    entered: list[int] = []

    def counted(*args: object) -> object:
        entered.append(1)
        return cached_answer(*args)

    answers: list[dict] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(current.retriever, "compare", held)
        patch.setattr(current, "answer", counted)
        first = threading.Thread(target=lambda: answers.append(answer(service, query)))
        first.start()
        assert started.wait(60)
        others = [threading.Thread(target=lambda: answers.append(answer(service, query)))
                  for _ in range(5)]
        for thread in others:
            thread.start()
        while len(entered) < 6:  # every request is in, the first still computing
            threading.Event().wait(0.01)
        release.set()
        for thread in [first, *others]:
            thread.join(60)
    assert len(answers) == 6 and len({json.dumps(a["graph"]) for a in answers}) == 1
    assert len(calls) == 1 and sum(not a["cached"] for a in answers) == 1


def test_the_cli_and_the_server_give_one_json_view(client: TestClient, rag: GraphRAG) -> None:
    """`query --json` and `POST /query` are one view (`records.comparison_json`), held to one
    schema (`RetrievalView`, exact fields); the server adds only the subgraph and `cached`."""
    from hopgraph.serve.models import QueryResponse, RetrievalView

    ran = run_cli("query", QUESTION, "--json", "--top-k", "3", "--uri", rag.uri,
                  "--graph", rag.name)
    assert ran.code == 0, ran.stderr
    printed = json.loads(ran.stdout)
    served = client.post("/query", json={"question": QUESTION, "top_k": 3}).json()
    RetrievalView.model_validate(printed)
    QueryResponse.model_validate(served)
    fields = set(RetrievalView.model_fields)
    assert set(printed) == fields and set(served) == fields | {"subgraph", "cached"}

    def without_scores(passages: list[dict]) -> list[dict]:
        return [{k: v for k, v in p.items() if k != "score"} for p in passages]

    for side in ("graph", "naive"):
        assert without_scores(printed[side]) == without_scores(served[side])
        assert all(p["doc_id"] == DOC for p in printed[side])
        assert [p["score"] for p in printed[side]] == pytest.approx(
            [p["score"] for p in served[side]], abs=1e-4)
    for key in ("question", "method", "entities", "bridges", "notes", "llm"):
        assert printed[key] == served[key], key
