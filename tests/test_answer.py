"""`hopgraph ask` end to end: a new process, real HTTP to a scripted OpenAI-compatible server."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BERNOULLI, QUESTION, need
from llm_server import FakeLLMServer
from scripted_llm import garbage_llm, good_llm

from hopgraph.answer import answer_prompt


@pytest.fixture(scope="module")
def graph_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("ask")
    env = {**os.environ, "HOPGRAPH_URI": str(tmp / "ask.db"), "HOPGRAPH_GRAPH": "ask"}
    subprocess.run([sys.executable, "-m", "hopgraph.cli", "ingest", str(need(BERNOULLI)),
                    "--quiet"], env=env, check=True, capture_output=True, timeout=300)
    return tmp


def ask(graph_db: Path, *args: str, llm_url: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPGRAPH_LLM")}
    env.update({"HOPGRAPH_URI": str(graph_db / "ask.db"), "HOPGRAPH_GRAPH": "ask",
                "HOPGRAPH_LLM_CACHE": "off"})
    if llm_url:
        env.update({"HOPGRAPH_LLM_MODEL": "scripted", "HOPGRAPH_LLM_BASE_URL": llm_url,
                    "OPENAI_API_KEY": "test"})
    done = subprocess.run([sys.executable, "-m", "hopgraph.cli", "ask", QUESTION, *args],
                          env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done


def evidence_number(stdout: str, section: str, prefix: str) -> str | None:
    block = stdout.split(section, 1)[1].split("\n\n", 1)[0]
    for line in block.splitlines():
        line = line.strip()
        if line.startswith("[") and line.split("] ", 1)[1].startswith(prefix):
            return line[1:line.index("]")]
    return None


def test_ask_compare_with_a_good_llm(graph_db: Path, server: FakeLLMServer) -> None:
    server.responder = good_llm
    out = ask(graph_db, "--compare", llm_url=server.url).stdout
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


def test_ask_with_garbage_llm_still_shows_evidence(graph_db: Path,
                                                   server: FakeLLMServer) -> None:
    server.responder = garbage_llm
    out = ask(graph_db, llm_url=server.url).stdout
    assert "Graph evidence" in out and "Daniel Bernoulli" in out
    assert "LLM rerank fell back to the offline ranking" in out


def test_ask_without_llm_explains_how_to_configure(graph_db: Path) -> None:
    out = ask(graph_db).stdout
    assert "Graph evidence (default)" in out
    assert "HOPGRAPH_LLM_MODEL" in out and "Ollama" in out and "--llm MODEL" in out
    assert "Graph answer" not in out


def test_answer_prompt_numbers_passages() -> None:
    prompt = answer_prompt("Q?", ["first passage", "second passage"])
    assert "[1] first passage" in prompt and "[2] second passage" in prompt
    assert "I don't know" in prompt and prompt.rstrip().endswith("Answer:")
