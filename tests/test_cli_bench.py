"""`hopgraph eval` end to end on the Bernoulli set written in HippoRAG's format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BERNOULLI, need, run_cli, run_process
from llm_server import FakeLLMServer


@pytest.fixture
def hipporag_set(tmp_path: Path) -> list[str]:
    """corpus.json, openie.json and questions.json for the one Bernoulli question."""
    data = json.loads(need(BERNOULLI).read_text(encoding="utf-8"))
    titles = ["Jakob", "Johann", "Daniel", "Euler"]
    corpus = [{"title": t, "text": p["passage"]} for t, p in zip(titles, data["passages"],
                                                                  strict=True)]
    openie = {"docs": [{**c, "extracted_triples": p["triplets"]}
                       for c, p in zip(corpus, data["passages"], strict=True)]}
    query = data["queries"][0]
    questions = [{"question": query["question"], "paragraphs": [
        {"title": c["title"], "paragraph_text": c["text"],
         "is_supporting": i in query["supporting_passages"]} for i, c in enumerate(corpus)]}]
    for name, doc in (("corpus", corpus), ("openie", openie), ("questions", questions)):
        (tmp_path / f"{name}.json").write_text(json.dumps(doc), encoding="utf-8")
    return ["--corpus", str(tmp_path / "corpus.json"), "--openie", str(tmp_path / "openie.json"),
            "--questions", str(tmp_path / "questions.json"), "--quiet"]


def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for key in [k for k in os.environ if k.startswith("HOPGRAPH_")]:
        monkeypatch.delenv(key)


def test_eval_reports_recall_of_every_method(hipporag_set: list[str], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    clean_env(monkeypatch)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out.json"
    done = run_cli("eval", *hipporag_set, "--json", str(out))
    assert done.code == 0, done.stderr
    assert "| method | R@2 | R@5 | p50 ms | p95 ms |" in done.stdout
    assert "indexing:" in done.stdout
    report = json.loads(out.read_text())
    assert report["default_method"] == "default" and report["questions"] == 1
    assert set(report["methods"]) == {"naive", "naive_lexical", "seed", "default"}
    assert report["methods"]["default"]["recall@2"] == 1.0  # Euler and Daniel
    assert report["methods"]["naive"]["recall@2"] == 0.5  # Euler only
    assert report["index_seconds"] > 0
    assert not (tmp_path / "hopgraph.db").exists()  # a temporary graph, not the default one


def test_eval_from_raw_text_with_the_offline_extractor(hipporag_set: list[str], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import fields

    from hopgraph.cli.bench import RULES
    from hopgraph.ingest.offline_extractor import Rules

    # every rule that turns on and off; `names` says where names come from
    assert set(RULES) == {f.name for f in fields(Rules)} - {"names"}
    clean_env(monkeypatch)
    monkeypatch.chdir(tmp_path)
    raw = [arg for arg in hipporag_set if not arg.endswith("openie.json") and arg != "--openie"]
    out = tmp_path / "raw.json"
    done = run_cli("eval", *raw, "--extract", "offline", "--without", "pairs", "--with", "surnames",
                   "--method", "naive", "--method", "default", "--json", str(out))
    assert done.code == 0, done.stderr
    assert "offline extractor: 4 passages" in done.stderr
    report = json.loads(out.read_text())
    assert set(report["methods"]) == {"naive", "default"}
    both = run_cli("eval", *hipporag_set, "--extract", "offline")
    assert both.code == 2  # --openie or --extract, not both


def test_eval_in_a_new_process_with_a_remote_embedder(hipporag_set: list[str], tmp_path: Path,
                                                      server: FakeLLMServer) -> None:
    """The process smoke test; embeddings come from the scripted server, so no model loads."""
    done = run_process("eval", *hipporag_set, "--method", "naive", "--method", "default",
                       "--embedder", "openai:fake-embed", "--embed-batch", "3", cwd=tmp_path,
                       env={"HOPGRAPH_EMBED_BASE_URL": server.url, "OPENAI_API_KEY": "test"})
    assert done.code == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows[1:]] == ["| naive", "| **default** (default)"]
    assert 3 in server.embedding_sizes and max(server.embedding_sizes) == 3  # --embed-batch
