"""`hopgraph.client` against a real `hopgraph serve` (a process of its own, with an API key):
every method, sync and async; results equal to `GraphRAG.compare` on the same graph (through
`hopgraph query --json`, run before the server took the Lite file); answers streamed from a
scripted LLM; and each failure as its typed error. The pure parts (events, error mapping,
paths) are tested on their own first."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    BERNOULLI,
    QUESTION,
    free_port,
    need,
    own_environment,
    run_process,
    serving,
)
from llm_server import FakeLLMServer, Reply
from scripted_llm import good_llm

from hopgraph import (
    Answer,
    LLMError,
    PassageHit,
    PassageRecord,
    Query,
    Retrieval,
    StoreError,
    Triplet,
    UsageError,
)
from hopgraph.client import (
    ApiError,
    AsyncClient,
    BadRequest,
    Client,
    Comparison,
    Conflict,
    ConnectionFailed,
    Done,
    Evidence,
    Forbidden,
    InvalidRequest,
    NoAnswer,
    NotFound,
    PassageHitWithMetadata,
    ServerError,
    Token,
    TooManyRequests,
    Unauthorized,
    Unavailable,
    UpstreamFailed,
    calls,
)
from hopgraph.client.errors import error_from_reply
from hopgraph.client.events import EventReader
from hopgraph.ingest.loaders import source_doc_id

KEY = "client-test-key"
BIN = Path(sys.executable).parent
DOC = source_doc_id(BERNOULLI)
NEPHEW = "Who was Jacob Bernoulli's nephew?"
# (question, options): compared with `hopgraph query --json` on the same graph
QUESTIONS: list[tuple[str, dict[str, Any]]] = [
    (QUESTION, {}),
    (NEPHEW, {"top_k": 3, "method": "seed", "degree": 2}),
    ("Who taught Euler?", {"top_k": 2, "where": {"doc_id": {"$in": [DOC]}}}),
]
ODD_DOC = "reports/2024 annual report?#%/../final.pdf"  # slashes, spaces, ?, #, %, dots


# --- the pure parts --------------------------------------------------------------------------

def test_events_are_read_from_server_sent_events() -> None:
    reader = EventReader("POST x/ask")
    lines = [": keep-alive", "event: evidence",
             'data: {"passages": [{"id": "p1", "text": "t", "score": 0.5, "relations": [],',
             'data:  "via": [], "doc_id": null}]}', "", "event: token", 'data: {"text": "Hi"}',
             "", "event: novelty", "data: {}", "", "event: done",
             'data: {"usage": {"completion_tokens": 1}}', ""]
    events = [e for e in map(reader.line, lines) if e is not None]
    assert [type(e) for e in events] == [Evidence, Token, Done]
    assert events[0].passages[0].id == "p1" and events[1] == Token("Hi")
    assert events[2] == Done({"completion_tokens": 1})
    reader.end()  # complete: nothing raised


def test_an_error_event_is_raised_and_a_cut_stream_too() -> None:
    reader = EventReader("POST x/ask")
    reader.line("event: error")
    reader.line('data: {"error": {"code": "upstream_failed", "message": "LLM down", '
                '"fix": null}}')
    with pytest.raises(UpstreamFailed) as failed:
        reader.line("")
    assert isinstance(failed.value, LLMError) and failed.value.status == 502
    assert str(failed.value) == "POST x/ask: LLM down"
    cut = EventReader("POST x/ask")
    cut.line("event: token")
    cut.line('data: {"text": "Hal"}')
    cut.line("")
    with pytest.raises(ConnectionFailed, match="ended before its `done` event"):
        cut.end()


@pytest.mark.parametrize(("status", "code", "kind", "base"), [
    (400, "bad_input", BadRequest, ValueError), (400, "host_not_allowed", BadRequest, ValueError),
    (401, "unauthorized", Unauthorized, UsageError), (404, "not_found", NotFound, UsageError),
    (409, "conflict", Conflict, UsageError), (422, "invalid_request", InvalidRequest, UsageError),
    (500, "internal", ServerError, RuntimeError),
    (502, "upstream_failed", UpstreamFailed, LLMError),
    (429, "too_many_requests", TooManyRequests, StoreError),
    (503, "unavailable", Unavailable, StoreError),
])
def test_error_bodies_map_to_classes(status: int, code: str, kind: type, base: type) -> None:
    body = json.dumps({"error": {"code": code, "message": "what", "fix": "how"}}).encode()
    error = error_from_reply(status, body, "GET u")
    assert type(error) is kind and isinstance(error, base)
    assert (error.status, error.code, error.message, error.fix) == (status, code, "what", "how")
    assert str(error) == "GET u: what; how"


def test_retry_after_is_carried_in_seconds() -> None:
    body = json.dumps({"error": {"code": "unavailable", "message": "busy"}}).encode()
    assert error_from_reply(503, body, "POST u", "5").retry_after == 5.0
    assert error_from_reply(503, body, "POST u").retry_after is None
    dated = error_from_reply(503, body, "POST u", "Wed, 21 Oct 2015 07:28:00 GMT")
    assert dated.retry_after is None and isinstance(dated, Unavailable)


def test_a_reply_that_is_not_an_error_body_keeps_its_status() -> None:
    proxy = error_from_reply(502, b"<html>Bad Gateway</html>", "GET u")
    assert isinstance(proxy, UpstreamFailed) and "Bad Gateway" in proxy.message
    assert proxy.fix and "hopgraph serve" in proxy.fix
    odd = error_from_reply(418, b"", "GET u")
    assert type(odd) is ApiError and odd.status == 418


def test_path_parts_are_encoded_whole() -> None:
    call = calls.delete_document(calls.graph_prefix("wiki"), ODD_DOC)
    assert call.path == ("/graphs/wiki/documents/reports%2F2024%20annual%20report%3F%23%25%2F"
                         "%2E%2E%2Ffinal%2Epdf")
    assert calls.delete_document("", "..").path == "/documents/%2E%2E"
    assert calls.entity("", "Johann Bernoulli").path == "/entities/Johann%20Bernoulli"


def test_bad_arguments_fail_before_anything_is_sent() -> None:
    with pytest.raises(UsageError, match="http:// or https://"):
        Client("localhost:8000")
    with Client(f"http://127.0.0.1:{free_port()}") as client:  # nothing listens there
        with pytest.raises(UsageError, match="list of names"):
            client.query("Who?", entities="Euler")  # type: ignore[arg-type]
        with pytest.raises(UsageError, match="cannot be sent as JSON") as nan:
            client.add_documents([{"passage": "x", "metadata": {"n": float("nan")}}])
        assert nan.value.where and "/documents" in nan.value.where
        with pytest.raises(UsageError, match="no entities nor degree"):
            client.ask(Query("Who?", entities=("Euler",)))


def test_records_are_sent_as_rows() -> None:
    record = PassageRecord("Basel lies on the Rhine.", [Triplet("Basel", "lies on", "Rhine")],
                           doc_id="geo", metadata={"year": 2021})
    call = calls.add_documents("", [record], None, False)
    assert call.body == {"rows": [{"passage": "Basel lies on the Rhine.",
                                   "triplets": [["Basel", "lies on", "Rhine"]],
                                   "doc_id": "geo", "metadata": {"year": 2021}}],
                         "append": False}


def test_uploads_are_sent_as_files_with_their_form() -> None:
    from hopgraph.client import jobs
    from hopgraph.serve.jobs import ENDED

    assert jobs.ENDED == ENDED  # the states the client waits for are the server's
    call = jobs.upload("/graphs/g", [("a.md", b"# A")], "offline", True)
    assert (call.method, call.path, call.body) == ("POST", "/graphs/g/uploads", None)
    assert call.multipart() == [("files", ("a.md", b"# A"))]
    assert call.form == {"extractor": "offline", "append": "true"}
    assert jobs.job("x/y").path == "/jobs/x%2Fy" and jobs.cancel("j").method == "DELETE"
    with pytest.raises(UsageError, match="extractor must be one of"):
        jobs.upload("", [("a.md", b"")], "spacy", False)
    with pytest.raises(UsageError, match=r"cannot read .*missing\.txt"):
        jobs.upload("", ["missing.txt"], "auto", False)
    with pytest.raises(UsageError, match="nothing to upload"):
        jobs.upload("", [], "auto", False)


# --- a real server ---------------------------------------------------------------------------

def _ingested(tmp: Path) -> str:
    uri = str(tmp / "g.db")
    built = run_process("ingest", str(need(BERNOULLI)), "--uri", uri, "--quiet")
    assert built.code == 0, built.stderr
    return uri


def _cli_options(options: dict[str, Any]) -> list[str]:
    flags = {"top_k": "--top-k", "method": "--method", "degree": "--degree"}
    out = [f for name, value in options.items() if name in flags
           for f in (flags[name], str(value))]
    return [*out, "--where", json.dumps(options["where"])] if "where" in options else out


@dataclass
class Served:
    url: str
    expected: list[dict[str, Any]]  # `hopgraph query --json` of each of QUESTIONS


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The Bernoulli graph served with an API key and no LLM; before it starts, what
    `hopgraph query --json` (GraphRAG.compare) says on the same Lite file."""
    uri = _ingested(tmp_path_factory.mktemp("client"))
    expected = []
    for question, options in QUESTIONS:
        ran = run_process("query", question, "--uri", uri, "--json", "--no-llm",
                          *_cli_options(options))
        assert ran.code == 0, ran.stderr
        expected.append(json.loads(ran.stdout))
    with serving(uri, "--no-llm", env=own_environment(HOPGRAPH_API_KEY=KEY)) as url:
        yield Served(url, expected)


