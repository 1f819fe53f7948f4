import json
from pathlib import Path

import pytest

from hopgraph.errors import InputError
from hopgraph.evaluate import (
    MethodScore,
    load_questions,
    markdown_table,
    percentile,
    recall_at_k,
    report_json,
    score_method,
)
from hopgraph.identity import content_key


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
    assert loaded[0].gold == {content_key("A\nalpha")}
    questions[0]["paragraphs"][0]["paragraph_text"] = "not in corpus"
    (tmp_path / "q.json").write_text(json.dumps(questions))
    with pytest.raises(InputError, match="question 0"):
        load_questions(tmp_path / "q.json", tmp_path / "c.json")
    assert MethodScore(recall={2: 1.0}).as_dict()["latency_ms_p50"] == 0.0
