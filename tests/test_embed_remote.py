"""The OpenAI-compatible embedder, against the scripted server on 127.0.0.1.

Slow endpoints block a request until the server stops; the tests check what the client sent
(how many texts per request, how often) and what its errors say, not how long it took.
"""

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from llm_server import FakeLLMServer, Reply, embedding_of

from hopgraph import GraphRAG
from hopgraph.embed import make_embedder
from hopgraph.embed.remote import OpenAIEmbedder
from hopgraph.errors import EmbedderError, UsageError


def unit(vector: list[float]) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_vectors_are_the_endpoints_made_unit_length(server: FakeLLMServer) -> None:
    embedder = OpenAIEmbedder("fake-embed", base_url=server.url, api_key="k", batch_size=2)
    texts = ["alpha", "beta", "gamma"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, 8) and vectors.dtype == np.float32
    for row, text in zip(vectors, texts, strict=True):
        assert np.allclose(row, unit(embedding_of(text)), atol=1e-6)
    assert embedder.dim == 8
    assert len([r for r in server.requests if r.path.endswith("/embeddings")]) == 2  # 2 + 1
    assert embedder.embed([]).shape == (0, 8)
    embedder.close()


def test_failures_are_embedder_errors(server: FakeLLMServer) -> None:
    server.embedding_status = 400  # a client error: not retried
    embedder = make_embedder("openai:fake-embed", base_url=server.url)
    with pytest.raises(EmbedderError, match="openai:fake-embed") as caught:
        embedder.embed(["alpha"])
    assert caught.value.fix and "OPENAI_API_KEY" in caught.value.fix
    embedder.close()


