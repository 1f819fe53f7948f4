"""`hopgraph mcp` end to end through the MCP SDK's own client: over stdio (with a scripted LLM
on 127.0.0.1 for `ask`), and over streamable HTTP behind the API keys of `hopgraph serve`.

Each server is a real `python -m hopgraph.cli mcp` process over a Milvus Lite file built by
another process (a Lite file is one process's at a time). A fixture holds each conversation
whole and returns what it saw, so the server has exited before the next one opens the file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from conftest import BERNOULLI, QUESTION, Ran, need, run_cli, run_process
from llm_server import FakeLLMServer
from scripted_llm import good_llm

anyio = pytest.importorskip("anyio", reason="anyio is missing: pip install -e '.[dev]'")
pytest.importorskip("mcp", reason="the MCP SDK is missing: pip install -e '.[dev]'")
httpx2 = pytest.importorskip(  # the SDK's HTTP client, which it depends on
    "httpx2", reason="httpx2, the MCP SDK's HTTP client, is missing: pip install -e '.[dev]'")

from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GRAPH = "bern"
ENV_KEY = "test-env-admin-key"
START_SECONDS = 300  # a bound on the server's start, polled: never a sleep to wait out


def _hopgraph(*args: str) -> list[str]:
    return [sys.executable, "-m", "hopgraph.cli", *args]


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The Bernoulli graph ingested by a `hopgraph ingest` process, and two read keys made
    by `hopgraph keys create`: one for this graph, one for another."""
    need(BERNOULLI)
    tmp = tmp_path_factory.mktemp("mcp")
    db = str(tmp / "mcp.db")
    done = run_process("ingest", str(BERNOULLI), "--uri", db, "--graph", GRAPH, "--quiet")
    assert done.code == 0, done.stderr
    keys = {}
    for name, graph in (("reader", GRAPH), ("stranger", "another_graph")):
        made = run_process("keys", "create", "--role", "read", "--graph", graph, "--json",
                           "--uri", db)
        assert made.code == 0, made.stderr
        keys[name] = json.loads(made.stdout)["key"]
    return {"db": db, "tmp": str(tmp), **keys}


# --- stdio -------------------------------------------------------------------------------

async def _stdio_conversation(server: StdioServerParameters, errlog: Any) -> dict[str, Any]:
    """Every call the stdio tests look at, in one session."""
    seen: dict[str, Any] = {}
    async with stdio_client(server, errlog=errlog) as (read, write), \
            ClientSession(read, write) as session:
        seen["init"] = await session.initialize()
        seen["tools"] = {tool.name: tool for tool in (await session.list_tools()).tools}
        call = session.call_tool
        seen["search"] = await call("search", {"question": QUESTION, "top_k": 3})
        seen["documents"] = await call("documents", {})
        doc = seen["documents"].structured_content["documents"][0]["doc_id"]
        seen["in_doc"] = await call("search", {"question": QUESTION, "where": {"doc_id": doc}})
        seen["elsewhere"] = await call("search", {"question": QUESTION,
                                                  "where": {"doc_id": {"$ne": doc}}})
        seen["bad_where"] = await call("search", {
            "question": QUESTION, "where": {"$or": [{"lang": "en"}, {"year": {"$regex": "1"}}]}})
        seen["bad_method"] = await call("search", {"question": QUESTION, "method": "magic"})
        for name, top_k in (("true", True), ("text", "3"), ("float", 2.0)):
            seen[f"top_k_{name}"] = await call("search", {"question": QUESTION, "top_k": top_k})
        seen["entity"] = await call("entity", {"name": "daniel  BERNOULLI"})
        seen["no_entity"] = await call("entity", {"name": "Nobody In Particular"})
        seen["ask"] = await call("ask", {"question": QUESTION})
    return seen


