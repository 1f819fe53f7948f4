"""The OpenAI-compatible embedder, against the scripted server on 127.0.0.1."""

import numpy as np
import pytest
from llm_server import FakeLLMServer, embedding_of

from hopgraph.embed import make_embedder
from hopgraph.embed.remote import OpenAIEmbedder
from hopgraph.errors import EmbedderError


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