@pytest.fixture
def client(served: Served) -> Iterator[Client]:
    with Client(served.url, api_key=KEY) as made:
        yield made


def _ids(passages: list[Any]) -> list[str]:
    return [p.id if hasattr(p, "id") else p["id"] for p in passages]


def _same_as_cli(found: Comparison, expected: dict[str, Any]) -> None:
    assert found.question == expected["question"] and found.method == expected["method"]
    assert _ids(found.graph) == _ids(expected["graph"])
    assert _ids(found.naive) == _ids(expected["naive"])
    for hit, want in zip(found.graph, expected["graph"], strict=True):
        assert hit.score == pytest.approx(want["score"], abs=1e-4)
        assert (hit.via, hit.doc_id, hit.text) == (want["via"], want["doc_id"], want["text"])
    assert [r.id for r in found.relations] == [r["id"] for r in expected["relations"]]
    assert [e["id"] for e in found.entities] == [e["id"] for e in expected["entities"]]
    assert [b["id"] for b in found.bridges] == [b["id"] for b in expected["bridges"]]


def test_query_equals_graphrag_compare(client: Client, served: Served) -> None:
    for (question, options), expected in zip(QUESTIONS, served.expected, strict=True):
        found = client.query(question, **options)
        _same_as_cli(found, expected)
        assert found.subgraph["nodes"] and isinstance(found.cached, bool)
        retrieval = client.retrieve(question, **options)
        assert isinstance(retrieval, Retrieval)
        assert _ids(retrieval.passages) == _ids(expected["graph"])
        assert retrieval.method == expected["method"]
        assert _ids(found.naive_retrieval.passages) == _ids(expected["naive"])
    as_query = client.query(Query(NEPHEW, top_k=3, method="seed", degree=2))
    _same_as_cli(as_query, served.expected[1])


