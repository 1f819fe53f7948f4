"""The LangChain and LlamaIndex retrievers: LangChain's own standard retriever tests
(langchain-tests), documents and nodes with the passage id, text and metadata, filters, and
local mode against a graph opened here (remote mode, through `hopgraph serve`, is in
test_integrations_remote.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import QUESTION
from langchain_core.documents import Document
from langchain_tests.integration_tests import RetrieversIntegrationTests

from hopgraph import GraphRAG, UsageError
from hopgraph.integrations import langchain, llamaindex

DOCS = {"euler": {"lang": "en", "year": 1707}, "daniel": {"lang": "de", "year": 1700},
        "johann": {"lang": "en", "year": 1667}, "jakob": {"lang": "de", "year": 1654}}


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory, local_embedder) -> Iterator[GraphRAG]:
    """The Bernoulli passages, one document each, with metadata."""
    import json

    from conftest import BERNOULLI, need

    rows = json.loads(need(BERNOULLI).read_text(encoding="utf-8"))["passages"]
    names = ["jakob", "johann", "daniel", "euler"]
    uri = str(tmp_path_factory.mktemp("integrations") / "kb.db")
    rag = GraphRAG(uri=uri, graph="kb", embedder=local_embedder)
    rag.add([{**row, "doc_id": name, "metadata": DOCS[name]}
             for row, name in zip(rows, names, strict=True)])
    yield rag
    rag.close()


class TestLangChainStandard(RetrieversIntegrationTests):
    """langchain-tests' standard suite, on a graph opened in this process."""

    rag: GraphRAG | None = None

    @pytest.fixture(autouse=True)
    def _graph(self, kb: GraphRAG) -> None:
        type(self).rag = kb

    @property
    def retriever_constructor(self) -> type[langchain.HopgraphRetriever]:
        return langchain.HopgraphRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"rag": type(self).rag}

    @property
    def retriever_query_example(self) -> str:
        return QUESTION


def test_langchain_documents_carry_the_passage(kb: GraphRAG) -> None:
    retriever = langchain.HopgraphRetriever(rag=kb, k=2)
    docs = retriever.invoke(QUESTION)
    expected = kb.retrieve(QUESTION, top_k=2)
    assert [d.id for d in docs] == [p.id for p in expected.passages]
    assert all(isinstance(d, Document) for d in docs)
    daniel = next(d for d in docs if d.metadata["doc_id"] == "daniel")
    assert daniel.page_content.startswith("Daniel Bernoulli")
    assert daniel.metadata["lang"] == "de" and daniel.metadata["year"] == 1700
    assert daniel.metadata["relations"] and daniel.metadata["via"]
    assert daniel.metadata["score"] == pytest.approx(
        next(p.score for p in expected.passages if p.id == daniel.id))
    only = retriever.invoke(QUESTION, k=4, where={"lang": "en"})
    assert {d.metadata["doc_id"] for d in only} == {"euler", "johann"}
    naive = retriever.invoke(QUESTION, method="naive")
    assert [d.id for d in naive] == [p.id for p in kb.naive(QUESTION, top_k=2).passages]
    again = asyncio.run(retriever.ainvoke(QUESTION, where={"doc_id": "daniel"}))
    assert [d.metadata["doc_id"] for d in again] == ["daniel"]
    with pytest.raises(UsageError, match="year"):
        retriever.invoke(QUESTION, where={"year": {"$regex": "17"}})
    with pytest.raises(UsageError, match="unknown option"):
        retriever.invoke(QUESTION, topk=3)


