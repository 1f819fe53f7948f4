"""The answer step: a grounded, cited answer from retrieved passages (docs/llm.md,
"Answers")."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from hopgraph.llm import LLMClient
from hopgraph.prompts import fill
from hopgraph.records import PassageHit

# Passages an answer is written from (`hopgraph ask`, `POST /ask`): fewer than a listing
# shows, since every passage is prompt text the model must read and may cite wrongly.
ANSWER_TOP_K = 3


def answer_prompt(question: str, passages: Sequence[PassageHit | str]) -> str:
    """The answer prompt, passages numbered from 1 as the citations use them, each with a
    last line saying where it came from (file, page, headings) when it is a `PassageHit`."""
    listing = "\n\n".join(f"[{i}] {_placed(p)}" for i, p in enumerate(passages, start=1))
    return fill("answer", question=question, passages=listing or "(none)")


def _placed(passage: PassageHit | str) -> str:
    if isinstance(passage, str):
        return passage
    line = passage.source_line
    return f"{passage.text}\nSource: {line}" if line else passage.text


def stream_answer(client: LLMClient, question: str, passages: Sequence[PassageHit | str]
                  ) -> Iterator[str]:
    """The answer, streamed in chunks as the model writes it."""
    yield from client.stream([{"role": "user", "content": answer_prompt(question, passages)}])
