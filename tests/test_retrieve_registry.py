"""The method registry: one list of retrieval methods that every path reads. Adding a method
takes one module (tests/toy_method.py) and one `register` line (the `toy` fixture)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import QUESTION, run_cli
from toy_method import run_toy

import hopgraph
from hopgraph import GraphRAG
from hopgraph.errors import UsageError
from hopgraph.evaluate import Question, evaluate
from hopgraph.identity import content_key
from hopgraph.retrieve import registry
from hopgraph.retrieve.registry import Method

DOCS = Path(__file__).resolve().parents[1] / "docs" / "methods.md"


@pytest.fixture
def toy() -> Iterator[Method]:
    method = registry.register(Method("toy", run_toy, False, "BM25 alone (a test's toy)"))
    yield method
    registry.unregister("toy")


def test_a_registered_method_is_offered_everywhere(toy: Method, bernoulli: GraphRAG) -> None:
    assert hopgraph.METHODS[-1] == "toy" and "toy" in hopgraph.OFFLINE_METHODS
    # the Python API
    result = bernoulli.retrieve(QUESTION, method="toy", top_k=2)
    assert result.method == "toy" and len(result.passages) == 2
    assert all(p.text and p.doc_id for p in result.passages)  # texts fetched as for any
    assert "search_lexical" in result.timings_ms
    # the CLI
    ran = run_cli("query", QUESTION, "--method", "toy", "--json", "--uri",
                  bernoulli.uri, "--graph", bernoulli.name)
    assert ran.code == 0, ran.stderr
    assert [p["id"] for p in json.loads(ran.stdout)["graph"]] == [
        p.id for p in bernoulli.retrieve(QUESTION, method="toy").passages]
    # eval: every method that needs no LLM, the toy among them
    gold = {content_key(p.text) for p in result.passages}
    scores = evaluate(bernoulli, [Question(QUESTION, gold)],
                      list(registry.offline_names()))
    assert scores["toy"].recall[2] == 1.0
    # the table in the docs is made from the registry
    assert "| `toy` | no | BM25 alone (a test's toy) |" in registry.markdown_table()


def test_the_rest_schema_lists_registered_methods(toy: Method, bernoulli: GraphRAG) -> None:
    fastapi = pytest.importorskip("fastapi", reason="the 'serve' extra is missing: "
                                                 "pip install -e '.[dev]'")
    assert fastapi
    from fastapi.testclient import TestClient

    from hopgraph.serve.app import create_app
    from hopgraph.serve.service import GraphService

    with TestClient(create_app(GraphService(bernoulli))) as client:
        schema = client.get("/openapi.json").json()["components"]["schemas"]
        enum = next(option["enum"] for option in schema["QueryRequest"]["properties"][
            "method"]["anyOf"] if "enum" in option)
        # This server has no LLM: the methods that need one are not offered.
        assert enum == list(registry.offline_names()) and "toy" in enum
        reply = client.post("/query", json={"question": QUESTION, "method": "toy"})
        assert reply.status_code == 200 and reply.json()["method"] == "toy"
        assert client.post("/query", json={"question": QUESTION, "method": "nope"}
                           ).status_code == 422


def test_eval_and_the_cli_offer_exactly_the_registry(toy: Method) -> None:
    from hopgraph.cli import build_parser

    parser = build_parser()  # built after the toy was registered
    eval_args = ["eval", "--corpus", "c", "--openie", "o", "--questions", "q"]
    for name in registry.names():
        assert parser.parse_args(["query", "q", "--method", name]).method == name
        if name in registry.offline_names():
            assert parser.parse_args([*eval_args, "--method", name]).method == [name]
    with pytest.raises(SystemExit):  # eval runs without an LLM: `llm` is not offered
        parser.parse_args([*eval_args, "--method", "llm"])


def test_names_are_registered_once_and_unknown_names_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="registered already"):
        registry.register(Method("default", run_toy, False, "again"))
    with pytest.raises(UsageError, match="choose one of naive, naive_lexical, seed, default"):
        registry.get("nope")
    assert registry.default_for(has_llm=True) == "llm"
    assert registry.default_for(has_llm=False) == "default"


def test_the_docs_table_is_the_registry() -> None:
    text = DOCS.read_text(encoding="utf-8")
    table = text.split("<!-- methods:start -->", 1)[1].split("<!-- methods:end -->", 1)[0]
    assert table.strip() == registry.markdown_table()