def test_async_query_equals_graphrag_compare(served: Served) -> None:
    async def run() -> list[Comparison]:
        async with AsyncClient(served.url, api_key=KEY) as client:
            return list(await asyncio.gather(*(client.query(q, **options)
                                               for q, options in QUESTIONS)))

    for found, expected in zip(asyncio.run(run()), served.expected, strict=True):
        _same_as_cli(found, expected)


def test_a_filter_outside_every_document_finds_nothing(client: Client) -> None:
    found = client.query(QUESTION, where={"doc_id": "no-such-document"})
    assert found.graph == [] and found.naive == []


def _rows() -> list[dict[str, Any]]:
    return [{"passage": "Basel lies on the Rhine.", "triplets": [["Basel", "lies on", "Rhine"]],
             "doc_id": ODD_DOC, "metadata": {"year": 2021, "lang": "en"}},
            {"passage": "Bern is the capital of Switzerland.",
             "triplets": [["Bern", "is the capital of", "Switzerland"]],
             "doc_id": "old/notes.txt", "metadata": {"year": 1999, "lang": "de"}}]


def test_documents_filters_and_entities_on_a_graph_of_its_own(client: Client) -> None:
    client.create_graph("client_docs")
    try:
        docs = client.with_graph("client_docs")
        assert docs.graph == "client_docs" and docs.documents() == {}
        added = docs.add_documents(_rows())
        assert added["passages_added"] == 2 and added["problems"] == []
        assert docs.documents() == {ODD_DOC: 1, "old/notes.txt": 1}
        recent = docs.query("Which river?", where={"year": {"$gte": 2020}})
        assert [p.doc_id for p in recent.graph] == [ODD_DOC]
        assert type(recent.graph[0]) is PassageHit  # equal to GraphRAG's own hits
        described = docs.retrieve("Which river?", where={"year": 2021}, include_metadata=True)
        assert isinstance(described.passages[0], PassageHitWithMetadata)
        assert described.passages[0].metadata == {"year": 2021, "lang": "en"}
        assert {p.doc_id for p in docs.retrieve("Which city?", method="naive").passages} \
            == {ODD_DOC, "old/notes.txt"}
        with pytest.raises(InvalidRequest, match=r"where\.year\.\$regex") as bad:
            docs.query("Which river?", where={"year": {"$regex": "20"}})
        assert isinstance(bad.value, UsageError) and bad.value.status == 422
        basel = docs.entity("  basel ")
        assert basel["name"] == "Basel" and basel["relations"][0]["text"]
        with pytest.raises(NotFound, match="no entity"):
            docs.entity("Atlantis")
        assert docs.stats()["passages"] == 2
        removed = docs.delete_document(ODD_DOC)
        assert removed["documents"] == [ODD_DOC] and removed["passages"] == 1
        assert docs.documents() == {"old/notes.txt": 1}
        with pytest.raises(NotFound, match="no document") as gone:
            docs.delete_document(ODD_DOC)
        assert gone.value.fix == "GET /documents lists the stored documents"
        record = PassageRecord("Zurich lies on the Limmat.",
                               [Triplet("Zurich", "lies on", "Limmat")])
        assert docs.add_documents([record], doc_id="rivers", append=True)["passages_added"] == 1
        assert docs.documents() == {"old/notes.txt": 1, "rivers": 1}
    finally:
        client.drop_graph("client_docs")


