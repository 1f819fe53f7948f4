"""The LLM client, over real HTTP through the openai SDK, against a scripted local server."""

from __future__ import annotations

import threading
from typing import Any

import openai
import pytest
from llm_server import FakeLLMServer, Reply, echo, embedding_of

from hopgraph.llm import LLMClient, LLMError, LLMSettings, parse_json_reply


@pytest.fixture
def make_client(llm_client_factory: Any) -> Any:
    """Clients against the scripted `server`; see conftest.llm_client_factory."""
    return llm_client_factory


def ask(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}]


def test_complete_returns_reply_and_counts_usage(server: FakeLLMServer, make_client: Any) -> None:
    client = make_client()
    reply = client.complete(ask("who taught Euler"))
    assert reply.text == "echo: who taught Euler"
    assert not reply.cached
    assert (reply.prompt_tokens, reply.completion_tokens) == (5, 4)
    assert client.usage.as_dict() == {
        "prompt_tokens": 5, "completion_tokens": 4, "requests": 1, "cache_hits": 0}
    sent = server.chat_requests[0].body
    assert sent["model"] == "fake-model" and sent["temperature"] == 0
    assert sent["messages"] == ask("who taught Euler")
    assert "response_format" not in sent


def test_json_mode_asks_for_a_json_object(server: FakeLLMServer, make_client: Any) -> None:
    server.script(Reply(content='{"answer": "Bernoulli"}'))
    reply = make_client().complete(ask("json please"), json_mode=True)
    assert parse_json_reply(reply.text) == {"answer": "Bernoulli"}
    assert server.chat_requests[0].body["response_format"] == {"type": "json_object"}


def test_repeat_is_served_from_cache_even_by_a_new_client(
    server: FakeLLMServer, make_client: Any
) -> None:
    first = make_client()
    assert first.complete(ask("q")).text == "echo: q"
    again = first.complete(ask("q"))
    assert again.cached and again.text == "echo: q" and again.prompt_tokens == 0
    assert len(server.chat_requests) == 1
    assert first.usage.as_dict()["cache_hits"] == 1
    assert first.usage.as_dict()["requests"] == 1
    first.close()

    second = make_client()
    assert second.complete(ask("q")).cached
    assert len(server.chat_requests) == 1
    # json_mode is part of the key: a different request, so a new HTTP call.
    assert not second.complete(ask("q"), json_mode=True).cached
    assert len(server.chat_requests) == 2


def test_cache_can_be_disabled(server: FakeLLMServer, make_client: Any) -> None:
    client = make_client(cache_path=None)
    client.complete(ask("q"))
    assert not client.complete(ask("q")).cached
    assert len(server.chat_requests) == 2


def test_429_then_success_is_retried(server: FakeLLMServer, make_client: Any) -> None:
    server.script(Reply(status=429), Reply(content="ok"))
    client = make_client()
    assert client.complete(ask("q")).text == "ok"
    assert len(server.chat_requests) == 2
    assert client.usage.as_dict()["requests"] == 2


