"""The answer step: a grounded, cited answer from retrieved passages (docs/llm.md,
"Answers")."""

from __future__ import annotations

from collections.abc import Iterator

from hopgraph.llm import LLMClient
from hopgraph.prompts import fill

# Passages an answer is written from (`hopgraph ask`, `POST /ask`): fewer than a listing
# shows, since every passage is prompt text the model must read and may cite wrongly.
ANSWER_TOP_K = 3


def answer_prompt(question: str, passages: list[str]) -> str:
    """The answer prompt, passages numbered from 1 as the citations use them."""
    listing = "\n\n".join(f"[{i}] {text}" for i, text in enumerate(passages, start=1))
    return fill("answer", question=question, passages=listing or "(none)")


def stream_answer(client: LLMClient, question: str, passages: list[str]) -> Iterator[str]:
    """The answer, streamed in chunks as the model writes it."""
    yield from client.stream([{"role": "user", "content": answer_prompt(question, passages)}])
