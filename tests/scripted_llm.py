"""A scripted "good LLM" for the Bernoulli graph: it reads hopgraph's prompts and answers them
the way a capable model would, so the LLM path can be tested end to end without a model."""

from __future__ import annotations

import json
import re
from typing import Any

from llm_server import Reply

_NUMBERED = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)


def _prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def _after(marker: str, text: str) -> str:
    return text.rsplit(marker, 1)[-1]


def good_llm(body: dict[str, Any]) -> Reply:
    """Entities, a rerank that follows Euler -> Johann -> Daniel, and a cited answer."""
    prompt = _prompt(body)
    if "named entities" in prompt:
        return Reply(json.dumps({"named_entities": ["Euler"]}))
    if "useful_relationships" in prompt:
        facts = dict(_NUMBERED.findall(_after("Facts:", prompt)))
        wanted = ("was a student of Johann Bernoulli", "was profound on Euler",
                  "Daniel Bernoulli was the son of Johann Bernoulli",
                  "Daniel Bernoulli made major contributions to fluid dynamics")
        chosen = [f"[{n}] {t}" for n, t in facts.items() if any(w in t for w in wanted)]
        # like real models, it wraps its JSON in a sentence
        return Reply("Here is my analysis:\n" + json.dumps({
            "thought_process": "Euler's teacher was Johann Bernoulli; his son is Daniel "
                               "Bernoulli, who contributed to fluid dynamics.",
            "useful_relationships": chosen}))
    if "Passages:" in prompt:
        passages = dict(_NUMBERED.findall(_after("Passages:", prompt)))
        daniel = [n for n, t in passages.items() if t.startswith("Daniel Bernoulli")]
        if daniel:
            return Reply(f"Daniel Bernoulli, the son of Euler's teacher Johann Bernoulli, made "
                         f"major contributions to fluid dynamics and probability [{daniel[0]}].")
        return Reply("I don't know: the passages do not say who the teacher's son is.")
    return Reply("unexpected prompt")


def garbage_llm(body: dict[str, Any]) -> Reply:
    """Replies that are never the JSON asked for."""
    return Reply("Sure! The answer is probably something about mathematics {not json}.")