def test_backoff_grows_and_honours_retry_after(
    server: FakeLLMServer, make_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    monkeypatch.setattr("hopgraph.llm.client.time.sleep", slept.append)
    server.script(Reply(status=502), Reply(status=503),
                  Reply(status=429, headers={"Retry-After": "7"}), Reply(content="ok"))
    client = make_client(max_retries=3, retry_base_delay=0.5)
    assert client.complete(ask("q")).text == "ok"
    assert len(slept) == 3
    assert 0.5 <= slept[0] <= 1.0 and 1.0 <= slept[1] <= 1.5  # base * 2**n, plus jitter
    assert 7.0 <= slept[2] <= 7.5


def test_persistent_500_raises_after_all_retries(server: FakeLLMServer, make_client: Any) -> None:
    server.responder = lambda body: Reply(status=500)
    client = make_client(max_retries=3)
    with pytest.raises(LLMError, match=r"fake-model.*127\.0\.0\.1.*HTTP 500") as caught:
        client.complete(ask("q"))
    assert isinstance(caught.value.__cause__, openai.InternalServerError)
    assert len(server.chat_requests) == 4
    assert client.usage.as_dict()["requests"] == 4


@pytest.mark.slow
def test_timeout_is_retried_then_raises(server: FakeLLMServer, make_client: Any) -> None:
    server.responder = lambda body: Reply(delay=1.5)
    client = make_client(timeout=0.5, max_retries=1)
    with pytest.raises(LLMError, match="timed out"):
        client.complete(ask("slow"))
    assert len(server.chat_requests) == 2


def test_bad_request_raises_at_once(server: FakeLLMServer, make_client: Any) -> None:
    server.script(Reply(status=400), Reply(content="never sent"))
    with pytest.raises(LLMError, match="BadRequestError"):
        make_client().complete(ask("q"))
    assert len(server.chat_requests) == 1


def test_malformed_body_raises_without_retry(server: FakeLLMServer, make_client: Any) -> None:
    server.script(Reply(body=b'{"choices": [ oops'), Reply(content="never sent"))
    with pytest.raises(LLMError, match="fake-model"):
        make_client().complete(ask("q"))
    assert len(server.chat_requests) == 1


def test_unconfigured_client_is_refused() -> None:
    assert not LLMSettings().configured
    with pytest.raises(LLMError, match="HOPGRAPH_LLM_MODEL"):
        LLMClient(LLMSettings())


def test_settings_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOPGRAPH_LLM_MODEL", "qwen2.5:7b")
    monkeypatch.setenv("HOPGRAPH_LLM_BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("HOPGRAPH_LLM_TIMEOUT", "12.5")
    monkeypatch.setenv("HOPGRAPH_LLM_CACHE", "off")
    settings = LLMSettings.from_env(concurrency=8, base_url=None)
    assert settings.configured and settings.model == "qwen2.5:7b"
    assert settings.base_url == "http://127.0.0.1:11434/v1"  # None overrides are ignored
    assert settings.api_key == "sk-test" and settings.timeout == 12.5
    assert settings.cache_path is None and settings.concurrency == 8
    assert settings.max_retries == 4 and settings.temperature == 0
    monkeypatch.delenv("HOPGRAPH_LLM_CACHE")
    assert LLMSettings.from_env().cache_path == ".hopgraph-cache/llm.sqlite"


def test_stream_yields_chunks_and_caches_the_whole_text(
    server: FakeLLMServer, make_client: Any
) -> None:
    server.script(Reply(content="Johann taught Euler", chunks=["Johann", " taught", " Euler"]))
    client = make_client()
    chunks = list(client.stream(ask("who")))
    assert chunks == ["Johann", " taught", " Euler"]
    body = server.chat_requests[0].body
    assert body["stream"] is True
    assert client.usage.as_dict()["completion_tokens"] == 3
    # Replayed from the cache as one chunk; a plain completion shares the entry.
    assert list(client.stream(ask("who"))) == ["Johann taught Euler"]
    assert client.complete(ask("who")).text == "Johann taught Euler"
    assert len(server.chat_requests) == 1


def test_stream_retries_before_the_first_chunk(server: FakeLLMServer, make_client: Any) -> None:
    server.script(Reply(status=503))
    assert "".join(make_client().stream(ask("a b c"))) == echo({"messages": ask("a b c")})
    assert len(server.chat_requests) == 2


def test_complete_many_keeps_order_and_bounds_concurrency(
    server: FakeLLMServer, make_client: Any
) -> None:
    # The first three requests meet at a barrier, so the server sees three at once; later
    # requests finish faster than earlier ones, so completion order differs from input order.
    barrier = threading.Barrier(3, timeout=5)

    def respond(body: dict[str, Any]) -> Reply:
        index = int(body["messages"][-1]["content"])
        if index < 3:
            barrier.wait()
        return Reply(delay=0.05 * (index % 3))

    server.responder = respond
    client = make_client(concurrency=3)
    replies = client.complete_many([ask(str(i)) for i in range(9)])
    assert [r.text for r in replies] == [f"echo: {i}" for i in range(9)]
    assert server.max_in_flight == 3
    assert len(server.chat_requests) == 9
    assert client.complete_many([]) == []


def test_server_serves_embeddings(server: FakeLLMServer) -> None:
    sdk = openai.OpenAI(base_url=server.url, api_key="test-key", max_retries=0)
    reply = sdk.embeddings.create(model="fake-embed", input=["alpha", "beta"])
    for item, text in zip(reply.data, ["alpha", "beta"], strict=True):
        assert item.embedding == pytest.approx(embedding_of(text), abs=1e-6)
    sdk.close()


@pytest.mark.parametrize(("text", "expected"), [
    ('{"score": 3}', {"score": 3}),
    ('```json\n{"entities": ["Euler", "Bernoulli"]}\n```', {"entities": ["Euler", "Bernoulli"]}),
    ('Sure! Here it is: {"a": {"b": [1, {"c": "}"}]}} Hope that helps {"x": 1}',
     {"a": {"b": [1, {"c": "}"}]}}),
    ('Set {x} first, then {"ok": true}.', {"ok": True}),
    ("no json here", None),
    ('{"broken": ', None),
    ("", None),
])
def test_parse_json_reply(text: str, expected: dict[str, Any] | None) -> None:
    assert parse_json_reply(text) == expected