def test_async_documents_and_graphs(served: Served) -> None:
    async def run() -> None:
        async with AsyncClient(served.url, api_key=KEY) as client:
            assert (await client.health()) == {"status": "ok"}
            await client.create_graph("client_async")
            assert "client_async" in await client.graphs()
            docs = client.with_graph("client_async")
            try:
                assert (await docs.add_documents(_rows()))["passages_added"] == 2
                assert await docs.documents() == {ODD_DOC: 1, "old/notes.txt": 1}
                recent = await docs.query("Which river?", where={"lang": "en"})
                assert [p.doc_id for p in recent.graph] == [ODD_DOC]
                assert (await docs.entity("Bern"))["name"] == "Bern"
                assert (await docs.stats())["documents"] == 2
                assert (await docs.delete_document(ODD_DOC))["documents"] == [ODD_DOC]
                with pytest.raises(NotFound):
                    await docs.delete_document(ODD_DOC)
            finally:
                await client.drop_graph("client_async")
            assert "client_async" not in await client.graphs()
            with pytest.raises(NotFound, match="no graph 'client_async'"):
                await docs.stats()

    asyncio.run(run())


def test_files_are_uploaded_to_a_job_and_followed(client: Client, tmp_path: Path) -> None:
    client.create_graph("client_uploads")
    notes = tmp_path / "notes.txt"
    notes.write_text("Leonhard Euler studied under Johann Bernoulli in Basel.\n", "utf-8")
    rows = json.dumps({"passage": "Basel lies on the Rhine.",
                       "triplets": [["Basel", "lies on", "Rhine"]]}).encode()
    try:
        docs = client.with_graph("client_uploads")
        queued = docs.upload([notes, ("rivers.jsonl", rows), ("bad.pdf", b"not a pdf")])
        assert queued["graph"] == "client_uploads" and queued["files_total"] == 3
        job = docs.wait_for_job(queued["id"], timeout=300)
        assert job["state"] == "done" and job["files_done"] == 3
        assert [p["file"] for p in job["problems"]] == ["bad.pdf"]  # named; the rest stored
        assert set(docs.documents()) == set(job["documents"]) == {"notes.txt", "rivers.jsonl"}
        # An uploaded document's passages name the upload, not where the server kept it.
        (found,) = docs.retrieve("Who did Euler study under?", method="naive", top_k=1,
                                 where={"type": "txt"}).passages
        assert found.source == {"file": "notes.txt", "page": None, "headings": [],
                                "start": 0, "end": len(notes.read_text("utf-8").strip())}
        assert found.source_line == "notes.txt"
        (row,) = docs.retrieve("Basel", method="naive", top_k=1,
                               where={"doc_id": "rivers.jsonl"}).passages
        assert row.source is not None and row.source["file"] == "rivers.jsonl"
        assert client.job(job["id"]) == job
        assert job["id"] in [j["id"] for j in client.jobs()]
        with pytest.raises(Conflict, match="has ended"):  # nothing to stop
            client.cancel_job(job["id"])
        with pytest.raises(NotFound):
            client.job("0123456789abcdef")
        again = docs.upload([notes], wait=True, timeout=300)  # the same file: unchanged
        assert again["state"] == "done" and docs.documents()["notes.txt"] == 1
    finally:
        client.drop_graph("client_uploads")


