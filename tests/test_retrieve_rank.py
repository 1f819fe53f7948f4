import pytest

from hopgraph.records import Hit
from hopgraph.retrieve.rank import LEXICAL_WEIGHT, with_lexical


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