@pytest.fixture(scope="module")
def stdio(database: dict[str, str]) -> dict[str, Any]:
    """One stdio session with `hopgraph mcp` given an LLM (the scripted good one)."""
    errors = Path(database["tmp"]) / "stdio.stderr"
    with FakeLLMServer(good_llm) as llm, errors.open("w") as errlog:
        server = StdioServerParameters(
            command=sys.executable,
            args=["-m", "hopgraph.cli", "mcp", "--uri", database["db"], "--graph", GRAPH,
                  "--llm", "scripted", "--llm-base-url", llm.url],
            env={**os.environ, "OPENAI_API_KEY": "test", "HOPGRAPH_LLM_CACHE": "off"})
        try:
            seen = anyio.run(_stdio_conversation, server, errlog)
        except Exception as exc:
            errlog.flush()
            raise AssertionError(f"{exc!r}; the server said:\n{errors.read_text()}") from exc
        seen["llm_requests"] = len(llm.chat_requests)
    return seen


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def test_stdio_lists_the_tools_with_their_schemas(stdio: dict[str, Any]) -> None:
    tools = stdio["tools"]
    assert set(tools) == {"search", "ask", "entity", "documents"}
    search = tools["search"]
    assert "multi-hop" in search.description and "where" in search.description
    properties = search.input_schema["properties"]
    assert search.input_schema["required"] == ["question"]
    assert properties["top_k"]["default"] == 5 and properties["method"]["default"] == "default"
    assert "default" in properties["method"]["enum"] and "llm" in properties["method"]["enum"]
    assert "$in" in properties["where"]["description"]
    assert {"passages", "entities", "bridges"} <= search.output_schema["properties"].keys()
    assert tools["entity"].input_schema["required"] == ["name"]
    assert all(tool.annotations.read_only_hint for tool in tools.values())
    assert "search" in stdio["init"].instructions


def test_search_finds_the_multi_hop_passage(stdio: dict[str, Any]) -> None:
    result = stdio["search"]
    assert not result.is_error, _text(result)
    data = result.structured_content
    assert data["question"] == QUESTION and data["method"] == "default"
    assert len(data["passages"]) == 3
    daniel = [p for p in data["passages"] if p["text"].startswith("Daniel Bernoulli")]
    assert daniel and daniel[0]["relations"] and daniel[0]["via"] and daniel[0]["doc_id"]
    assert {"id", "text", "score", "doc_id", "relations", "via", "source"} == daniel[0].keys()
    # Rows stored without a source: the document id is the source, nothing more known.
    assert daniel[0]["source"] == {"file": daniel[0]["doc_id"], "page": None, "headings": [],
                                   "start": None, "end": None}
    assert [e["name"] for e in data["entities"]] == ["Euler"]
    assert any(b["name"] == "Daniel Bernoulli" for b in data["bridges"])
    text = _text(result)
    assert "Daniel Bernoulli (1700" in text and "via: Daniel Bernoulli was the son" in text
    assert f"({daniel[0]['doc_id']}, score " in text


def test_search_text_names_each_passage_source() -> None:
    """What an agent reads of a passage with a source: file, page and headings."""
    from hopgraph.integrations import mcp_views as views
    from hopgraph.records import PassageHit, Retrieval

    source = {"file": "report.pdf", "page": 3, "headings": ["Field report", "3. Safety"],
              "start": 120, "end": 260}
    result = Retrieval("Q?", "default", [PassageHit("p1", "Charge it cold.", 0.5,
                                                    doc_id="report.pdf", source=source)])
    view = views.search_view(result)
    assert view["passages"][0]["source"] == source
    assert "[1] (report.pdf · p. 3 · Field report › 3. Safety, score 0.500) Charge it" \
        in views.search_text(view)


def test_search_with_a_filter(stdio: dict[str, Any]) -> None:
    doc = stdio["documents"].structured_content["documents"][0]["doc_id"]
    inside = stdio["in_doc"].structured_content["passages"]
    assert inside and {p["doc_id"] for p in inside} == {doc}
    assert stdio["elsewhere"].structured_content["passages"] == []


def test_a_bad_filter_or_method_is_a_tool_error_naming_it(stdio: dict[str, Any]) -> None:
    bad = stdio["bad_where"]
    assert bad.is_error and bad.structured_content is None
    assert "where.$or[1].year.$regex: unknown operator '$regex'" in _text(bad)
    method = stdio["bad_method"]
    assert method.is_error and "unknown method 'magic'; choose one of" in _text(method)


def test_top_k_is_a_whole_number_as_over_rest(stdio: dict[str, Any]) -> None:
    """true or "3" is refused, as `POST /query` refuses it (pydantic's lax mode, which the SDK
    checks arguments in, would take true as 1); 2.0 counts as 2, as JSON Schema says."""
    for name in ("top_k_true", "top_k_text"):
        assert stdio[name].is_error and "top_k" in _text(stdio[name]), _text(stdio[name])
    assert len(stdio["top_k_float"].structured_content["passages"]) == 2


