"""Ranking policies shared by the retrieval methods: how scores are fused and chosen."""

from __future__ import annotations

import re

from hopgraph.ingest.mentions import is_code
from hopgraph.records import Hit

POOL = 30  # passages each search contributes before fusion
ENTITY_TOP_K = 3  # graph entities per query entity (entity search, seed method)
ENTITY_MIN_SCORE = 0.8  # cosine below this is a different entity, not a spelling of it
RELATION_TOP_K = 10  # relations per question (relation search, seed method)
LEXICAL_WEIGHT = 0.05  # BM25 share, after dividing by the query's best BM25 score
# The BM25 share in every search of a question that holds an identifier: a company's question
# about "WO/2025/0413" or "CLM-25-0412" hinges on words an embedding model blurs.
LEXICAL_WEIGHT_CODES = 0.7
# The BM25 share in a bridge probe's search ("question + bridge name"): what the probe adds is a
# name, which words match whole while its embedding is mostly the question's.
LEXICAL_WEIGHT_PROBES = 0.15
_EDGES = ".,;:!?()[]{}\"'“”‘’"
# A bare number of five digits or more: no count or year, but a record's number ("work order
# 772015", "UPRN 100071215019", "ISO 45001"). Amounts carry their commas ("38,400").
_LONG_NUMBER = re.compile(r"\d{5,}")


def has_identifier(question: str) -> bool:
    """Whether the question holds an identifier: a code ("IR-2330", "KD-P-40251",
    "WO/2025/0413"; the extractor's `is_code`) or a bare number of five digits or more
    (`_LONG_NUMBER`: the work order of "work order 772015", a property's UPRN). Such a
    number is no question entity (`lexicon.link` links no number alone); BM25 matches it
    whole, as it does a code."""
    for word in question.split():
        word = word.strip(_EDGES)
        if word.endswith(("'s", "’s")):
            word = word[:-2]
        if is_code(word) or _LONG_NUMBER.fullmatch(word):
            return True
    return False


def lexical_weight(question: str) -> float:
    """The default method's BM25 share for this question: LEXICAL_WEIGHT, or
    LEXICAL_WEIGHT_CODES when it holds an identifier. An embedding model splits a code into
    pieces that many codes share, so IR-2330 and IR-2322 embed alike, and a company's name
    in the question pulls its dense search to every letterhead; BM25 matches the code
    whole. (Both read at call time.)"""
    return LEXICAL_WEIGHT_CODES if has_identifier(question) else LEXICAL_WEIGHT


def search_weights(question: str, probes: int) -> list[float]:
    """The BM25 share of each passage search of the default method: the question's own
    (`lexical_weight`), then one for each of its `probes` bridge probes: LEXICAL_WEIGHT_PROBES,
    or LEXICAL_WEIGHT_CODES for a question that holds an identifier (its bridges are a
    company's suppliers, people and records, whose passages the same blurred words fill;
    on Wikipedia's questions, which hold none, a larger probe share lost recall:
    benchmarks/RESULTS.md, "Identifiers lean on BM25")."""
    if has_identifier(question):
        return [LEXICAL_WEIGHT_CODES] * (probes + 1)
    return [LEXICAL_WEIGHT] + [LEXICAL_WEIGHT_PROBES] * probes


def with_lexical(dense: dict[str, float], bm25: list[Hit],
                 weight: float | None = None) -> dict[str, float]:
    """Dense cosine plus `weight` (default LEXICAL_WEIGHT, read at call time) × BM25 scaled
    by the query's best BM25 score, for the passages `dense` scores (the default method
    adds the BM25 hits its dense search missed: `default.with_lexical_hits`)."""
    weight = LEXICAL_WEIGHT if weight is None else weight
    top = max((h.score for h in bm25), default=0.0)
    if top <= 0 or weight == 0:
        return dict(dense)
    lexical = {h.id: h.score / top for h in bm25}
    return {pid: score + weight * lexical.get(pid, 0.0) for pid, score in dense.items()}