def test_async_uploads(served: Served) -> None:
    async def run() -> None:
        async with AsyncClient(served.url, api_key=KEY, graph="client_async_up") as client:
            await client.with_graph(None).create_graph("client_async_up")
            try:
                job = await client.upload([("a.md", b"# Basel\n\nBasel lies on the Rhine.")],
                                          extractor="offline", wait=True, timeout=300)
                assert job["state"] == "done" and job["documents"] == ["a.md"]
                assert (await client.job(job["id"]))["id"] == job["id"]
                assert job["id"] in [j["id"] for j in await client.jobs()]
                with pytest.raises(Conflict, match="has ended"):
                    await client.cancel_job(job["id"])
            finally:
                await client.with_graph(None).drop_graph("client_async_up")

    asyncio.run(run())


def test_graphs_are_made_listed_and_dropped(client: Client) -> None:
    assert client.health() == {"status": "ok"}
    assert client.default_graph() == "hopgraph" and "hopgraph" in client.graphs()
    client.create_graph("client_made")
    made = client.with_graph("client_made")
    assert "client_made" in client.graphs() and made.stats()["passages"] == 0
    with pytest.raises(Conflict, match="exists already"):
        client.create_graph("client_made")
    made.close()  # a twin leaves the connections to its origin
    client.drop_graph("client_made")
    assert "client_made" not in client.graphs()
    with pytest.raises(NotFound, match="no graph 'client_made'") as missing:
        made.query(QUESTION)
    assert missing.value.fix == "GET /graphs lists the graphs your key may use"
    with pytest.raises(Conflict, match="default graph"):
        client.drop_graph("hopgraph")
    with pytest.raises(InvalidRequest):
        client.create_graph("9 not a name")
    assert client.stats()["documents"] == 1  # the default graph, untouched


