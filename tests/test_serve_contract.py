"""The REST API keeps its contract: schemathesis (`--checks all`, every phase, stateful
included) finds no failure against a real `hopgraph serve`; every error has one body;
hostile input (NaN, Infinity, lone surrogates, deep nesting, huge requests, too many files,
foreign Host headers) gets a clear 4xx, never a 500, the framework's own 400 or an echo of
the whole request; HEAD works wherever GET does."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import BERNOULLI, need, run_process, serving
from fastapi.testclient import TestClient

from hopgraph import GraphRAG
from hopgraph.config import ServeSettings
from hopgraph.serve.app import create_app
from hopgraph.serve.bodies import MAX_DEPTH
from hopgraph.serve.errors import ECHO_CHARS
from hopgraph.serve.service import GraphService

KEY = "contract-test-key"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def graph_db(tmp_path_factory: pytest.TempPathFactory, local_embedder) -> str:
    """The demo graph, for this process's own test clients."""
    uri = str(tmp_path_factory.mktemp("contract") / "g.db")
    with GraphRAG(uri=uri, embedder=local_embedder) as rag:
        rag.add_files([need(BERNOULLI)])
    return uri


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`hopgraph serve` on the demo graph (its own Lite file: a Lite file is one process's),
    with an API key, in its own process."""
    uri = str(tmp_path_factory.mktemp("served") / "g.db")
    built = run_process("ingest", str(need(BERNOULLI)), "--uri", uri, "--quiet")
    assert built.code == 0, built.stderr
    with serving(uri, env={**os.environ, "HOPGRAPH_API_KEY": KEY}) as base:
        yield base


# The one answer the API gives on purpose that a check calls a failure: a cancelled job
# (`DELETE /jobs/{id}`) stays readable, with its end, at `GET /jobs/{id}` and `.../events`
# (use_after_free, found by the stateful phase). It is said as a baseline entry, which holds
# in every phase whatever `--checks` says; a check switched off per operation in
# schemathesis.toml is switched on again by `--checks all`.
# The routes under /graphs/{graph}/ are called on the served graph (the default one), not
# only on made-up names that answer 404.
CONTRACT = 'baseline = "schemathesis-baseline.json"\n\n[parameters]\n"path.graph" = "hopgraph"\n'
BASELINE = """{"format_version": 1, "entries": [
  {"operation": "DELETE /jobs/{job_id}", "check": "use_after_free", "failure": "UseAfterFree",
   "signature": "", "why": "a cancelled job stays readable (docs/server.md)"}]}
"""


def test_schemathesis_finds_no_failure(served: str, tmp_path: Path) -> None:
    """Every check schemathesis has, in every phase (stateful included), on every
    operation, with a fixed seed and few examples (CI's time). Health checks about how fast
    it can *generate* data are off (they measure this machine)."""
    (tmp_path / "schemathesis.toml").write_text(CONTRACT, encoding="utf-8")
    (tmp_path / "schemathesis-baseline.json").write_text(BASELINE, encoding="utf-8")
    done = subprocess.run(
        [str(BIN / "schemathesis"), "run", f"{served}/openapi.json",
         "-H", f"Authorization: Bearer {KEY}", "--checks", "all",
         "--phases", "examples,coverage,fuzzing,stateful", "--max-examples", "30",
         "--seed", "7", "--suppress-health-check", "filter_too_much,too_slow", "--no-color",
         "--request-timeout", "60"],
        cwd=tmp_path, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "Baseline:" in done.stdout and "Stateful" in done.stdout, done.stdout[-3000:]
    assert " passed" in done.stdout


@pytest.fixture
def client(graph_db: str, local_embedder) -> Iterator[TestClient]:
    rag = GraphRAG(uri=graph_db, embedder=local_embedder)
    app = create_app(GraphService(rag), ServeSettings(
        api_key=KEY, allowed_hosts=["localhost", "127.0.0.1", "testserver"]))
    with TestClient(app, headers={"Authorization": f"Bearer {KEY}"}) as test_client:
        yield test_client
    rag.close()


def _error(response) -> dict:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "fix"}, body
    return body["error"]


@pytest.mark.parametrize("raw", [
    b'{"question": "Who?", "top_k": NaN}',
    b'{"question": "Who?", "top_k": Infinity}',
    b'{"question": "Who?", "entities": [-Infinity]}',
    b'{"question": "Who?", "top_k": 1e999}',
    b'{"question": "\\ud800"}',
    b'{"question": "Who?", "entities": ["\\udfff"]}',
    b'{"\\ud800": 1, "question": "Who?"}',
])
@pytest.mark.slow
def test_nan_infinity_and_lone_surrogates_are_422(client: TestClient, raw: bytes) -> None:
    for path in ("/query", "/ask"):
        response = client.post(path, content=raw, headers={"Content-Type": "application/json"})
        assert response.status_code == 422, (path, raw, response.text)
        assert _error(response)["code"] == "invalid_request"
    rows = raw.replace(b'"question": "Who?"', b'"rows": [{"passage": "x", "n": NaN}]')
    response = client.post("/documents", content=rows,
                           headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text


def test_an_error_never_echoes_the_request(client: TestClient) -> None:
    huge = client.post("/documents", json={"rows": [{"passage": "x"}] * 10_001})
    assert huge.status_code == 422 and len(huge.content) < 1000, len(huge.content)
    long_name = "Q" * 5000
    missing = client.get(f"/entities/{long_name}")
    assert missing.status_code == 404
    assert len(_error(missing)["message"]) < ECHO_CHARS + 100
    wrong = client.post("/query", json={"question": "Who?", "top_k": "five" * 1000})
    assert wrong.status_code == 422 and "five" not in wrong.text
    assert _error(wrong)["message"].startswith("body.top_k")


def test_every_error_has_the_one_body(client: TestClient, graph_db: str,
                                      local_embedder) -> None:
    assert _error(client.post("/query", json={"question": "Who?", "topk": 3}))["code"] \
        == "invalid_request"  # an unknown field
    assert _error(client.post("/query", json={"question": "Who?", "top_k": True}))
    assert client.post("/query", json={"question": "Who?", "top_k": 3.0}).status_code == 200
    assert _error(client.delete("/documents/none-such"))["code"] == "not_found"
    bad_json = client.post("/query", content=b"{nope", headers={
        "Content-Type": "application/json"})
    assert bad_json.status_code == 400 and _error(bad_json)["code"] == "bad_input"
    options = client.request("OPTIONS", "/documents")
    assert options.status_code == 405 and _error(options)["code"] == "method_not_allowed"
    assert set(options.headers["allow"].replace(" ", "").split(",")) == {"GET", "HEAD",
                                                                         "POST"}
    unauthorized = client.get("/stats", headers={"Authorization": "Bearer wrong"})
    assert unauthorized.status_code == 401 and _error(unauthorized)["fix"]
    rag = GraphRAG(uri=graph_db, embedder=local_embedder)  # no LLM: `llm` is not offered
    try:
        with TestClient(create_app(GraphService(rag))) as plain:
            schema = plain.get("/openapi.json").json()
            method = schema["components"]["schemas"]["QueryRequest"]["properties"]["method"]
            offered = [name for option in method["anyOf"] for name in option.get("enum", [])]
            assert "default" in offered and "llm" not in offered
            for path in schema["paths"].values():
                for operation in path.values():
                    assert "500" in operation["responses"], operation
    finally:
        rag.close()


@pytest.mark.parametrize("depth", [70, 600, 5000])
def test_a_body_nested_too_deeply_is_422_naming_the_place(client: TestClient,
                                                         depth: int) -> None:
    """Past MAX_DEPTH levels, whether Python's parser could read the body (70, 600) or not
    (5000): the one error body, never the framework's 400."""
    body = ('{"question": "Who?", "where": ' + '{"$not": ' * depth + '{"doc_id": "x"}'
            + "}" * depth + "}")
    for path in ("/query", "/ask"):
        response = client.post(path, content=body.encode(),
                               headers={"Content-Type": "application/json"})
        assert response.status_code == 422, (path, depth, response.text)
        message = _error(response)["message"]
        assert message.startswith("body.where.$not.$not.$not"), message
        assert f"nested deeper than {MAX_DEPTH} levels" in message
        assert len(message) < ECHO_CHARS + 100
    shallow = client.post("/query", json={"question": "Who?", "where": {
        "$not": {"$not": {"$not": {"doc_id": "x"}}}}})
    assert shallow.status_code == 200, shallow.text
    rows = '{"rows": [{"passage": "x", "metadata": ' + "[" * 3000 + "]" * 3000 + "}]}"
    response = client.post("/documents", content=rows.encode(),
                           headers={"Content-Type": "application/json"})
    assert response.status_code == 422 and _error(response)["message"].startswith(
        "body.rows.0.metadata.0.0.0"), response.text


def test_the_upload_form_is_read_by_the_project_not_the_framework(
        graph_db: str, local_embedder) -> None:
    """More files than --max-files (21 as 1,001) is the schema's 422 naming the limit and the
    setting; an empty `extractor=` or `append=` is a 422 (the framework would take it for
    the default); a text field over the parser's part size a 413."""
    rag = GraphRAG(uri=graph_db, embedder=local_embedder)
    try:
        app = create_app(GraphService(rag), ServeSettings(max_files=20))
        with TestClient(app) as plain:
            schema = plain.get("/openapi.json").json()["components"]["schemas"]
            files_schema = schema["Body_upload_uploads_post"]["properties"]["files"]
            assert files_schema["maxItems"] == 20
            assert files_schema["items"]["format"] == "binary"  # any bytes (and 3.0's word)
            for count in (21, 1001):
                files = [("files", (f"{i}.txt", b"A note.", "text/plain"))
                         for i in range(count)]
                many = plain.post("/uploads", files=files)
                assert many.status_code == 422, (count, many.text)
                error = _error(many)
                assert error["message"].startswith("body.files: more than 20 files")
                assert "--max-files" in error["fix"] and "HOPGRAPH_MAX_FILES" in error["fix"]
            one = [("files", ("a.txt", b"A note.", "text/plain"))]
            for field in ("extractor", "append"):
                empty = plain.post("/uploads", files=one, data={field: ""})
                assert empty.status_code == 422, (field, empty.text)
                assert _error(empty)["message"].startswith(f"body.{field}: empty")
            huge = plain.post("/uploads", files=one, data={"extractor": "x" * (2 << 20)})
            assert huge.status_code == 413 and _error(huge)["code"] == "too_large"
            assert plain.get("/jobs").json()["jobs"] == []  # none of them made a job
    finally:
        rag.close()


def test_head_is_answered_wherever_get_is(client: TestClient, caplog) -> None:
    import logging

    with caplog.at_level(logging.INFO, logger="hopgraph.access"):
        for path in ("/health", "/", "/graphs", "/stats", "/docs", "/openapi.json"):
            got, head = client.get(path), client.head(path)
            assert head.status_code == got.status_code == 200, (path, head.status_code)
            assert head.content == b"" and head.headers["content-type"] == \
                got.headers["content-type"], path
        refused = client.head("/query")
        assert refused.status_code == 405 and refused.headers["allow"] == "POST"
        assert client.head("/entities/Nobody").status_code == 404
    lines = [r.getMessage() for r in caplog.records if r.name == "hopgraph.access"]
    for route in ("/", "/docs", "/openapi.json", "/graphs"):
        assert any(f"method=HEAD route={route} " in line and "status=200" in line
                   for line in lines), (route, lines)
    assert not any("route=unmatched" in line for line in lines), lines


def test_health_hosts_and_the_docs_page(client: TestClient) -> None:
    assert client.get("/health").json() == {"status": "ok"}
    rebound = client.get("/stats", headers={"Host": "evil.example:8000"})
    assert rebound.status_code == 400 and _error(rebound)["code"] == "host_not_allowed"
    assert client.get("/stats", headers={"Host": "localhost:8000"}).status_code == 200
    assert client.get("/stats", headers={"Host": "127.0.0.1"}).status_code == 200
    page = client.get("/docs").text
    assert "/static/vendor/swagger-ui-5.35.0/swagger-ui-bundle.js" in page
    assert "cdn" not in page.lower() and "https://" not in page
    assert client.get("/static/vendor/swagger-ui-5.35.0/swagger-ui-bundle.js").status_code \
        == 200
    assert client.get("/redoc").status_code == 404  # its page needs a CDN: not served


def test_the_cli_serves_only_its_own_host_names() -> None:
    from hopgraph.cli.serve import default_hosts
    from hopgraph.serve.guards import HostCheck

    check = HostCheck(None, default_hosts("127.0.0.1"))  # type: ignore[arg-type]
    assert check.accepts("127.0.0.1:8000") and check.accepts("localhost")
    assert check.accepts("[::1]:8000") and not check.accepts("attacker.example")
    wild = HostCheck(None, ["*.example.com", "kb.internal"])  # type: ignore[arg-type]
    assert wild.accepts("a.example.com:443") and wild.accepts("KB.internal")
    assert not wild.accepts("example.com.evil") and not wild.accepts("localhost")


def test_metrics_and_the_access_log(client: TestClient, caplog) -> None:
    import logging

    with caplog.at_level(logging.INFO, logger="hopgraph.access"):
        for _ in range(2):  # the second answer comes from the cache
            assert client.post("/query", json={"question": "Who taught Euler?"}
                               ).status_code == 200
        client.get("/entities/Nobody%20at%20all")
        client.get("/stats", headers={"Authorization": "Bearer wrong"})
    lines = [r.getMessage() for r in caplog.records if r.name == "hopgraph.access"]
    assert any("route=/query" in line and "status=200" in line and "key=HOPGRAPH_API_KEY" in line
               for line in lines)
    assert any("route=/entities/{name:path}" in line and "status=404" in line for line in lines)
    assert any("status=401" in line and "key=none" in line for line in lines)
    assert not any(KEY in line or "wrong" in line for line in lines)  # keys never logged
    text = client.get("/metrics").text
    assert 'hopgraph_requests_total{graph="hopgraph",route="/query",status="200"} 2.0' in text
    assert 'route="/entities/{name:path}",status="404"' in text
    assert 'hopgraph_answer_cache_total{graph="hopgraph",result="hit"} 1.0' in text
    assert 'hopgraph_graph_rows{graph="hopgraph",kind="relations"}' in text
    assert "hopgraph_request_seconds_bucket" in text and "hopgraph_llm_tokens_total" in text
    assert "Nobody" not in text  # routes by template: a client cannot add labels
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401


@pytest.mark.slow
def test_the_access_log_as_json(graph_db: str, local_embedder, caplog) -> None:
    import json
    import logging

    rag = GraphRAG(uri=graph_db, embedder=local_embedder)
    try:
        app = create_app(GraphService(rag), ServeSettings(log_json=True))
        with caplog.at_level(logging.INFO, logger="hopgraph.access"), TestClient(app) as plain:
            plain.get("/documents")
    finally:
        rag.close()
    line = json.loads(next(r.getMessage() for r in caplog.records
                           if r.name == "hopgraph.access"))
    assert set(line) == {"time", "method", "route", "graph", "status", "ms", "key"}
    assert (line["route"], line["status"], line["key"]) == ("/documents", 200, "none")


@pytest.mark.slow
def test_an_unexpected_error_is_a_500_and_its_traceback_is_logged(
        graph_db: str, local_embedder, monkeypatch, caplog) -> None:
    """The handler may run outside the `except` block (Starlette calls a plain function in a
    worker thread), so the traceback must be passed to the log, not looked up there."""
    rag = GraphRAG(uri=graph_db, embedder=local_embedder)

    def broken(self) -> dict:
        raise RuntimeError("a bug deep inside")

    monkeypatch.setattr(GraphRAG, "stats", broken)
    try:
        app = create_app(GraphService(rag))
        with TestClient(app, raise_server_exceptions=False) as plain, \
                caplog.at_level("ERROR", logger="hopgraph.serve.errors"):
            response = plain.get("/stats")
    finally:
        rag.close()
    assert response.status_code == 500 and _error(response)["code"]
    assert "a bug deep inside" not in response.text  # logged, never sent
    logged = [r for r in caplog.records if r.name == "hopgraph.serve.errors"]
    assert logged and logged[0].exc_info and "a bug deep inside" in str(logged[0].exc_info[1])
