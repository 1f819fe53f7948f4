"""LLM steps of retrieval: the question's entities, and the rerank of candidate relations.

Each step returns its result or raises `Fallback` with the reason; the caller then uses the
offline path and says so in the result. Nothing here talks HTTP: `hopgraph.llm` does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hopgraph.llm import LLMClient, LLMError, parse_json_reply
from hopgraph.prompts import fill

RERANK_LIMIT = 5  # relations the model is asked to choose
CANDIDATE_LIMIT = 40  # relations shown to the model (prompt size stays bounded)
_LEADING_ID = re.compile(r"^\s*\[?\s*(\d+)\s*\]?")


class Fallback(Exception):
    """The LLM step gave nothing usable; the message says why."""


@dataclass
class Choice:
    """The relations the model chose (indices into the candidates shown) and its reasoning."""

    chosen: list[int]
    thought: str


def _ask_json(client: LLMClient, prompt: str, what: str) -> dict[str, Any]:
    try:
        reply = client.complete([{"role": "user", "content": prompt}], json_mode=True)
    except LLMError as exc:
        raise Fallback(f"{what} failed: {exc}") from exc
    parsed = parse_json_reply(reply.text)
    if parsed is None:
        raise Fallback(f"{what}: the reply is not JSON ({reply.text[:80]!r})")
    return parsed


def query_entities(client: LLMClient, question: str) -> list[str]:
    """Named entities of the question, by the model: {"named_entities": [...]}."""
    parsed = _ask_json(client, fill("ner", question=question), "entity extraction")
    names = parsed.get("named_entities")
    if not isinstance(names, list):
        raise Fallback('entity extraction: no "named_entities" list in the reply')
    cleaned = [n.strip() for n in names if isinstance(n, str) and n.strip()]
    if not cleaned:
        raise Fallback("entity extraction: the model named no entity")
    return cleaned


def choose_relations(client: LLMClient, question: str, facts: list[str],
                     limit: int = RERANK_LIMIT) -> Choice:
    """The model's pick of useful facts, in order; ids are 1-based as shown in the prompt."""
    if not facts:
        raise Fallback("rerank: no candidate relations")
    listing = "\n".join(f"[{i}] {text}" for i, text in enumerate(facts, start=1))
    parsed = _ask_json(client, fill("rerank", question=question, facts=listing,
                                    limit=str(limit)), "rerank")
    picked = parsed.get("useful_relationships")
    if not isinstance(picked, list):
        raise Fallback('rerank: no "useful_relationships" list in the reply')
    chosen: list[int] = []
    unknown = 0
    for item in picked:
        found = _LEADING_ID.match(str(item))
        number = int(found[1]) if found else 0
        if 1 <= number <= len(facts):
            if number - 1 not in chosen:
                chosen.append(number - 1)
        else:
            unknown += 1
    if not chosen:
        detail = f" ({unknown} unknown ids)" if unknown else ""
        raise Fallback(f"rerank: the model chose no known relation{detail}")
    thought = parsed.get("thought_process")
    return Choice(chosen[:limit], thought if isinstance(thought, str) else "")
