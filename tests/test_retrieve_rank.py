import pytest

from hopgraph.records import Hit
from hopgraph.retrieve.rank import (
    LEXICAL_WEIGHT,
    LEXICAL_WEIGHT_CODES,
    LEXICAL_WEIGHT_PROBES,
    lexical_weight,
    search_weights,
    with_lexical,
)


def test_bm25_is_scaled_by_the_best_and_only_touches_dense_hits() -> None:
    dense = {"a": 0.5, "b": 0.4, "c": 0.3}
    bm25 = [Hit("b", 10.0, {}), Hit("c", 5.0, {}), Hit("z", 8.0, {})]
    fused = with_lexical(dense, bm25)
    assert fused.keys() == dense.keys()  # "z" had no dense evidence
    assert fused["a"] == pytest.approx(0.5)
    assert fused["b"] == pytest.approx(0.4 + LEXICAL_WEIGHT * 1.0)
    assert fused["c"] == pytest.approx(0.3 + LEXICAL_WEIGHT * 0.5)


def test_no_lexical_evidence_leaves_dense_scores() -> None:
    dense = {"a": 0.5}
    assert with_lexical(dense, []) == dense
    assert with_lexical(dense, [Hit("a", 0.0, {})]) == dense
    assert with_lexical(dense, [Hit("a", 3.0, {})], weight=0.5) == {"a": pytest.approx(1.0)}


@pytest.mark.parametrize(("question", "codes"), [
    ("Who owns the corrective action for incident IR-2330?", True),
    ("What did KD-P-40251's supplier change?", True),
    ("Which quotation (Q-7781) was sent?", True),
    ("Who was the teacher of Euler?", False),
    ("What happened in 2023-24 at the plant?", False),  # a span of years, not a code
    ("Which band released Marvel 2099?", False),  # a year, or a count
    ("On which estate is the home in work order 772015?", True),  # a record's number
    ("What is the service charge at UPRN 100071215019?", True),
    ("Did the plant reach ISO 45001, and spend £38,400 in 12 weeks?", True),
    ("What did the plant spend, £38,400 or 45,000?", False),  # amounts with their commas
])
def test_a_question_with_an_identifier_leans_more_on_bm25(question: str, codes: bool) -> None:
    assert lexical_weight(question) == (LEXICAL_WEIGHT_CODES if codes else LEXICAL_WEIGHT)
    assert LEXICAL_WEIGHT_CODES > LEXICAL_WEIGHT


def test_a_bridge_probe_leans_more_on_bm25_than_the_question() -> None:
    # The probe adds a name to the question; words match the name whole.
    assert search_weights("Who was the teacher of Euler?", 2) == [
        LEXICAL_WEIGHT, LEXICAL_WEIGHT_PROBES, LEXICAL_WEIGHT_PROBES]
    assert LEXICAL_WEIGHT_PROBES > LEXICAL_WEIGHT


def test_every_search_of_a_question_with_an_identifier_leans_on_bm25() -> None:
    assert search_weights("Who owns IR-2330?", 2) == [LEXICAL_WEIGHT_CODES] * 3
    assert search_weights("Who owns IR-2330?", 0) == [LEXICAL_WEIGHT_CODES]
    assert LEXICAL_WEIGHT_CODES > LEXICAL_WEIGHT_PROBES
