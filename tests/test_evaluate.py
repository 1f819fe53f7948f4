import json
from pathlib import Path

import pytest

from hopgraph.evaluate import (
    MethodScore,
    load_questions,
    markdown_table,
    percentile,
    recall_at_k,
    report_json,
    score_method,
)
from hopgraph.identity import passage_id


def test_recall_at_k_hand_made_cases() -> None:
    gold = {"g1", "g2"}
    assert recall_at_k(["g1", "x", "g2"], gold, 2) == 0.5
    assert recall_at_k(["g1", "x", "g2"], gold, 5) == 1.0
    assert recall_at_k(["x", "y"], gold, 2) == 0.0
    assert recall_at_k(["g2", "g1"], gold, 2) == 1.0
    assert recall_at_k(["g1", "g1"], {"g1"}, 1) == 1.0
    with pytest.raises(ValueError):
        recall_at_k(["a"], set(), 1)


def test_percentile() -> None:
    assert percentile([], 50) == 0.0
    assert percentile([7.0], 95) == 7.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile(list(range(101)), 95) == 95


def test_score_method_averages_over_questions() -> None:
    from hopgraph.evaluate import Question

    questions = [Question("q1", {"a", "b"}), Question("q2", {"c"})]
    answers = {"q1": ["a", "x", "b"], "q2": ["x", "y", "z", "w", "c"]}
    score = score_method(lambda q: answers[q], questions)
    assert score.recall == {2: (0.5 + 0.0) / 2, 5: (1.0 + 1.0) / 2}
    assert len(score.latencies_ms) == 2
    doc = report_json({"naive": score}, "naive", 1.5, 2)
    assert doc["methods"]["naive"]["recall@2"] == 0.25
    assert set(doc["methods"]["naive"]) == {"recall@2", "recall@5", "latency_ms_p50",
                                            "latency_ms_p95"}
    assert "| **naive** (default) | 25.0 | 100.0 |" in markdown_table({"naive": score}, "naive")


def test_load_questions_matches_gold_to_corpus(tmp_path: Path) -> None:
    corpus = [{"title": "A", "text": "alpha"}, {"title": "B", "text": "beta"}]
    questions = [{"question": "q?", "paragraphs": [
        {"title": "A", "paragraph_text": "alpha", "is_supporting": True},
        {"title": "B", "paragraph_text": "beta", "is_supporting": False}]}]
    (tmp_path / "c.json").write_text(json.dumps(corpus))
    (tmp_path / "q.json").write_text(json.dumps(questions))
    loaded = load_questions(tmp_path / "q.json", tmp_path / "c.json")
    assert loaded[0].gold == {passage_id("A\nalpha")}
    questions[0]["paragraphs"][0]["paragraph_text"] = "not in corpus"
    (tmp_path / "q.json").write_text(json.dumps(questions))
    with pytest.raises(ValueError, match="question 0"):
        load_questions(tmp_path / "q.json", tmp_path / "c.json")
    assert MethodScore(recall={2: 1.0}).as_dict()["latency_ms_p50"] == 0.0


def test_eval_command_on_a_hand_made_hipporag_set(tmp_path: Path) -> None:
    """`hopgraph eval` end to end on the Bernoulli set written in HippoRAG's format."""
    import os
    import subprocess
    import sys

    from conftest import BERNOULLI, need

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
    out = tmp_path / "out.json"
    done = subprocess.run(
        [sys.executable, "-m", "hopgraph.cli", "eval", "--corpus", str(tmp_path / "corpus.json"),
         "--openie", str(tmp_path / "openie.json"), "--questions",
         str(tmp_path / "questions.json"), "--json", str(out), "--quiet"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, stdin=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if not k.startswith("HOPGRAPH_")})
    assert done.returncode == 0, done.stderr
    assert "| method | R@2 | R@5 | p50 ms | p95 ms |" in done.stdout
    assert "indexing:" in done.stdout
    report = json.loads(out.read_text())
    assert report["default_method"] == "default" and report["questions"] == 1
    assert set(report["methods"]) == {"naive", "naive_lexical", "seed", "default"}
    assert report["methods"]["default"]["recall@2"] == 1.0  # Euler and Daniel
    assert report["methods"]["naive"]["recall@2"] == 0.5  # Euler only
    assert report["index_seconds"] > 0
    assert not (tmp_path / "hopgraph.db").exists()  # a temporary graph, not the default one