def test_keys_are_made_listed_and_revoked(client: Client, served: Served) -> None:
    made = client.create_key("read", ["hopgraph"], label="client-reader")
    assert made["key"].startswith("hg_") and made["graphs"] == ["hopgraph"]
    assert made["id"] in [k["id"] for k in client.list_keys()]
    assert all("key" not in k for k in client.list_keys())  # never the keys themselves
    with Client(served.url, api_key=made["key"]) as reader:
        assert reader.stats()["documents"] == 1  # it counts at once
        assert reader.default_graph() == "hopgraph"
        with pytest.raises(Forbidden, match="needs admin"):
            reader.list_keys()
        assert [k["id"] for k in client.revoke_key("client-reader")] == [made["id"]]
        with pytest.raises(Unauthorized):
            reader.stats()  # revoked: at once
    with pytest.raises(NotFound, match="no key"):
        client.revoke_key("client-reader")
    with pytest.raises(InvalidRequest, match="graphs"):
        client.create_key("write")  # a write key names its graphs
    with pytest.raises(UsageError, match="list of names"):
        client.create_key("read", "hopgraph")  # type: ignore[arg-type]

    async def run() -> list[str]:
        async with AsyncClient(served.url, api_key=KEY) as admin:
            other = await admin.create_key("admin", label="client-admin")
            listed = [k["label"] for k in await admin.list_keys()]
            gone = await admin.revoke_key(other["id"])
            return [*listed, *(k["label"] for k in gone)]

    assert asyncio.run(run()).count("client-admin") == 2


def test_ask_without_an_llm_gives_the_evidence(client: Client, served: Served) -> None:
    events = list(client.ask(QUESTION, top_k=2))
    assert [type(e) for e in events] == [Evidence, NoAnswer]
    assert len(events[0].passages) == 2 and "LLM" in events[1].message
    assert _ids(events[0].passages) == _ids(served.expected[0]["graph"])[:2]
    with pytest.raises(UsageError, match="has no LLM") as failed:
        client.answer(QUESTION)
    assert failed.value.fix and "--llm" in failed.value.fix

    async def run() -> list[Any]:
        async with AsyncClient(served.url, api_key=KEY) as client:
            return [event async for event in client.ask(QUESTION, top_k=2)]

    assert asyncio.run(run()) == events


def test_failures_are_typed_and_say_what_to_do(served: Served) -> None:
    with Client(served.url, api_key="wrong") as wrong, Client(served.url) as keyless:
        for attempt in (wrong.stats, keyless.documents, lambda: wrong.query(QUESTION)):
            with pytest.raises(Unauthorized, match="missing or wrong API key") as failed:
                attempt()
            assert isinstance(failed.value, UsageError) and failed.value.status == 401
            assert failed.value.fix and "Authorization: Bearer" in failed.value.fix
        assert keyless.health() == {"status": "ok"}  # needs no key
    with Client(served.url, api_key=KEY, graph="nowhere") as lost:
        with pytest.raises(NotFound, match="no graph 'nowhere'") as missing:
            lost.documents()
        assert missing.value.where == f"GET {served.url}/graphs/nowhere/documents"
    with Client(served.url, api_key=KEY) as client:
        with pytest.raises(InvalidRequest, match="top_k"):
            client.query(QUESTION, top_k=0)
        with pytest.raises(InvalidRequest, match="unknown method"):
            client.query(QUESTION, method="telepathy")
        with pytest.raises(InvalidRequest, match=r"where\.\$or"):
            list(client.ask(QUESTION, where={"$or": []}))
    down = f"http://127.0.0.1:{free_port()}"
    with Client(down) as nobody, pytest.raises(ConnectionFailed, match="cannot connect") as off:
        nobody.query(QUESTION)
    assert isinstance(off.value, ConnectionError) and off.value.where == f"POST {down}/query"
    assert off.value.fix and "hopgraph serve" in off.value.fix
    with Client(down) as nobody, pytest.raises(ConnectionFailed, match="cannot connect"):
        list(nobody.ask(QUESTION))


def test_async_failures_are_typed(served: Served) -> None:
    async def run() -> None:
        async with AsyncClient(served.url, api_key="wrong") as wrong:
            with pytest.raises(Unauthorized):
                await wrong.graphs()
        async with AsyncClient(served.url, api_key=KEY, graph="nowhere") as lost:
            with pytest.raises(NotFound):
                await lost.query(QUESTION)
            with pytest.raises(NotFound):
                await lost.answer(QUESTION)
        async with AsyncClient(served.url, api_key=KEY) as client:
            with pytest.raises(Conflict):
                await client.drop_graph("hopgraph")
            with pytest.raises(UsageError, match="has no LLM"):
                await client.answer(QUESTION)
        async with AsyncClient(f"http://127.0.0.1:{free_port()}") as nobody:
            with pytest.raises(ConnectionFailed, match="cannot connect"):
                await nobody.health()
            with pytest.raises(ConnectionFailed, match="cannot connect"):
                [event async for event in nobody.ask(QUESTION)]

    asyncio.run(run())


