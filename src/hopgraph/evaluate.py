"""Benchmark harness: Recall@k and latency of every retrieval method on a HippoRAG-format set."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from hopgraph.errors import InputError, UsageError
from hopgraph.identity import content_key
from hopgraph.ingest.loaders import read_text
from hopgraph.records import Retrieval
from hopgraph.retrieve.query import DEFAULT_DEGREE, Query
from hopgraph.where import Where

log = logging.getLogger(__name__)

KS = (2, 5)  # Recall@k reported, as in the HippoRAG papers


class Retrieves(Protocol):
    """What is evaluated: a `GraphRAG` (what its users get, passage sources read too)."""

    def retrieve(self, query: Query) -> Retrieval: ...


@dataclass
class Question:
    """A benchmark question and the content keys (`identity.content_key`) of its gold
    (supporting) passages: retrieved passages are matched by text, whatever their document."""

    text: str
    gold: set[str]


@dataclass
class MethodScore:
    """One method's recall and latency over the question set."""

    recall: dict[int, float]
    latencies_ms: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, float]:
        """The JSON shape of one method's row."""
        out = {f"recall@{k}": round(v, 4) for k, v in sorted(self.recall.items())}
        out["latency_ms_p50"] = round(percentile(self.latencies_ms, 50), 2)
        out["latency_ms_p95"] = round(percentile(self.latencies_ms, 95), 2)
        return out


def recall_at_k(retrieved: list[str], gold: set[str], k: int) -> float:
    """Fraction of the gold passages among the first k retrieved (HippoRAG's Recall@k)."""
    if not gold:
        raise UsageError("a question without gold passages has no recall")
    return len(gold.intersection(retrieved[:k])) / len(gold)


def percentile(values: list[float], pct: float) -> float:
    """The pct-th percentile (linear interpolation between closest ranks)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    position = (len(ordered) - 1) * pct / 100.0
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def load_questions(questions_path: Path, corpus_path: Path) -> list[Question]:
    """Questions with gold passage ids, checked against the corpus (title + "\\n" + text)."""
    corpus = _read_json(corpus_path)
    try:
        corpus_ids = {content_key(f"{d['title']}\n{d['text']}") for d in corpus}
    except (KeyError, TypeError) as exc:
        raise InputError(f"expected a list of {{\"title\", \"text\"}} objects ({exc!r})",
                         where=str(corpus_path)) from None
    raw = _read_json(questions_path)
    questions: list[Question] = []
    for i, item in enumerate(raw):
        try:
            gold = {content_key(f"{p['title']}\n{p['paragraph_text']}")
                    for p in item["paragraphs"] if p.get("is_supporting")}
            text = item["question"]
        except (KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"question {i}: expected \"question\" and \"paragraphs\" with "
                             f"\"title\" and \"paragraph_text\" ({exc!r})",
                             where=str(questions_path)) from None
        missing = gold - corpus_ids
        if missing:
            raise InputError(f"question {i}: {len(missing)} gold passages are not in "
                             f"{corpus_path}", where=str(questions_path),
                             fix="use the corpus the questions were written for")
        if not gold:
            log.warning("%s: question %d has no supporting passage; skipped", questions_path, i)
            continue
        questions.append(Question(text, gold))
    if not questions:
        raise InputError('no question has a supporting paragraph ("is_supporting": true); '
                         "nothing to evaluate", where=str(questions_path))
    return questions


def _read_json(path: Path) -> Any:
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc.msg}, line {exc.lineno})", where=str(path)) from None


def evaluate(rag: Retrieves, questions: list[Question], methods: list[str],
             degree: int = DEFAULT_DEGREE, where: Where | None = None
             ) -> dict[str, MethodScore]:
    """Recall@KS and latency of each method, after one untimed warm-up question per method
    (model load and first searches are not query latency). With `where`, every question is
    asked under that filter (recall still counts every gold passage)."""
    top_k = max(KS)
    for method in methods:
        rag.retrieve(Query(questions[0].text, method, top_k, degree, where=where))

    def passages(method: str, question: str) -> list[str]:
        return [content_key(p.text) for p in rag.retrieve(
            Query(question, method, top_k, degree, where=where)).passages]

    return {method: score_method(partial(passages, method), questions) for method in methods}


def score_method(run: Callable[[str], list[str]], questions: list[Question],
                 ks: tuple[int, ...] = KS) -> MethodScore:
    """Run one method on every question, timing each call."""
    sums = dict.fromkeys(ks, 0.0)
    score = MethodScore(recall={})
    for q in questions:
        started = time.perf_counter()
        retrieved = run(q.text)
        score.latencies_ms.append((time.perf_counter() - started) * 1000)
        for k in ks:
            sums[k] += recall_at_k(retrieved, q.gold, k)
    score.recall = {k: s / len(questions) for k, s in sums.items()}
    return score


def markdown_table(scores: dict[str, MethodScore], default_method: str) -> str:
    """Methods × R@2, R@5, latency as a markdown table."""
    lines = ["| method | R@2 | R@5 | p50 ms | p95 ms |", "|---|---:|---:|---:|---:|"]
    for name, s in scores.items():
        row = s.as_dict()
        label = f"**{name}** (default)" if name == default_method else name
        lines.append(f"| {label} | {100 * row['recall@2']:.1f} | {100 * row['recall@5']:.1f} "
                     f"| {row['latency_ms_p50']:.1f} | {row['latency_ms_p95']:.1f} |")
    return "\n".join(lines)


def report_json(scores: dict[str, MethodScore], default_method: str, index_seconds: float,
                questions: int) -> dict[str, Any]:
    """The --json document."""
    return {
        "default_method": default_method,
        "methods": {name: s.as_dict() for name, s in scores.items()},
        "index_seconds": round(index_seconds, 2),
        "questions": questions,
    }
