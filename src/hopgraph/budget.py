"""Recall at a budget of words: how much of what a question needs is in the first N words of
what a method retrieved. This measures files and passages alike (chunks of any size).

The retrieved texts are taken in rank order and cut at the budget. A gold paragraph is found
when at least half of its sentences are in that text. Only what a reader would not call a
difference is normalised: case, punctuation, spacing and line breaks, and accents and
characters a PDF's Latin-1 font could not hold (`fold`). Hyphenation is not mended here:
text the product left as "manu- facturing" misses its sentence.
"""

from __future__ import annotations

import json
import re
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syntok import segmenter

from hopgraph.errors import InputError
from hopgraph.evaluate import Retrieves
from hopgraph.ingest.loaders import read_text
from hopgraph.retrieve.query import Query
from hopgraph.where import Where

BUDGETS = (200, 400, 800)
RETRIEVED = 64  # chunks asked for: enough to fill 800 words with chunks of 12 words or more
_WORDS = re.compile(r"\w+")


def fold(text: str) -> str:
    """Accents dropped and anything outside Latin-1 made a space (what a PDF with a core
    font holds of the text)."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return "".join(ch if ord(ch) < 256 else " " for ch in text)


def normalise(text: str) -> str:
    """Folded, lower-cased words joined by single spaces (punctuation and breaks gone)."""
    return " ".join(_WORDS.findall(fold(text).lower()))


def sentences(text: str) -> list[str]:
    """The normalised sentences of a paragraph (empty ones left out)."""
    # The sentence as written (each token after its own spacing): syntok splits words at an
    # inner capital ("McDonald", "rPET"), and joining its tokens with spaces would make a
    # sentence no retrieved text can hold.
    found = (normalise("".join(token.spacing + token.value for token in sentence))
             for paragraph in segmenter.analyze(text) for sentence in paragraph)
    return [sentence for sentence in found if sentence]


def budget_text(texts: list[str], budget: int) -> str:
    """The first `budget` words of the texts in rank order, normalised."""
    words: list[str] = []
    for text in texts:
        words.extend(text.split())
        if len(words) >= budget:
            break
    return normalise(" ".join(words[:budget]))


def found(text: str, paragraph: str) -> bool:
    """Whether at least half of the paragraph's sentences are in `text` (normalised)."""
    parts = sentences(paragraph)
    if not parts:
        return False
    padded = f" {text} "
    return 2 * sum(f" {part} " in padded for part in parts) >= len(parts)


def budget_recall(texts: list[str], gold: list[str], budget: int) -> float:
    """The share of the gold paragraphs found in the first `budget` words of `texts`."""
    if not gold:
        raise InputError("a question without gold paragraphs has no recall")
    text = budget_text(texts, budget)
    return sum(found(text, paragraph) for paragraph in gold) / len(gold)


@dataclass
class GoldQuestion:
    """A question and the texts of its supporting paragraphs (no titles)."""

    text: str
    gold: list[str]


def load_gold(path: Path) -> list[GoldQuestion]:
    """Questions in the MuSiQue/HotpotQA format with their supporting paragraphs' texts."""
    try:
        raw = json.loads(read_text(path))
        questions = [GoldQuestion(item["question"], [
            p["paragraph_text"] for p in item["paragraphs"] if p.get("is_supporting")])
            for item in raw]
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc.msg}, line {exc.lineno})", where=str(path)) from None
    except (KeyError, TypeError, AttributeError) as exc:
        raise InputError(f'expected questions with "question" and "paragraphs" ({exc!r})',
                         where=str(path)) from None
    kept = [q for q in questions if q.gold]
    if not kept:
        raise InputError("no question has a supporting paragraph", where=str(path))
    return kept


@dataclass
class BudgetScore:
    """One method's recall at each budget, and its latency per question."""

    recall: dict[int, float]
    latencies_ms: list[float] = field(default_factory=list)


def evaluate_budgets(rag: Retrieves, questions: list[GoldQuestion], methods: list[str],
                     budgets: tuple[int, ...] = BUDGETS, where: Where | None = None
                     ) -> dict[str, BudgetScore]:
    """Recall at each budget for each method (one untimed warm-up question per method),
    every question under the filter `where`, if any."""
    scores: dict[str, BudgetScore] = {}
    for method in methods:
        rag.retrieve(Query(questions[0].text, method, RETRIEVED, where=where))
        score = BudgetScore(dict.fromkeys(budgets, 0.0))
        for question in questions:
            started = time.perf_counter()
            result = rag.retrieve(Query(question.text, method, RETRIEVED, where=where))
            score.latencies_ms.append((time.perf_counter() - started) * 1000)
            texts = [passage.text for passage in result.passages]
            for budget in budgets:
                score.recall[budget] += budget_recall(texts, question.gold, budget)
        score.recall = {b: total / len(questions) for b, total in score.recall.items()}
        scores[method] = score
    return scores


def budget_table(scores: dict[str, BudgetScore]) -> str:
    """Methods × budgets (and median latency) as a markdown table."""
    budgets = sorted(next(iter(scores.values())).recall)
    head = " | ".join(f"{b} words" for b in budgets)
    lines = [f"| method | {head} | p50 ms |", "|---|" + "---:|" * (len(budgets) + 1)]
    for name, score in scores.items():
        cells = " | ".join(f"{100 * score.recall[b]:.1f}" for b in budgets)
        ordered = sorted(score.latencies_ms)
        lines.append(f"| {name} | {cells} | {ordered[len(ordered) // 2]:.1f} |")
    return "\n".join(lines)


def budget_json(scores: dict[str, BudgetScore]) -> dict[str, Any]:
    """The scores as plain JSON: method -> {"words@N": recall}."""
    return {name: {f"words@{b}": round(r, 4) for b, r in score.recall.items()}
            for name, score in scores.items()}
