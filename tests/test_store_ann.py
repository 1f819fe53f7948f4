"""Nearest-neighbour indexes beside the vector files (store/ann.py): recall against exact
search, exact scores, and the index kept in step with the file (appends, removals,
rewrites) or not used at all."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from hopgraph.records import PassageRecord, Triplet
from hopgraph.store.ann import AnnFile, fingerprint
from hopgraph.store.vectors import VectorFile


def clustered(rows: int, dim: int = 96, seed: int = 0) -> np.ndarray:
    """Unit vectors around 200 centres: embeddings cluster by topic, random points do not."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((200, dim))
    points = centres[rng.integers(0, 200, rows)] + 0.6 * rng.standard_normal((rows, dim))
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


def exact_top(vectors: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    return np.argsort(-(vectors @ query), kind="stable")[:k].tolist()


def file_of(tmp_path: Path, vectors: np.ndarray) -> VectorFile:
    file = VectorFile(tmp_path / "g.relations.f32", vectors.shape[1])
    file.write(vectors)
    return file


@pytest.mark.slow
def test_recall_at_10_against_exact_search_and_exact_scores(tmp_path: Path) -> None:
    vectors = clustered(20_000)
    file = file_of(tmp_path, vectors)
    file.ann.update(file.read(len(vectors)), min_rows=1_000)
    ann = file.ann.load(file.read(len(vectors)))
    assert ann is not None
    rng = np.random.default_rng(1)
    queries = vectors[rng.choice(len(vectors), 100, replace=False)] + 0.3 * rng.standard_normal(
        (100, vectors.shape[1])).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    found = 0
    for query in queries:
        hits = ann.search(vectors, query, 10)
        found += len({r for r, _ in hits} & set(exact_top(vectors, query, 10)))
        for row, score in hits:  # every score is the exact cosine of its row
            assert score == pytest.approx(float(vectors[row] @ query), abs=1e-6)
    assert found / (10 * len(queries)) >= 0.99
    fresh = file.ann.load(file.read(len(vectors)))  # nothing kept from earlier queries
    for query in queries[:5]:  # the best 200 (kept) begin with the best 10 of a fresh index
        assert ann.search(vectors, query, 200)[:10] == fresh.search(vectors, query, 10)


def test_appended_rows_join_and_removed_rows_leave(tmp_path: Path, monkeypatch) -> None:
    vectors = clustered(3_000, seed=2)
    file = file_of(tmp_path, vectors[:2_500])
    file.ann.update(file.read(2_500), min_rows=1_000)
    file.append(vectors[2_500:])
    with monkeypatch.context() as patch:  # extended, not built again
        patch.setattr(AnnFile, "_build", lambda *_: pytest.fail("the index was rebuilt"))
        file.ann.update(file.read(3_000), min_rows=1_000)
    ann = file.ann.load(file.read(3_000))
    assert ann is not None and len(ann.rowmap) == 3_000
    assert ann.search(vectors, vectors[2_900], 1)[0][0] == 2_900

    keep = np.ones(3_000, dtype=bool)
    keep[::7] = False  # remove every seventh row
    assert file.keep(keep)
    kept = file.read(int(keep.sum()))
    ann = file.ann.load(kept)
    assert ann is not None  # the labels now point at the rows kept
    new_row = int(np.cumsum(keep)[2_900] - 1)
    assert ann.search(kept, vectors[2_900], 1)[0][0] == new_row
    removed = vectors[7]  # row 7 is gone: its nearest row now is another one
    assert all(np.any(kept[r] != removed) for r, _ in ann.search(kept, removed, 5))


def test_a_small_append_waits_beside_the_index_and_is_searched_exactly(
        tmp_path: Path, monkeypatch) -> None:
    vectors = clustered(3_000, seed=4)
    file = file_of(tmp_path, vectors[:2_000])
    file.ann.update(file.read(2_000), min_rows=1_000)
    written = file.ann.path.stat().st_mtime_ns
    file.append(vectors[2_000:2_150])  # within the tail limit (a tenth of 2,000)
    with monkeypatch.context() as patch:
        for method in ("_build", "_extend"):
            patch.setattr(AnnFile, method, lambda *_: pytest.fail("the index was rewritten"))
        file.ann.update(file.read(2_150), min_rows=1_000)
    assert file.ann.path.stat().st_mtime_ns == written
    ann = file.ann.load(file.read(2_150))
    assert ann is not None and ann.covered == 2_000 and len(ann.rowmap) == 2_000
    current = file.read(2_150)
    for row in (5, 2_049, 2_149):  # covered rows and tail rows alike, exact scores
        hits = ann.search(current, vectors[row], 3)
        assert hits[0][0] == row and hits[0][1] == pytest.approx(1.0, abs=1e-5)
        assert [r for r, _ in hits] == exact_top(current, vectors[row], 3)

    keep = np.ones(2_150, dtype=bool)
    keep[1_990:2_010] = False  # across the boundary: ten covered rows, ten of the tail
    assert file.keep(keep)
    kept = file.read(2_130)
    ann = file.ann.load(kept)
    assert ann is not None and ann.covered == 1_990
    assert ann.search(kept, vectors[2_149], 1)[0][0] == 2_129

    file.append(vectors[2_150:])  # the tail outgrows its limit: added to the index
    file.ann.update(file.read(2_980), min_rows=1_000)
    ann = file.ann.load(file.read(2_980))
    assert ann is not None and ann.covered == 2_980 and len(ann.rowmap) == 2_990
    assert ann.search(file.read(2_980), vectors[2_999], 1)[0][0] == 2_979


def test_an_index_that_does_not_match_its_vectors_is_not_used(tmp_path: Path) -> None:
    vectors = clustered(2_000, seed=3)
    file = file_of(tmp_path, vectors)
    file.ann.update(file.read(2_000), min_rows=1_000)
    assert file.ann.load(file.read(2_000)) is not None
    shuffled = vectors[::-1].copy()
    file.ann.meta_path.rename(tmp_path / "saved.npz")  # keep the old metadata aside
    file._replace(shuffled)  # the rows rewritten behind the index's back
    (tmp_path / "saved.npz").rename(file.ann.meta_path)
    assert fingerprint(shuffled) != fingerprint(vectors)
    assert file.ann.load(file.read(2_000)) is None  # searched exactly instead
    file.write(shuffled)  # a rewrite through the file discards the index
    assert not file.ann.exists()
    file.ann.update(file.read(2_000), min_rows=5_000)  # below the threshold: none
    assert not file.ann.exists()


def records(count: int) -> list[PassageRecord]:
    """Passages of a small chain graph with hubs."""
    out = []
    for i in range(count):
        triplets = [Triplet(f"Person {i}", "works for", f"Company {i % 7}"),
                    Triplet(f"Company {i % 7}", "is located in", f"City {i % 3}"),
                    Triplet(f"Person {i}", "was born in", f"Town {i}")]
        out.append(PassageRecord(f"Person {i} works for Company {i % 7}, located in City "
                                 f"{i % 3}. Person {i} was born in Town {i}.", triplets,
                                 doc_id=f"doc{i // 10}"))
    return out


@pytest.mark.slow
def test_graph_searches_with_indexes_equal_exact_ones(open_graph, parts_of, monkeypatch
                                                      ) -> None:
    monkeypatch.setenv("HOPGRAPH_ANN_MIN_ROWS", "200")
    rag = open_graph(graph="annidx")
    rag.add(records(120))
    rag.wait_indexed()  # built after the write, in the background
    files = rag.vector_files
    assert files["relations"].ann.exists() and files["entities"].ann.exists()
    assert not files["passages"].ann.exists()  # 120 passages: below the threshold
    questions = ["Where was Person 17 born?", "Which city is the employer of Person 42 in?",
                 "Who works for Company 3?"]

    def answers(min_rows: str) -> list[list[tuple[str, float]]]:
        monkeypatch.setenv("HOPGRAPH_ANN_MIN_ROWS", min_rows)  # read when a graph is opened
        reader = open_graph(graph="annidx", create=False)
        reader.wait_indexed()
        got = [[(p.id, round(p.score, 5)) for p in reader.retrieve(q, top_k=5).passages]
               for q in questions]
        mirror = parts_of(reader).retriever.search  # as the reader's settings build it
        indexed = mirror._relations.ann is not None
        assert indexed == (min_rows != "0")
        reader.close()
        return got

    assert answers("200") == answers("0")
    monkeypatch.setenv("HOPGRAPH_ANN_MIN_ROWS", "200")  # ("0" discards indexes at a write)
    removed = rag.vector_files["relations"].rows()
    rag.delete(["doc3"])  # removal: the index follows the kept rows
    rag.wait_indexed()
    assert rag.vector_files["relations"].rows() < removed
    assert files["relations"].ann.exists()
    assert answers("200") == answers("0")
    monkeypatch.setenv("HOPGRAPH_ANN_MIN_ROWS", "200")
    rag.add(records(124)[120:])  # a few rows: searched exactly beside the index
    rag.wait_indexed()
    covered = parts_of(rag).retriever.search._relations.ann.covered
    assert covered < rag.vector_files["relations"].rows()
    assert answers("200") == answers("0")


def held_builds(monkeypatch) -> tuple[threading.Event, threading.Event]:
    """Index builds that wait, once started, until the returned `release` is set (`started`
    is set when one begins)."""
    started, release = threading.Event(), threading.Event()
    build = AnnFile._build

    def waiting(self: AnnFile, vectors: np.ndarray, *rest) -> bool:
        started.set()
        assert release.wait(120), "the test never released the build"
        return build(self, vectors, *rest)

    monkeypatch.setattr(AnnFile, "_build", waiting)
    return started, release


@pytest.mark.slow
def test_a_write_returns_before_its_index_is_built(open_graph, parts_of, monkeypatch) -> None:
    """The write that crosses the threshold returns with its rows stored while the index is
    still being built; searches meanwhile are exact; the retriever then takes the index up
    and answers the same."""
    monkeypatch.setenv("HOPGRAPH_ANN_MIN_ROWS", "200")
    started, release = held_builds(monkeypatch)
    parts = parts_of(open_graph(graph="annbg"))
    summary = parts.add(records(120))  # returns: the build is held
    assert started.wait(60) and summary.relations_added > 200
    relations = parts.state.vectors.files["relations"]
    assert not relations.ann.exists() and parts.state.vectors.indexing.busy
    questions = ["Where was Person 17 born?", "Who works for Company 3?"]
    mirror = parts.retriever.search
    exact = [[(p.id, round(p.score, 5)) for p in parts.retriever.retrieve(q, top_k=5).passages]
             for q in questions]
    assert mirror._relations.ann is None  # meanwhile: exact
    release.set()
    assert parts.state.vectors.wait_indexed(120)
    assert relations.ann.exists()
    assert parts.retriever.search is mirror and mirror._relations.ann is not None
    assert [[(p.id, round(p.score, 5)) for p in parts.retriever.retrieve(q, top_k=5).passages]
            for q in questions] == exact


def build_in_thread(file: VectorFile, rows: int) -> tuple[threading.Thread, list[bool]]:
    """`update` over the file's first `rows` rows in a thread, as `store.indexing` runs it;
    its result lands in the returned list."""
    saved: list[bool] = []
    thread = threading.Thread(target=lambda: saved.append(file.ann.update(
        file.prefix(rows), 1_000, lambda: file.prefix(rows))))
    thread.start()
    return thread, saved


def test_rows_appended_during_a_build_stay_beside_the_index(tmp_path: Path,
                                                            monkeypatch) -> None:
    vectors = clustered(3_000, seed=4)
    file = file_of(tmp_path, vectors[:2_000])
    started, release = held_builds(monkeypatch)
    thread, saved = build_in_thread(file, 2_000)
    assert started.wait(60)
    file.append(vectors[2_000:])  # a write appends while the index is built
    release.set()
    thread.join(60)
    assert saved == [True]
    ann = file.ann.load(file.read(3_000))
    assert ann is not None and ann.covered == 2_000  # the rest is its tail
    query = vectors[2_500]
    assert ann.search(file.read(3_000), query, 5)[0][0] == 2_500  # found in the tail


def test_a_removal_during_a_build_voids_it(tmp_path: Path, monkeypatch) -> None:
    vectors = clustered(3_000, seed=5)
    file = file_of(tmp_path, vectors)
    started, release = held_builds(monkeypatch)
    thread, saved = build_in_thread(file, 3_000)
    assert started.wait(60)
    mask = np.ones(3_000, dtype=bool)
    mask[::7] = False
    assert file.keep(mask)  # a write rewrites the file without some rows meanwhile
    release.set()
    thread.join(60)
    assert saved == [False] and not file.ann.exists()  # the build over old rows: not saved
    kept = file.read(int(mask.sum()))
    assert file.ann.load(kept) is None  # so searches stay exact until the next round
    assert file.ann.update(kept, 1_000, lambda: file.prefix(len(kept)))
    assert file.ann.load(kept) is not None


@pytest.mark.slow
def test_an_interrupted_build_is_done_by_the_next_process(open_graph, monkeypatch) -> None:
    """A process that ended before its index was saved leaves none: the next one to open
    the graph builds it (in the background), and closing waits for it."""
    monkeypatch.setenv("HOPGRAPH_ANN_MIN_ROWS", "200")
    rag = open_graph(graph="annlost")
    rag.add(records(120))
    rag.close()  # waits for the build
    relations = rag.vector_files["relations"]
    assert relations.ann.exists()
    relations.ann.discard()  # as if the process had died before saving it
    again = open_graph(graph="annlost", create=False)
    again.wait_indexed()
    assert again.vector_files["relations"].ann.exists()


def test_an_index_with_a_third_of_its_rows_removed_is_not_used(tmp_path: Path) -> None:
    vectors = clustered(3_000, seed=6)
    file = file_of(tmp_path, vectors)
    assert file.ann.update(file.read(3_000), 1_000)
    mask = np.ones(3_000, dtype=bool)
    mask[::2] = False  # half the rows removed: the labels left point at too few
    assert file.keep(mask)
    assert file.ann.exists() and file.ann.load(file.read(1_500)) is None  # exact until rebuilt
    assert file.ann.update(file.read(1_500), 1_000)
    assert file.ann.load(file.read(1_500)) is not None