def test_entity_by_its_normalized_name(stdio: dict[str, Any]) -> None:
    result = stdio["entity"]
    assert not result.is_error, _text(result)
    data = result.structured_content
    assert data["name"] == "Daniel Bernoulli" and data["total_relations"] == 5
    assert "Daniel Bernoulli was the son of Johann Bernoulli" in {
        r["text"] for r in data["relations"]}
    assert {"id": data["relations"][0]["object"]["id"], "name": "Johann Bernoulli"} in (
        data["neighbours"])
    missing = stdio["no_entity"]
    assert missing.is_error and "no entity named 'Nobody In Particular'" in _text(missing)


def test_documents(stdio: dict[str, Any]) -> None:
    data = stdio["documents"].structured_content
    assert data["total_passages"] == 4 and len(data["documents"]) == 1
    assert data["documents"][0]["doc_id"].endswith("nano.json")
    assert _text(stdio["documents"]).startswith("1 document, 4 passages")


def test_ask_with_an_llm(stdio: dict[str, Any]) -> None:
    result = stdio["ask"]
    assert not result.is_error, _text(result)
    data = result.structured_content
    assert data["method"] == "llm" and len(data["passages"]) == 3
    cited = [n for n, p in enumerate(data["passages"], start=1)
             if p["text"].startswith("Daniel Bernoulli")]
    assert cited and f"[{cited[0]}]" in data["answer"]
    assert "fluid dynamics" in data["answer"] and data["usage"]["requests"] >= 1
    assert _text(result).startswith("Daniel Bernoulli, the son of Euler's teacher")
    assert stdio["llm_requests"] >= 3  # entities, relation choice, the answer


# --- streamable HTTP ---------------------------------------------------------------------

