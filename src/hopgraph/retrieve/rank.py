"""Ranking policies shared by the retrieval methods: how scores are fused and chosen."""

from __future__ import annotations

from hopgraph.ingest.mentions import is_code
from hopgraph.records import Hit

POOL = 30  # passages each search contributes before fusion
ENTITY_TOP_K = 3  # graph entities per query entity (entity search, seed method)
ENTITY_MIN_SCORE = 0.8  # cosine below this is a different entity, not a spelling of it
RELATION_TOP_K = 10  # relations per question (relation search, seed method)
LEXICAL_WEIGHT = 0.05  # BM25 share, after dividing by the query's best BM25 score
LEXICAL_WEIGHT_CODES = 0.1  # the BM25 share for a question that holds an identifier
# The BM25 share in a bridge probe's search ("question + bridge name"): what the probe adds is a
# name, which words match whole while its embedding is mostly the question's.
LEXICAL_WEIGHT_PROBES = 0.15
_EDGES = ".,;:!?()[]{}\"'“”‘’"


def lexical_weight(question: str) -> float:
    """The default method's BM25 share for this question: LEXICAL_WEIGHT, or
    LEXICAL_WEIGHT_CODES when it holds an identifier ("IR-2330", "KD-P-40251"; the
    extractor's `is_code`). An embedding model splits a code into pieces that many codes
    share, so IR-2330 and IR-2322 embed alike; BM25 matches the code whole. (Both read at
    call time.)"""
    for word in question.split():
        word = word.strip(_EDGES)
        if word.endswith(("'s", "’s")):
            word = word[:-2]
        if is_code(word):
            return LEXICAL_WEIGHT_CODES
    return LEXICAL_WEIGHT


def search_weights(question: str, probes: int) -> list[float]:
    """The BM25 share of each passage search of the default method: the question's own
    (`lexical_weight`), then LEXICAL_WEIGHT_PROBES for each of its `probes` bridge probes."""
    return [lexical_weight(question)] + [LEXICAL_WEIGHT_PROBES] * probes


def with_lexical(dense: dict[str, float], bm25: list[Hit],
                 weight: float | None = None) -> dict[str, float]:
    """Dense cosine plus `weight` (default LEXICAL_WEIGHT, read at call time) × BM25 scaled
    by the query's best BM25 score.

    Only passages the dense search found are scored: at this weight a passage with no dense
    evidence could never reach the top, so fetching its vector would be wasted work.
    """
    weight = LEXICAL_WEIGHT if weight is None else weight
    top = max((h.score for h in bm25), default=0.0)
    if top <= 0 or weight == 0:
        return dict(dense)
    lexical = {h.id: h.score / top for h in bm25}
    return {pid: score + weight * lexical.get(pid, 0.0) for pid, score in dense.items()}
