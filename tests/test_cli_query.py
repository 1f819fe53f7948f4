"""`hopgraph query` and `hopgraph ask` end to end (ask against a scripted LLM on 127.0.0.1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BERNOULLI, QUESTION, Ran, need, run_cli, run_process
from llm_server import FakeLLMServer
from scripted_llm import garbage_llm, good_llm


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("cli-query")
    env = {"HOPGRAPH_URI": str(tmp / "q.db"), "HOPGRAPH_GRAPH": "q", "HOPGRAPH_LLM_CACHE": "off",
           "HOPGRAPH_LLM_MODEL": ""}
    assert run_cli("ingest", str(need(BERNOULLI)), "--quiet", env=env).code == 0
    return env


def test_query_json_in_a_new_process(smoke: tuple[dict[str, str], Ran]) -> None:
    done = run_process("query", QUESTION, "--json", "--top-k", "2", env=smoke[0])
    assert done.code == 0, done.stderr
    out = json.loads(done.stdout)
    assert {"graph", "naive", "entities", "relations", "timings_ms"} <= out.keys()
    assert any(p["text"].startswith("Daniel Bernoulli") for p in out["graph"])
    assert not any(p["text"].startswith("Daniel Bernoulli") for p in out["naive"])


def test_query_json_and_text(env: dict[str, str]) -> None:
    out = json.loads(run_cli("query", QUESTION, "--json", "--top-k", "2", env=env).stdout)
    assert list(out) == ["question", "method", "graph", "naive", "entities", "relations",
                         "timings_ms", "naive_timings_ms", "notes", "llm", "bridges"]
    assert all({"id", "text", "score", "relations", "via"} <= p.keys()
               for p in out["graph"] + out["naive"])
    assert any(p["text"].startswith("Daniel Bernoulli") for p in out["graph"])
    assert not any(p["text"].startswith("Daniel Bernoulli") for p in out["naive"])
    assert out["method"] == "default" and out["llm"] is None
    text = run_cli("query", QUESTION, "--method", "seed", "--entity", "Euler", env=env).stdout
    assert "GRAPH (seed)" in text and "NAIVE" in text and "timings (ms)" in text


def test_bad_requests_are_usage_errors(env: dict[str, str]) -> None:
    zero = run_cli("query", QUESTION, "--top-k", "0", env=env)
    assert zero.code == 2 and "top_k must be between 1 and 16384" in zero.stderr
    llm = run_cli("query", QUESTION, "--method", "llm", env=env)
    assert llm.code == 2 and "needs an LLM" in llm.stderr
    unknown = run_cli("query", QUESTION, "--method", "magic", env=env)
    assert unknown.code == 2 and "invalid choice" in unknown.stderr


def test_query_on_a_missing_graph(env: dict[str, str]) -> None:
    done = run_cli("query", QUESTION, env={**env, "HOPGRAPH_GRAPH": "nothing_here"})
    assert done.code == 1 and "does not exist" in done.stderr and "ingest first" in done.stderr


def evidence_number(stdout: str, section: str, prefix: str) -> str | None:
    block = stdout.split(section, 1)[1].split("\n\n", 1)[0]
    for line in block.splitlines():
        line = line.strip()
        if line.startswith("[") and line.split("] ", 1)[1].startswith(prefix):
            return line[1:line.index("]")]
    return None


def ask(env: dict[str, str], *args: str, llm_url: str | None = None) -> str:
    if llm_url:
        env = {**env, "HOPGRAPH_LLM_MODEL": "scripted", "HOPGRAPH_LLM_BASE_URL": llm_url,
               "OPENAI_API_KEY": "test"}
    done = run_cli("ask", QUESTION, *args, env=env)
    assert done.code == 0, done.stderr
    return done.stdout


def test_ask_compare_with_a_good_llm(env: dict[str, str], server: FakeLLMServer) -> None:
    server.responder = good_llm
    out = ask(env, "--compare", llm_url=server.url)
    daniel = evidence_number(out, "Graph evidence", "Daniel Bernoulli")
    assert daniel is not None
    assert evidence_number(out, "Naive evidence", "Daniel Bernoulli") is None
    assert "via: Daniel Bernoulli was the son of Johann Bernoulli" in out
    graph_answer = out.split("Graph answer: ", 1)[1].split("\n", 1)[0]
    naive_answer = out.split("Naive answer: ", 1)[1].split("\n", 1)[0]
    assert "fluid dynamics" in graph_answer and f"[{daniel}]" in graph_answer
    assert naive_answer.startswith("I don't know")
    assert any(r.body.get("stream") for r in server.chat_requests)  # answers are streamed
    assert "LLM scripted:" in out and "requests" in out


def test_ask_with_garbage_llm_still_shows_evidence(env: dict[str, str],
                                                   server: FakeLLMServer) -> None:
    server.responder = garbage_llm
    out = ask(env, llm_url=server.url)
    assert "Graph evidence" in out and "Daniel Bernoulli" in out
    assert "LLM rerank fell back to the offline ranking" in out


def test_ask_without_llm_explains_how_to_configure(env: dict[str, str]) -> None:
    out = ask(env)
    assert "Graph evidence (default)" in out
    assert "HOPGRAPH_LLM_MODEL" in out and "Ollama" in out and "--llm MODEL" in out
    assert "Graph answer" not in out


def test_embedding_limits_are_options_checked_before_anything_opens(tmp_path: Path) -> None:
    from hopgraph.cli import build_parser
    from hopgraph.cli.common import embed_options

    args = build_parser().parse_args(["query", "q", "--embed-timeout", "120",
                                      "--embed-batch", "16", "--embed-retries", "5"])
    assert embed_options(args) == {"embedder": None, "embed_timeout": 120.0,
                                   "embed_batch": 16, "embed_retries": 5}
    env = {"HOPGRAPH_URI": str(tmp_path / "none.db")}
    done = run_cli("query", "q", "--embed-batch", "0", env=env)
    assert done.code == 2 and "--embed-batch) must be at least 1, got 0" in done.stderr
    done = run_cli("query", "q", "--embed-timeout", "-1", env=env)
    assert done.code == 2 and "HOPGRAPH_EMBED_TIMEOUT (--embed-timeout)" in done.stderr
    assert list(tmp_path.iterdir()) == []
