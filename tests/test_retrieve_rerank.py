"""The rerank stage: a /rerank endpoint (a scripted one on 127.0.0.1, in both reply shapes)
or a local cross-encoder folder orders each query's candidates, on every path: the Python
API, the CLI, the REST server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import QUESTION, run_cli
from fastapi.testclient import TestClient

from hopgraph import GraphRAG
from hopgraph.errors import EmbedderError, LLMError, UsageError
from hopgraph.records import PassageHit, Retrieval
from hopgraph.retrieve.rerank import reorder

WORD = "Daniel"  # the scripted reranker's relevance: how often this word is in a passage


class ScriptedRerank:
    """A /rerank endpoint on 127.0.0.1: scores a passage by how often WORD is in it, in the
    Cohere shape or the text-embeddings-inference shape; `hold` keeps replies back."""

    def __init__(self) -> None:
        self.shape = "cohere"
        self.requests: list[dict[str, Any]] = []
        self.leave_out = False  # reply without the last passage
        self.hold = threading.Event()
        self.hold.set()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, **body})
                outer.hold.wait()
                docs = body["documents"]
                scored = [{"index": i, "score": float(d.count(WORD))} for i, d in
                          enumerate(docs)][:len(docs) - 1 if outer.leave_out else None]
                reply: Any = scored if outer.shape == "tei" else {"results": [
                    {"index": s["index"], "relevance_score": s["score"]} for s in scored]}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/rerank"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.hold.set()
        self.server.shutdown()


@pytest.fixture
def endpoint() -> Iterator[ScriptedRerank]:
    scripted = ScriptedRerank()
    yield scripted
    scripted.close()


@pytest.fixture
def reranked(bernoulli: GraphRAG, endpoint: ScriptedRerank) -> Iterator[GraphRAG]:
    """The Bernoulli graph opened again with the scripted reranker (6 candidates)."""
    rag = GraphRAG(uri=bernoulli.uri, graph=bernoulli.name, embedder=bernoulli.embedder,
                   create=False, rerank=endpoint.url, rerank_top_n=6)
    yield rag
    rag.close()


def by_word(passages: list[PassageHit]) -> list[float]:
    return [float(p.text.count(WORD)) for p in passages]


@pytest.mark.parametrize("shape", ["cohere", "tei"])
def test_the_endpoint_orders_the_candidates(reranked: GraphRAG, bernoulli: GraphRAG,
                                            endpoint: ScriptedRerank, shape: str) -> None:
    endpoint.shape = shape
    result = reranked.retrieve(QUESTION, top_k=2)
    candidates = bernoulli.retrieve(QUESTION, top_k=6).passages
    want = sorted(by_word(candidates), reverse=True)[:2]
    assert [p.score for p in result.passages] == want == by_word(result.passages)
    assert len(result.passages) == 2 and "rerank" in result.timings_ms
    found = f"best 2 of {len(candidates)}"  # the set has fewer passages than 6
    assert any("reranked by" in note and found in note for note in result.notes)
    sent = endpoint.requests[-1]
    assert sent["path"] == "/v1/rerank" and sent["query"] == QUESTION
    assert sorted(sent["documents"]) == sorted(p.text for p in candidates)
    naive = reranked.retrieve(QUESTION, top_k=2, method="naive")  # every method
    assert [p.score for p in naive.passages] == by_word(naive.passages)


def test_batches_and_a_bad_reply(reranked: GraphRAG, endpoint: ScriptedRerank,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    reranked.reranker.batch = 4  # type: ignore[union-attr]
    reranked.retrieve(QUESTION, top_k=3)
    reranked.reranker.batch = 3  # type: ignore[union-attr]
    reranked.retrieve(QUESTION, top_k=3)
    assert [len(r["documents"]) for r in endpoint.requests] == [4, 3, 1]
    endpoint.leave_out = True
    with pytest.raises(LLMError, match=r"scored 2 of 3 passages") as caught:
        reranked.retrieve("Who taught Euler?", top_k=3)
    assert endpoint.url in str(caught.value)


def test_a_silent_endpoint_fails_naming_the_timeout(bernoulli: GraphRAG,
                                                    endpoint: ScriptedRerank,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOPGRAPH_RERANK_TIMEOUT", "0.2")
    endpoint.hold.clear()  # no reply until the test ends
    with GraphRAG(uri=bernoulli.uri, graph=bernoulli.name, embedder=bernoulli.embedder,
                  create=False, rerank=endpoint.url) as rag, pytest.raises(
                      LLMError, match="HOPGRAPH_RERANK_TIMEOUT"):
        rag.retrieve(QUESTION)


def test_settings_are_checked() -> None:
    with pytest.raises(UsageError, match="HOPGRAPH_RERANK_TOP_N"):
        GraphRAG(uri=":memory:", rerank="http://127.0.0.1:9/rerank", rerank_top_n=0)
    with pytest.raises(EmbedderError, match="no cross-encoder folder"):
        GraphRAG(uri=":memory:", rerank="./no-such-folder")


def test_reorder_keeps_ties_in_their_order() -> None:
    class Fixed:
        name = "fixed"

        def score(self, query: str, texts: list[str]) -> list[float]:
            return [1.0, 3.0, 1.0, 2.0]

    result = Retrieval("q", "default", [PassageHit(f"p{i}", f"text {i}", 0.5) for i in range(4)])
    reorder(Fixed(), result, 3)
    assert [p.id for p in result.passages] == ["p1", "p3", "p0"]
    assert [p.score for p in result.passages] == [3.0, 2.0, 1.0]


def test_the_cli_and_the_server_rerank(bernoulli: GraphRAG, reranked: GraphRAG,
                                       endpoint: ScriptedRerank) -> None:
    from hopgraph.serve.app import create_app
    from hopgraph.serve.service import GraphService

    ran = run_cli("query", QUESTION, "--uri", bernoulli.uri, "--graph", bernoulli.name,
                  "--rerank", endpoint.url, "--rerank-top-n", "6", "--top-k", "2", "--json")
    assert ran.code == 0, ran.stderr
    out = json.loads(ran.stdout)
    assert [p["score"] for p in out["graph"]] == by_word(reranked.retrieve(
        QUESTION, top_k=2).passages)
    with TestClient(create_app(GraphService(reranked))) as client:
        body = client.post("/query", json={"question": QUESTION, "top_k": 2}).json()
    assert [p["score"] for p in body["graph"]] == [p["score"] for p in out["graph"]]


@pytest.mark.slow
def test_a_local_cross_encoder_folder(bernoulli: GraphRAG, tmp_path: Path) -> None:
    """No trained cross-encoder installs from a package index here, so this one is built
    offline from all-MiniLM-L6-v2's weights with an untrained one-output head (seeded): its
    scores mean nothing, but they are the folder's, and the stage orders by them."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from hopgraph.embed.cross import CrossEncoderReranker
    from hopgraph.embed.local import model_dir

    torch.manual_seed(0)
    folder = tmp_path / "tiny-cross-encoder"
    AutoModelForSequenceClassification.from_pretrained(
        str(model_dir()), num_labels=1).save_pretrained(folder)
    AutoTokenizer.from_pretrained(str(model_dir())).save_pretrained(folder)
    cross = CrossEncoderReranker(folder)
    texts = [p.text for p in bernoulli.retrieve(QUESTION, top_k=5).passages]
    scores = cross.score(QUESTION, texts)
    assert len(scores) == len(texts) and scores == cross.score(QUESTION, texts)  # seeded
    assert cross.name.startswith("path:tiny-cross-encoder@")
    with GraphRAG(uri=bernoulli.uri, graph=bernoulli.name, embedder=bernoulli.embedder,
                  create=False, rerank=str(folder), rerank_top_n=5) as rag:
        result = rag.retrieve(QUESTION, top_k=3)
    assert [p.score for p in result.passages] == sorted(scores, reverse=True)[:3]