async def _http_session(url: str, key: str | None) -> dict[str, Any]:
    """Tools and a few calls with `key` (or none), or the error that refused the session."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
            streamable_http_client(url, http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        try:
            await session.initialize()
        except MCPError as exc:
            return {"refused": str(exc)}
        tools = {tool.name for tool in (await session.list_tools()).tools}
        search = await session.call_tool("search", {"question": QUESTION, "top_k": 2})
        llm = await session.call_tool("search", {"question": QUESTION, "method": "llm"})
        return {"tools": tools, "search": search, "llm": llm}


def _raw_post(url: str, key: str | None) -> tuple[int, dict[str, str], bytes]:
    """A bare JSON-RPC POST (status, headers, body), as any HTTP client sends it."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, "
               "text/event-stream"} | ({"Authorization": f"Bearer {key}"} if key else {})
    request = urllib.request.Request(url, method="POST", headers=headers, data=json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode())
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, dict(reply.headers), reply.read()
    except urllib.error.HTTPError as refused:
        return refused.code, dict(refused.headers), refused.read()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_up(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    """Poll until the endpoint answers (a 401: keys are needed), failing with the server's
    stderr if it exits first."""
    deadline = time.monotonic() + START_SECONDS
    while True:
        assert server.poll() is None, f"hopgraph mcp exited:\n{log.read_text()}"
        try:
            _raw_post(url, None)
            return
        except OSError:  # not listening yet
            assert time.monotonic() < deadline, f"no answer at {url}:\n{log.read_text()}"
            time.sleep(0.2)  # polling the server's start, not synchronization


@pytest.fixture(scope="module")
def http(database: dict[str, str]) -> dict[str, Any]:
    """`hopgraph mcp --http` (no LLM) with HOPGRAPH_API_KEY set and keys in the database,
    asked with each kind of key; the server has stopped when this returns."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    log = Path(database["tmp"]) / "http.stderr"  # a file, not a pipe nobody drains
    env = {**os.environ, "HOPGRAPH_API_KEY": ENV_KEY}
    with log.open("wb") as errors:
        server = subprocess.Popen(
            _hopgraph("mcp", "--http", "--port", str(port), "--uri", database["db"],
                      "--graph", GRAPH, "--no-llm"),
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors)
    try:
        _wait_until_up(url, server, log)
        seen = {name: anyio.run(_http_session, url, key) for name, key in (
            ("admin", ENV_KEY), ("reader", database["reader"]),
            ("stranger", database["stranger"]), ("wrong", "hg_not-a-key"), ("none", None))}
        seen["raw_none"] = _raw_post(url, None)
        seen["raw_wrong"] = _raw_post(url, "hg_not-a-key")
        seen["raw_stranger"] = _raw_post(url, database["stranger"])
    finally:
        server.terminate()
        server.wait(timeout=60)
    seen["log"] = log.read_text()
    return seen


def test_http_serves_a_client_with_a_key(http: dict[str, Any]) -> None:
    for name in ("admin", "reader"):  # the env key, and a read key of this graph
        session = http[name]
        assert "refused" not in session, session
        assert session["tools"] == {"search", "entity", "documents"}  # no LLM: no `ask`
        passages = session["search"].structured_content["passages"]
        assert any(p["text"].startswith("Daniel Bernoulli") for p in passages)
        assert session["llm"].is_error and "needs an LLM" in _text(session["llm"])
    assert f"graph '{GRAPH}'" in http["log"] and "API key required" in http["log"]


def test_http_refuses_a_missing_or_wrong_key(http: dict[str, Any]) -> None:
    for name in ("none", "wrong"):
        assert http[name] == {"refused": "missing or wrong API key; send the header "
                              "'Authorization: Bearer <key>' (`hopgraph keys create` makes "
                              "one; HOPGRAPH_API_KEY is the server's own)"}
        status, headers, body = http[f"raw_{name}"]
        assert status == 401 and headers["www-authenticate"] == "Bearer"
        assert json.loads(body)["error"]["message"].startswith("missing or wrong API key")


def test_http_refuses_a_key_of_another_graph(http: dict[str, Any]) -> None:
    assert "may not read the graph this server serves" in http["stranger"]["refused"]
    status, headers, _ = http["raw_stranger"]
    assert status == 403 and "www-authenticate" not in headers


# --- the command itself ------------------------------------------------------------------

def test_beyond_loopback_without_a_key_is_refused(smoke: tuple[dict[str, str], Ran]) -> None:
    env = {**smoke[0], "HOPGRAPH_API_KEY": ""}
    done = run_process("mcp", "--http", "--host", "0.0.0.0", "--port", "0", env=env)
    assert done.code == 2 and "refusing to serve on 0.0.0.0" in done.stderr, done.stderr


def test_a_missing_extra_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m.startswith("mcp.")] + [
            "hopgraph.integrations.mcp"]:
        monkeypatch.delitem(sys.modules, name, raising=False)  # put back after the test
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` fails as if not installed
    done = run_cli("mcp", "--uri", "never-opened.db")
    assert done.code == 2 and 'pip install ".[mcp]"' in done.stderr


def test_the_cli_does_not_import_the_sdk() -> None:
    """A plain `pip install hopgraph` has no MCP SDK: only `hopgraph mcp` imports it."""
    done = subprocess.run([sys.executable, "-c", (
        "import sys, hopgraph, hopgraph.cli; hopgraph.cli.build_parser(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'fastapi')))")],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr


def test_the_example_and_the_desktop_config(tmp_path: Path) -> None:
    """examples/mcp_client_example.py runs as its docstring says (after `hopgraph ingest` of
    the demo into ./hopgraph.db); examples/mcp_config.json starts a command that parses."""
    from hopgraph.cli import build_parser
    from hopgraph.cli.mcp import cmd_mcp

    entry = json.loads((EXAMPLES / "mcp_config.json").read_text())["mcpServers"]["hopgraph"]
    assert entry["command"].endswith("/hopgraph")
    parsed = build_parser().parse_args(entry["args"])
    assert parsed.func is cmd_mcp and parsed.graph == "demo" and not parsed.http
    built = run_process("ingest", str(need(BERNOULLI)), "--graph", "demo", "--quiet",
                        cwd=tmp_path)
    assert built.code == 0, built.stderr
    done = subprocess.run([sys.executable, str(EXAMPLES / "mcp_client_example.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, env={**os.environ, "HOPGRAPH_LLM_MODEL": ""})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("tools: search, entity, documents\n"), done.stdout
    assert "Daniel Bernoulli (1700" in done.stdout and done.stdout.count("[0.") == 3
    assert "- Daniel Bernoulli was the son of Johann Bernoulli (1 passage)" in done.stdout
