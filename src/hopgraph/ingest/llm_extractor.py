"""LLM triplet extraction: each chunk's triplets from a chat model, as JSON.

estimate (--dry-run, no LLM call) → extract_records. The LLM client caches every reply, so a
rerun after an interruption sends only the unanswered chunks. Triplets are checked by the same
validation as file rows (`hopgraph.ingest.triplets`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hopgraph import prompts
from hopgraph.embed.local import count_tokens
from hopgraph.errors import LLMError, UsageError
from hopgraph.ingest.documents import Chunk
from hopgraph.ingest.triplets import read_triplets
from hopgraph.llm import LLMClient, parse_json_reply
from hopgraph.records import LoadReport, PassageRecord

log = logging.getLogger(__name__)

PASSAGE_MARKER = "<<PASSAGE>>"  # the marker style of every template in hopgraph/prompts


@dataclass(frozen=True)
class Estimate:
    """What extraction would send, counted with the local tokenizer (an approximation)."""

    chunks: int
    prompt_tokens: int  # template + chunk, summed over all chunks
    chunk_tokens: int  # the chunk texts alone
    template_tokens: int  # the template without a passage, sent once per chunk
    max_prompt_tokens: int  # the largest single prompt


@dataclass
class ExtractReport(LoadReport):
    """The records extracted from chunks; a chunk with no usable reply is a skipped row."""

    chunks: int = 0
    cached: int = 0  # chunks answered from the LLM cache, without a request
    triplets: int = 0

    @property
    def chunks_failed(self) -> int:
        """Chunks the LLM gave nothing usable for (counted as skipped rows)."""
        return self.rows_skipped


def load_prompt(path: str | Path | None = None) -> str:
    """The extraction prompt template (ours, or a file); the passage goes at <<PASSAGE>>."""
    return prompts.template("extract") if path is None else Path(path).read_text(encoding="utf-8")


def _template(template: str | None) -> str:
    template = load_prompt() if template is None else template
    if template.count(PASSAGE_MARKER) != 1:
        raise UsageError(f"the prompt template must contain {PASSAGE_MARKER} exactly once")
    return template


def build_prompt(template: str, text: str) -> str:
    """The template with the passage in place of its marker (no str.format: JSON has braces)."""
    return template.replace(PASSAGE_MARKER, text)


def estimate(chunks: list[Chunk], prompt_template: str | None = None) -> Estimate:
    """Tokens extraction would send (template + chunk per call), without calling the LLM."""
    template = _template(prompt_template)
    sizes = [count_tokens(build_prompt(template, chunk.passage)) for chunk in chunks]
    return Estimate(chunks=len(chunks), prompt_tokens=sum(sizes),
                    chunk_tokens=sum(chunk.tokens for chunk in chunks),
                    template_tokens=count_tokens(build_prompt(template, "")),
                    max_prompt_tokens=max(sizes, default=0))


def extract_records(client: LLMClient, chunks: list[Chunk],
                    progress: Callable[[int], None] | None = None,
                    prompt_template: str | None = None, batch_size: int | None = None
                    ) -> ExtractReport:
    """Ask the LLM for each chunk's triplets; `progress(n)` is called as n chunks finish."""
    template = _template(prompt_template)
    size = max(1, batch_size or client.settings.concurrency)
    report = ExtractReport(path="extraction", chunks=len(chunks))
    for start in range(0, len(chunks), size):
        batch = chunks[start:start + size]
        try:
            requests = [[{"role": "user", "content": build_prompt(template, c.passage)}]
                        for c in batch]
            replies = client.complete_many(requests, json_mode=True)
        except LLMError as exc:
            # Replies that did arrive in this batch are cached: a rerun gets them for free.
            log.warning("chunks %s to %s failed: %s", batch[0].id, batch[-1].id, exc)
            for chunk in batch:
                report.skip_row(chunk.id, f"LLM request failed: {exc}")
        else:
            for chunk, reply in zip(batch, replies, strict=True):
                report.cached += reply.cached
                _read_reply(chunk, reply.text, report)
        if progress is not None:
            progress(len(batch))
    log.info("extracted %d triplets from %d of %d chunks (%d cached, %d failed, "
             "%d triplets skipped)", report.triplets, len(report.records), report.chunks,
             report.cached, report.chunks_failed, report.triplets_skipped)
    return report


def _read_reply(chunk: Chunk, text: str, report: ExtractReport) -> None:
    data = parse_json_reply(text)
    if data is None:
        snippet = " ".join(text.split())[:80]
        report.skip_row(chunk.id, f"reply is not JSON: {snippet!r}")
        return
    items = data.get("triplets")
    if not isinstance(items, list):
        report.skip_row(chunk.id, f'reply has no "triplets" list (keys: {sorted(data)})')
        return
    triplets = read_triplets(items, chunk.id, report)
    report.triplets += len(triplets)
    report.records.append(PassageRecord(
        text=chunk.passage, triplets=triplets, doc_id=chunk.doc,
        metadata=chunk.passage_metadata, source=chunk.id,
    ))
