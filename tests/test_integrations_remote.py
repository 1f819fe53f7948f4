"""The LangChain and LlamaIndex retrievers in remote mode, through a real `hopgraph serve`
with an API key: the same passages, scores and metadata as local mode on the same graph
(the server runs first; the graph is opened here once it has stopped: a Lite file is one
process's)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import BERNOULLI, QUESTION, need, own_environment, run_process, serving

from hopgraph import UsageError
from hopgraph.client import Unauthorized
from hopgraph.integrations import langchain, llamaindex

KEY = "integrations-remote-key"
ASKED: list[tuple[str, dict[str, Any]]] = [
    (QUESTION, {"k": 3}),
    (QUESTION, {"k": 4, "where": {"lang": "en"}}),
    ("Who studied probability?", {"k": 2, "method": "naive"}),
    ("Who was Johann's brother?", {"k": 3, "method": "seed", "where": {"year": {"$lt": 1700}}}),
]


def _view(docs: list[Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(d.id, d.page_content, {k: v for k, v in d.metadata.items() if k != "score"})
            for d in docs]


def test_remote_and_local_modes_agree(tmp_path: Path) -> None:
    rows = json.loads(need(BERNOULLI).read_text(encoding="utf-8"))["passages"]
    meta = [("jakob", 1654, "de"), ("johann", 1667, "en"), ("daniel", 1700, "de"),
            ("euler", 1707, "en")]
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps({**row, "doc_id": doc, "metadata": {
        "year": year, "lang": lang}}) + "\n" for row, (doc, year, lang) in zip(
            rows, meta, strict=True)), encoding="utf-8")
    uri = str(tmp_path / "kb.db")
    built = run_process("ingest", str(source), "--uri", uri, "--graph", "kb", "--quiet")
    assert built.code == 0, built.stderr
    with serving(uri, "--graph", "kb", env=own_environment(HOPGRAPH_API_KEY=KEY)) as url:
        remote = langchain.HopgraphRetriever(url=url, api_key=KEY, graph="kb")
        got = [remote.invoke(q, **options) for q, options in ASKED]
        got_async = asyncio.run(remote.ainvoke(QUESTION, k=3))
        nodes = llamaindex.HopgraphRetriever(url=url, api_key=KEY, top_k=3).retrieve(QUESTION)
        with pytest.raises(Unauthorized, match="API key"):
            langchain.HopgraphRetriever(url=url, api_key="wrong").invoke(QUESTION)
        with pytest.raises(UsageError, match="where"):
            remote.invoke(QUESTION, where={"$bad": 1})
        remote.close()
        example = subprocess.run(  # examples/client_example.py, as its docstring says
            [sys.executable, str(Path(__file__).resolve().parents[1] / "examples" /
                                 "client_example.py"), url, KEY],
            capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert example.returncode == 0, example.stderr
        assert "Daniel Bernoulli" in example.stdout and "async:" in example.stdout
    local = langchain.HopgraphRetriever(uri=uri, graph="kb")
    try:
        expected = [local.invoke(q, **options) for q, options in ASKED]
    finally:
        local.close()
    for mine, theirs in zip(got, expected, strict=True):
        assert _view(mine) == _view(theirs)
        assert [d.metadata["score"] for d in mine] == pytest.approx(
            [d.metadata["score"] for d in theirs], abs=1e-4)
    assert got[1] and {d.metadata["lang"] for d in got[1]} == {"en"}
    assert {d.metadata["doc_id"] for d in got[0]} >= {"euler", "daniel"}
    assert _view(got_async) == _view(expected[0])
    assert [n.node.node_id for n in nodes] == [d.id for d in expected[0]]
    assert nodes[0].node.metadata["year"] == expected[0][0].metadata["year"]