def test_langchain_local_mode_opens_the_graph_by_name(kb: GraphRAG, tmp_path: Path) -> None:
    retriever = langchain.HopgraphRetriever(uri=kb.uri, graph=kb.name, k=3)
    try:
        assert [d.id for d in retriever.invoke(QUESTION)] == [
            p.id for p in kb.retrieve(QUESTION, top_k=3).passages]
    finally:
        retriever.close()
    missing = langchain.HopgraphRetriever(uri=str(tmp_path / "none.db"), graph="kb")
    with pytest.raises(Exception, match="no Milvus Lite database"):
        missing.invoke(QUESTION)
    with pytest.raises(UsageError, match="not both"):
        langchain.HopgraphRetriever(url="http://127.0.0.1:1", uri="x.db").invoke(QUESTION)


def test_llamaindex_nodes_carry_the_passage(kb: GraphRAG) -> None:
    retriever = llamaindex.HopgraphRetriever(rag=kb, top_k=3, where={"lang": {"$in": ["en",
                                                                                       "de"]}})
    nodes = retriever.retrieve(QUESTION)
    expected = kb.retrieve(QUESTION, top_k=3)
    assert [n.node.node_id for n in nodes] == [p.id for p in expected.passages]
    assert [n.score for n in nodes] == pytest.approx([p.score for p in expected.passages])
    first = nodes[0].node
    assert first.get_content() == expected.passages[0].text
    assert first.metadata["doc_id"] == expected.passages[0].doc_id and "lang" in first.metadata
    english = llamaindex.HopgraphRetriever(rag=kb, top_k=5, method="seed",
                                           where={"lang": "en"})
    found = asyncio.run(english.aretrieve(QUESTION))
    assert found and {n.node.metadata["doc_id"] for n in found} <= {"euler", "johann"}
    with pytest.raises(UsageError, match="where"):
        llamaindex.HopgraphRetriever(rag=kb, where={"$nope": 1})


def test_adapters_say_where_each_passage_came_from(kb: GraphRAG, tmp_path: Path,
                                                   local_embedder) -> None:
    """Document and node metadata carry the source flat (`source` the file, as LangChain's
    loaders name it); a passage stored without one (the rows of `kb`) names its document."""
    from conftest import SAFETY, write_three_page_report

    old = langchain.HopgraphRetriever(rag=kb, k=1).invoke(QUESTION)[0].metadata
    assert (old["source"], old["file"], old["page"], old["headings"]) == (
        old["doc_id"], old["doc_id"], None, [])
    with GraphRAG(uri=str(tmp_path / "pdf.db"), graph="pdf", embedder=local_embedder) as rag:
        rag.add_documents([write_three_page_report(tmp_path / "report.pdf")], root=tmp_path)
        question = "How is the Kestrel Probe battery charged?"
        docs = langchain.HopgraphRetriever(rag=rag, k=3).invoke(question)
        nodes = llamaindex.HopgraphRetriever(rag=rag, top_k=3).retrieve(question)
        for metadata in [d.metadata for d in docs] + [n.node.metadata for n in nodes]:
            assert metadata["source"] == metadata["file"] == "report.pdf"
            assert metadata["type"] == "pdf" and metadata["page"] in (1, 2, 3)
            assert metadata["headings"][0] == "Field report"
        safety = next(d for d in docs if d.page_content.endswith(SAFETY)).metadata
        assert (safety["page"], safety["headings"]) == (3, ["Field report", "3. Safety"])
        assert safety["end"] - safety["start"] == len(SAFETY)


def test_the_examples_run(tmp_path: Path) -> None:
    """examples/langchain_example.py and llamaindex_example.py, as the docs say to run them:
    after `hopgraph ingest` of the demo into ./hopgraph.db."""
    import subprocess
    import sys

    from conftest import BERNOULLI, need, run_process

    examples = Path(__file__).resolve().parents[1] / "examples"
    built = run_process("ingest", str(need(BERNOULLI)), "--graph", "demo", "--quiet",
                        cwd=tmp_path)
    assert built.code == 0, built.stderr
    for name in ("langchain_example.py", "llamaindex_example.py"):
        done = subprocess.run([sys.executable, str(examples / name)], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
        assert "Daniel Bernoulli" in done.stdout and done.stdout.count("[0.") == 3, done.stdout