# --- a server with an LLM (scripted) ---------------------------------------------------------

@dataclass
class WithLLM:
    url: str
    llm: FakeLLMServer


@pytest.fixture(scope="module")
def llm_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WithLLM]:
    """The Bernoulli graph served, without keys, with a scripted "good LLM" (no cache: each
    answer is asked of it)."""
    uri = _ingested(tmp_path_factory.mktemp("client_llm"))
    with FakeLLMServer(good_llm) as fake, serving(
            uri, "--llm", "fake-model", "--llm-base-url", fake.url,
            env=own_environment(OPENAI_API_KEY="test", HOPGRAPH_LLM_CACHE="off")) as url:
        yield WithLLM(url, fake)


def _daniel_answer(evidence: Evidence) -> str:
    """What the scripted LLM writes from `evidence` (scripted_llm.good_llm)."""
    number = next((i for i, p in enumerate(evidence.passages, start=1)
                   if p.text.startswith("Daniel Bernoulli")), None)
    if number is None:
        return "I don't know: the passages do not say who the teacher's son is."
    return (f"Daniel Bernoulli, the son of Euler's teacher Johann Bernoulli, made major "
            f"contributions to fluid dynamics and probability [{number}].")


def test_ask_streams_the_answer(llm_served: WithLLM) -> None:
    with Client(llm_served.url) as client:
        events = list(client.ask(QUESTION, method="default"))
        evidence, *tokens, done = events
        assert isinstance(evidence, Evidence) and isinstance(done, Done)
        assert len(tokens) > 1 and all(isinstance(t, Token) for t in tokens)
        assert "".join(t.text for t in tokens) == _daniel_answer(evidence)
        assert done.usage["completion_tokens"] > 0
        answer = client.answer(QUESTION, top_k=4)
        assert isinstance(answer, Answer) and answer.question == QUESTION
        assert len(answer.retrieval.passages) == 4 and answer.retrieval.method == ""
        assert answer.text == _daniel_answer(Evidence(answer.retrieval.passages))
        found = client.query(QUESTION)  # the server's default method with an LLM
        assert found.method == "llm" and found.llm is not None
        assert any(p.text.startswith("Daniel Bernoulli") for p in found.graph)


def test_async_ask_streams_the_answer(llm_served: WithLLM) -> None:
    async def run() -> tuple[list[Any], Answer]:
        async with AsyncClient(llm_served.url) as client:
            events = [event async for event in client.ask(QUESTION, method="seed")]
            return events, await client.answer(Query(QUESTION, method="default"))

    events, answer = asyncio.run(run())
    assert isinstance(events[0], Evidence) and isinstance(events[-1], Done)
    assert "".join(e.text for e in events if isinstance(e, Token)) \
        == _daniel_answer(events[0])
    assert answer.retrieval.method == "default"
    assert answer.text == _daniel_answer(Evidence(answer.retrieval.passages))


def test_an_llm_failing_mid_answer_is_raised(llm_served: WithLLM) -> None:
    llm_served.llm.script(Reply(status=400))  # not retried: the next answer fails at once
    seen: list[Any] = []
    with Client(llm_served.url) as client, pytest.raises(UpstreamFailed) as failed:
        for event in client.ask("Who founded calculus?", method="default"):
            seen.append(event)
    assert [type(e) for e in seen] == [Evidence]  # the stream had begun
    assert isinstance(failed.value, LLMError) and failed.value.code == "upstream_failed"

    async def run() -> None:
        llm_served.llm.script(Reply(status=400))
        async with AsyncClient(llm_served.url) as client:
            with pytest.raises(UpstreamFailed):
                await client.answer("Who studied fluids?", method="default")

    asyncio.run(run())