def test_the_key_comes_from_openai_api_key_when_not_given(
        server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    embedder = make_embedder("openai:fake-embed", base_url=server.url)  # outside GraphRAG
    embedder.embed(["alpha"])
    given = make_embedder("openai:fake-embed", base_url=server.url, api_key="sk-given")
    given.embed(["beta"])
    assert [r.authorization for r in server.requests] == ["Bearer sk-from-env",
                                                          "Bearer sk-given"]
    embedder.close()
    given.close()


def test_keys_stay_out_of_settings_reprs() -> None:
    from hopgraph.config import LLMSettings, ServeSettings, Settings

    for settings in (Settings(embed_api_key="sk-secret"), LLMSettings(api_key="sk-secret"),
                     ServeSettings(api_key="sk-secret")):
        assert "sk-secret" not in repr(settings)


def test_unknown_spec_is_a_clear_error() -> None:
    assert make_embedder("local").name == "local:all-MiniLM-L6-v2"
    with pytest.raises(EmbedderError, match="unknown embedder 'word2vec'"):
        make_embedder("word2vec")


def slow_when(predicate: Callable[[list[str]], bool]) -> Callable[[list[str]], Reply]:
    """An endpoint that blocks (until the server stops) on the batches `predicate` picks."""
    return lambda texts: Reply(delay=60) if predicate(texts) else Reply()


@pytest.mark.slow
def test_a_timed_out_batch_is_halved_and_never_sent_again(server: FakeLLMServer) -> None:
    server.embedding_reply = slow_when(lambda texts: len(texts) > 2)
    embedder = OpenAIEmbedder("fake-embed", base_url=server.url, batch_size=8, timeout=1.0)
    texts = [f"text {i}" for i in range(10)]
    vectors = embedder.embed(texts)
    assert server.embedding_sizes == [8, 4, 2, 2, 2, 2, 2]
    sent = [tuple(r.body["input"]) for r in server.requests]
    assert len(set(sent)) == len(sent)  # no batch went twice
    assert sent[0] == tuple(texts[:8]) and sent[1] == tuple(texts[:4])  # halves of halves
    for row, text in zip(vectors, texts, strict=True):  # in the order of the texts
        assert np.allclose(row, unit(embedding_of(text)), atol=1e-6)
    # a later call starts at the size that worked, not at 8 to time out again
    embedder.embed(["x", "y", "z"])
    assert server.embedding_sizes[7:] == [2, 1]
    assert embedder.batch_now == 2 and embedder.requests == 9
    embedder.close()


@pytest.mark.slow
def test_a_single_text_that_times_out_says_which_setting_to_raise(server: FakeLLMServer
                                                                   ) -> None:
    server.embedding_reply = slow_when(lambda texts: "slow" in texts)
    embedder = OpenAIEmbedder("fake-embed", base_url=server.url, batch_size=4, timeout=0.5)
    with pytest.raises(EmbedderError) as caught:
        embedder.embed(["a", "b", "slow", "c"])
    assert server.embedding_sizes == [4, 2, 2, 1]  # ["a", "b"] went through; "slow" did not
    error = caught.value
    assert "1 text got no reply within 0.5 s" in error.what
    assert "halved from 4 texts down to 1" in error.what and "2 of 4 texts" in error.what
    assert error.fix is not None
    assert "raise HOPGRAPH_EMBED_TIMEOUT (--embed-timeout, now 0.5 s)" in error.fix
    assert "HOPGRAPH_EMBED_BATCH (--embed-batch, now 4)" in error.fix
    assert error.where == server.url
    embedder.close()


def test_a_504_from_a_proxy_shrinks_the_batch_like_a_timeout(server: FakeLLMServer) -> None:
    server.embedding_reply = lambda texts: Reply(status=504) if len(texts) > 1 else Reply()
    embedder = OpenAIEmbedder("fake-embed", base_url=server.url, batch_size=3)
    assert embedder.embed(["a", "b", "c"]).shape == (3, 8)
    assert server.embedding_sizes == [3, 2, 1, 1, 1]
    embedder.close()


def test_transient_failures_are_retried_with_backoff(
        server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr("hopgraph.llm.client.time.sleep", slept.append)
    failures = iter([Reply(status=503), Reply(hang_up=True),
                     Reply(status=429, headers={"Retry-After": "7"})])
    server.embedding_reply = lambda texts: next(failures, Reply())
    embedder = OpenAIEmbedder("fake-embed", base_url=server.url, batch_size=2, retries=3,
                              retry_delay=0.5)
    vectors = embedder.embed(["alpha", "beta"])
    assert np.allclose(vectors[1], unit(embedding_of("beta")), atol=1e-6)
    assert server.embedding_sizes == [2, 2, 2, 2]  # the same batch: these are not timeouts
    assert embedder.requests == 4 and len(slept) == 3
    assert 0.5 <= slept[0] <= 1.0 and 1.0 <= slept[1] <= 1.5 and 7.0 <= slept[2] <= 7.5
    embedder.close()


def test_when_retries_run_out_the_error_names_the_setting(
        server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hopgraph.llm.client.time.sleep", lambda seconds: None)
    server.embedding_reply = lambda texts: Reply(status=500)
    embedder = OpenAIEmbedder("fake-embed", base_url=server.url, retries=2)
    with pytest.raises(EmbedderError, match=r"HTTP 500 \(3 attempts\)") as caught:
        embedder.embed(["alpha"])
    assert server.embedding_sizes == [1, 1, 1]
    assert caught.value.fix and "raise HOPGRAPH_EMBED_RETRIES (now 2)" in caught.value.fix
    embedder.close()


def reply_with(data: list[dict[str, Any]]) -> Reply:
    return Reply(body=json.dumps({"object": "list", "data": data, "model": "fake-embed"})
                 .encode())


def test_vectors_follow_the_texts_whatever_order_the_endpoint_sends(server: FakeLLMServer
                                                                     ) -> None:
    texts = ["alpha", "beta", "gamma"]
    shuffled = [{"object": "embedding", "index": i, "embedding": embedding_of(texts[i])}
                for i in (2, 0, 1)]
    server.embedding_reply = lambda batch: reply_with(shuffled)
    embedder = OpenAIEmbedder("fake-embed", base_url=server.url)
    for row, text in zip(embedder.embed(texts), texts, strict=True):
        assert np.allclose(row, unit(embedding_of(text)), atol=1e-6)
    server.embedding_reply = lambda batch: reply_with(shuffled[:2])
    with pytest.raises(EmbedderError, match="sent 2 vectors for 3 texts"):
        embedder.embed(texts)
    embedder.close()


def test_limits_come_from_arguments_then_the_environment(
        server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOPGRAPH_EMBED_TIMEOUT", "7.5")
    monkeypatch.setenv("HOPGRAPH_EMBED_BATCH", "3")
    monkeypatch.setenv("HOPGRAPH_EMBED_RETRIES", "0")
    from_env = make_embedder("openai:fake-embed", base_url=server.url)
    assert isinstance(from_env, OpenAIEmbedder)
    assert (from_env.timeout, from_env.batch_size, from_env.retries) == (7.5, 3, 0)
    from_env.embed([f"t{i}" for i in range(7)])
    assert server.embedding_sizes == [3, 3, 1]
    given = make_embedder("openai:fake-embed", base_url=server.url, batch=5, retries=1)
    assert isinstance(given, OpenAIEmbedder)
    assert (given.timeout, given.batch_size, given.retries) == (7.5, 5, 1)
    monkeypatch.setenv("HOPGRAPH_EMBED_BATCH", "0")
    with pytest.raises(UsageError, match=r"HOPGRAPH_EMBED_BATCH \(--embed-batch\) must be at "
                                         r"least 1, got 0"):
        make_embedder("openai:fake-embed", base_url=server.url)
    with pytest.raises(UsageError, match="HOPGRAPH_EMBED_TIMEOUT"):
        OpenAIEmbedder("fake-embed", base_url=server.url, timeout=0)
    from_env.close()
    given.close()


def test_graphrag_builds_the_endpoint_with_its_limits(
        server: FakeLLMServer, open_graph: Callable[..., GraphRAG],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOPGRAPH_EMBED_BASE_URL", server.url)
    monkeypatch.setenv("HOPGRAPH_EMBED_TIMEOUT", "9")
    rag = open_graph(embedder="openai:fake-embed", embed_batch=2)
    assert (rag.settings.embed_timeout, rag.settings.embed_batch) == (9.0, 2)
    assert isinstance(rag.embedder, OpenAIEmbedder) and rag.embedder.batch_size == 2
    rag.add([{"passage": "Euler studied under Johann Bernoulli.",
              "triplets": [["Euler", "studied under", "Johann Bernoulli"]]}])
    assert max(server.embedding_sizes) == 2 and len(server.embedding_sizes) > 2
