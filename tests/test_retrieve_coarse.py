"""Exact search through 8-bit codes (retrieve/coarse.py): the rows and scores of the exact
pass, proven per query, and the exact pass itself where the codes cannot prove it."""

from __future__ import annotations

import numpy as np
import pytest

from hopgraph.records import PassageRecord, Triplet
from hopgraph.retrieve import coarse, mirror


def clustered(rows: int, dim: int = 96, seed: int = 0) -> np.ndarray:
    """Unit vectors around 100 centres, as embeddings cluster by topic."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((100, dim))
    points = centres[rng.integers(0, 100, rows)] + 0.6 * rng.standard_normal((rows, dim))
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


def queries(vectors: np.ndarray, count: int, seed: int = 1) -> np.ndarray:
    """Rows moved a little (their neighbourhoods are dense) and random directions."""
    rng = np.random.default_rng(seed)
    near = vectors[rng.integers(0, len(vectors), count // 2)] + 0.1 * rng.standard_normal(
        (count // 2, vectors.shape[1]))
    far = rng.standard_normal((count - count // 2, vectors.shape[1]))
    out = np.vstack([near, far])
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def matrix(vectors: np.ndarray, monkeypatch) -> mirror._Matrix:
    monkeypatch.setattr(coarse, "MIN_ROWS", 0)
    found = mirror._Matrix([f"r{i}" for i in range(len(vectors))], vectors)
    assert found.coarse is not None
    found.coarse.coded()  # made now, not in the background
    return found


def assert_exact(got: list[list[tuple[int, float]]], vectors: np.ndarray, qvecs: np.ndarray,
                 limit: int) -> None:
    """Each query's rows are a true top-`limit` with their cosines, best first. Checked
    against float64 scores, to float32 rounding: the exact pass itself orders rows whose
    scores differ in the last bits differently with one query or several (BLAS)."""
    truth = qvecs.astype(np.float64) @ vectors.astype(np.float64).T
    for rows, best in zip(got, truth, strict=True):
        ids = [r for r, _ in rows]
        scores = np.array([s for _, s in rows])
        assert len(ids) == len(set(ids)) == limit
        assert np.allclose(scores, best[ids], rtol=0, atol=1e-6)
        assert np.all(np.diff(scores) <= 1e-6)
        others = np.delete(best, ids)
        assert scores.min() >= others.max() - 1e-6


@pytest.mark.parametrize("limit", [1, 10, 30])
def test_top_through_the_codes_is_the_exact_pass(monkeypatch, limit: int) -> None:
    vectors = clustered(6000)
    found = matrix(vectors, monkeypatch)
    qvecs = queries(vectors, 40)
    assert_exact(found.top(qvecs, limit), vectors, qvecs, limit)
    assert_exact(found._exact(qvecs, limit), vectors, qvecs, limit)  # the check's own check
    assert found.coarse is not None and found.coarse._coded is not None
    assert found.coarse.fallbacks == 0  # every query was answered by the codes


def test_near_ties_fall_back_to_the_exact_pass(monkeypatch) -> None:
    """500 rows within the codes' error of one another around the query: the codes cannot
    tell which 30 are best, so the exact pass answers, and the result is still exact."""
    rng = np.random.default_rng(3)
    direction = rng.standard_normal(96)
    direction /= np.linalg.norm(direction)
    crowd = direction + 0.003 * rng.standard_normal((500, 96))
    vectors = np.vstack([crowd, clustered(4000)])
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    found = matrix(vectors, monkeypatch)
    qvecs = np.vstack([direction, queries(vectors, 4)]).astype(np.float32)
    assert_exact(found.top(qvecs, 30), vectors, qvecs, 30)
    assert found.coarse is not None and found.coarse.fallbacks == 1  # the crowded query only


def test_every_code_score_is_within_the_measured_bound() -> None:
    vectors = clustered(3000, seed=5)
    vectors[7] = 0.0
    vectors[7][0] = 1.0  # one component at the far end of the codes' range
    coded = coarse.CodedRows(vectors)
    qvecs = queries(vectors, 20)
    rows, approximate = coded.candidates(qvecs, 3000)
    for query, found, scores in zip(qvecs, rows, approximate, strict=True):
        exact = vectors[found] @ query
        assert np.abs(exact - scores).max() <= coded.bound + coarse.SLACK
    assert 0 < coded.bound < 0.05


def test_codes_are_made_in_the_background_from_the_second_search(monkeypatch) -> None:
    monkeypatch.setattr(coarse, "MIN_ROWS", 0)
    vectors = clustered(2000)
    found = mirror._Matrix([f"r{i}" for i in range(2000)], vectors)
    search = found.coarse
    assert search is not None
    qvecs = queries(vectors, 4)
    assert_exact(found.top(qvecs, 10), vectors, qvecs, 10)  # the exact pass
    assert search.making is None and not search.ready  # one search: no codes made
    assert_exact(found.top(qvecs, 10), vectors, qvecs, 10)  # the exact pass, codes started
    assert search.making is not None
    search.making.join()
    assert search.ready and search.top(qvecs, 10) is not None
    assert_exact(found.top(qvecs, 10), vectors, qvecs, 10)


def test_relations_scored_after_a_search_through_the_codes_are_exact(monkeypatch) -> None:
    vectors = clustered(5000, seed=9)
    found = matrix(vectors, monkeypatch)
    qvec = queries(vectors, 1)[0]
    best = found.top(qvec[None], 20, by_row=True)[0]
    assert found._row_of is None  # no pass over every row
    rows = np.array([r for r, _ in best] + [4, 400, 4000])
    assert np.allclose(found.scores(qvec, rows), vectors[rows] @ qvec, rtol=0, atol=1e-6)
    assert found._row_of is None


def test_small_matrices_search_exactly() -> None:
    vectors = clustered(500)
    assert mirror._Matrix([f"r{i}" for i in range(500)], vectors).coarse is None
    assert coarse.MIN_ROWS >= 10_000


def records(count: int) -> list[PassageRecord]:
    out = []
    for i in range(count):
        triplets = [Triplet(f"Person {i}", "works for", f"Company {i % 7}"),
                    Triplet(f"Company {i % 7}", "is located in", f"City {i % 3}"),
                    Triplet(f"Person {i}", "was born in", f"Town {i}")]
        out.append(PassageRecord(f"Person {i} works for Company {i % 7}, located in City "
                                 f"{i % 3}. Person {i} was born in Town {i}.", triplets,
                                 doc_id=f"doc{i // 10}"))
    return out


def test_retrievals_through_the_codes_equal_exact_ones(open_graph, monkeypatch) -> None:
    rag = open_graph(graph="coarse")
    rag.add(records(150))
    questions = ["Where was Person 17 born?", "Which city is the employer of Person 42 in?",
                 "Who works for Company 3?", "Town 99"]

    def answers(min_rows: int) -> list[list[tuple[str, float]]]:
        monkeypatch.setattr(coarse, "MIN_ROWS", min_rows)
        rag.state.forget_retriever()
        if min_rows == 0:
            for kind in ("_passages", "_relations", "_entities"):
                getattr(rag.retriever.search, kind).coarse.coded()
        got = [[(p.id, round(p.score, 5)) for p in rag.retrieve(q, top_k=5, method=m).passages]
               for q in questions for m in ("naive", "default", "seed")]
        passages = rag.retriever.search._passages
        assert (passages.coarse is not None) == (min_rows == 0)
        if passages.coarse is not None:
            assert passages.coarse.ready and passages.coarse.fallbacks == 0
            assert rag.retriever.search._relations._row_of is None  # relations by codes too
        return got

    assert answers(0) == answers(10**9)
