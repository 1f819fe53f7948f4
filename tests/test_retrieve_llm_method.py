"""The LLM path of retrieval against a scripted OpenAI-compatible server (real HTTP)."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import BERNOULLI, QUESTION, need
from llm_server import FakeLLMServer, Reply
from scripted_llm import garbage_llm, good_llm

from hopgraph import GraphRAG
from hopgraph.llm import LLMClient, LLMSettings

DANIEL = "Daniel Bernoulli (1700"


def client(server: FakeLLMServer, tmp_path: Path, timeout: float = 5.0) -> LLMClient:
    return LLMClient(LLMSettings(model="scripted", base_url=server.url, api_key="test",
                                 cache_path=str(tmp_path / "llm.sqlite"), timeout=timeout,
                                 max_retries=1, retry_base_delay=0.01))


def with_llm(rag: GraphRAG, llm: LLMClient) -> GraphRAG:
    rag.llm = llm  # a new retriever, with the LLM
    return rag


@pytest.fixture
def rag(bernoulli: GraphRAG) -> Iterator[GraphRAG]:
    yield bernoulli
    bernoulli.llm = None


@pytest.mark.slow
def test_good_llm_follows_the_chain(rag: GraphRAG, server: FakeLLMServer,
                                    tmp_path: Path) -> None:
    server.responder = good_llm
    with client(server, tmp_path) as llm:
        result = with_llm(rag, llm).retrieve(QUESTION, top_k=2, method="llm")
    assert result.llm is not None and result.llm["fallback"] is None
    assert result.llm["entities"] == ["Euler"]
    assert "Johann Bernoulli" in str(result.llm["thought_process"])
    texts = [r.text for r in result.relations]
    assert any("student of Johann Bernoulli" in t for t in texts)
    assert any("son of Johann Bernoulli" in t for t in texts)
    assert any(p.text.startswith(DANIEL) for p in result.passages)
    assert result.llm["usage"]["requests"] == 2
    rerank = server.chat_requests[-1].body["messages"][-1]["content"]
    assert "[1] " in rerank and "useful_relationships" in rerank


def test_repeated_question_costs_nothing(rag: GraphRAG, server: FakeLLMServer,
                                         tmp_path: Path) -> None:
    server.responder = good_llm
    with client(server, tmp_path) as llm:
        with_llm(rag, llm).retrieve(QUESTION, top_k=2, method="llm")
        sent = len(server.chat_requests)
        again = rag.retrieve(QUESTION, top_k=2, method="llm")
    assert len(server.chat_requests) == sent
    assert again.llm["usage"]["cache_hits"] == 2


@pytest.mark.parametrize("reply, reason", [
    (Reply('{"thought_process": "x", "useful_relationships": ["[999] nothing"]}'),
     "no known relation (1 unknown ids)"),
    (Reply('{"thought_process": "x", "useful_relationships": []}'), "no known relation"),
    (Reply("{this is not json"), "not JSON"),
    (Reply('{"thought_process": "no list here"}'), "no \"useful_relationships\""),
    (Reply(status=500), "rerank failed"),
])
def test_rerank_failures_fall_back_to_offline(rag: GraphRAG, server: FakeLLMServer,
                                              tmp_path: Path, reply: Reply, reason: str) -> None:
    def responder(body: dict) -> Reply:
        if "named entities" in body["messages"][-1]["content"]:
            return Reply('{"named_entities": ["Euler"]}')
        return reply

    server.responder = responder
    with client(server, tmp_path) as llm:
        result = with_llm(rag, llm).retrieve(QUESTION, top_k=2, method="llm")
    assert reason in str(result.llm["fallback"])
    assert any("fell back to the offline ranking" in n for n in result.notes)
    offline = rag.retrieve(QUESTION, top_k=2, method="default")
    assert [p.id for p in result.passages] == [p.id for p in offline.passages]


@pytest.mark.slow
def test_timeout_and_garbage_entities_fall_back(rag: GraphRAG, server: FakeLLMServer,
                                                tmp_path: Path) -> None:
    server.responder = lambda body: Reply("{}", delay=1.5)
    with client(server, tmp_path, timeout=0.3) as llm:
        result = with_llm(rag, llm).retrieve(QUESTION, top_k=2, method="llm")
    assert any("entity extraction failed" in n for n in result.notes)
    assert "rerank failed" in str(result.llm["fallback"])
    assert [e["name"] for e in result.entities] == ["Euler"]  # linked offline instead
    server.responder = garbage_llm
    with client(server, tmp_path) as llm:
        result = with_llm(rag, llm).retrieve(QUESTION, top_k=2, method="llm")
    assert result.llm["fallback"] is not None
    assert any(p.text.startswith(DANIEL) for p in result.passages)


def test_llm_method_needs_an_llm(rag: GraphRAG) -> None:
    with pytest.raises(ValueError, match="needs an LLM"):
        rag.retrieve(QUESTION, method="llm")


@pytest.mark.slow
def test_the_llm_sees_only_relations_inside_the_filter(open_graph, server: FakeLLMServer,
                                                       tmp_path: Path) -> None:
    """A filtered `llm` query: the model is shown only relations with a passage the filter
    keeps, and names an entity of an excluded document in vain."""
    data = json.loads(need(BERNOULLI).read_text(encoding="utf-8"))
    rag = open_graph("llm_where")
    rag.add([{**row, "doc_id": f"p{i}"} for i, row in enumerate(data["passages"])])
    server.responder = good_llm
    with client(server, tmp_path) as llm:
        kept = with_llm(rag, llm).retrieve(QUESTION, top_k=3, method="llm",
                                           where={"doc_id": {"$nin": ["p2"]}})
        everything = rag.retrieve(QUESTION, top_k=3, method="llm")
    prompts = [r.body["messages"][-1]["content"] for r in server.chat_requests]
    reranks = [p for p in prompts if "useful_relationships" in p]
    assert len(reranks) == 2 and "Daniel" not in reranks[0] and "Daniel" in reranks[1]
    assert kept.passages and all(p.doc_id != "p2" for p in kept.passages)
    assert not any("Daniel" in r.text for r in kept.relations)
    assert any(p.doc_id == "p2" for p in everything.passages)
