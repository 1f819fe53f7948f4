"""Entity and relation vectors on disk, in graph order: written by ingest, used by searches."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import BERNOULLI, QUESTION, need

from hopgraph import Query
from hopgraph.graph import KnowledgeGraph
from hopgraph.retrieve.search import MemorySearcher, MilvusSearcher
from hopgraph.store import MilvusStore
from hopgraph.store.vectors import VectorFile

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each


def milvus_rows(store: MilvusStore, graph: KnowledgeGraph, kind: str) -> np.ndarray:
    """The vectors Milvus holds for the graph's rows, in graph order."""
    ids = graph.entity_ids if kind == "entities" else [r.id for r in graph.relations]
    stored = store.vectors(getattr(store, kind), ids)
    return np.vstack([stored[i] for i in ids])


def test_ingest_writes_them_and_they_equal_milvus(open_graph, store_of, tmp_path: Path
                                                  ) -> None:
    rag = open_graph()
    rag.add_files([need(BERNOULLI)])
    extra = tmp_path / "extra.jsonl"
    extra.write_text(json.dumps({"passage": "Basel lies on the Rhine.",
                                 "triplets": [["Basel", "lies on", "Rhine"]]}), "utf-8")
    rag.add_files([extra])  # a second write appends
    store = store_of(rag)
    for kind in ("entities", "relations"):
        in_milvus = milvus_rows(store, rag.graph, kind)
        on_disk = rag.vector_files[kind].read(len(in_milvus))
        assert on_disk is not None
        assert np.allclose(on_disk, in_milvus, atol=1e-6)


def test_rows_a_session_scan_misses_are_read_again_strong(open_graph, store_of,
                                                         monkeypatch) -> None:
    """A session read from a process that has not written may not see yet the rows another
    process wrote last: the mirror and the lexicon's texts read those again, strong, so no
    row of the graph is mirrored as zeros or left out of BM25."""
    from hopgraph.lexicon.saved import passage_texts

    rag = open_graph()
    rag.add_files([need(BERNOULLI)])
    store, graph = store_of(rag), rag.graph
    late = {graph.entity_ids[0], graph.relation_ids[0], graph.passage_ids[0]}
    stored = {kind: milvus_rows(store, graph, kind) for kind in ("entities", "relations")}
    scan, get = store.scan, store.get
    monkeypatch.setattr(store, "scan", lambda collection, fields: (
        row for row in scan(collection, fields) if row["id"] not in late))
    monkeypatch.setattr(store, "get", lambda collection, ids, fields, strong=False, **kw: [
        row for row in get(collection, ids, fields, strong=strong, **kw)
        if strong or row["id"] not in late])
    mirror = MemorySearcher(store, graph)
    assert mirror.scanned == ["relations", "entities", "passages"]
    for kind in ("entities", "relations"):
        assert np.allclose(getattr(mirror, f"_{kind}").vectors, stored[kind], atol=1e-6)
    assert graph.passage_ids[0] in mirror._texts
    every = list(graph.passage_ids)
    assert set(passage_texts(store, graph, every)) == set(every)  # by scan
    assert set(passage_texts(store, graph, every[:1])) == {every[0]}  # by id


def test_searches_use_them_instead_of_milvus(open_graph, parts_of, monkeypatch) -> None:
    rag = open_graph()
    rag.add_files([need(BERNOULLI)])
    expected = {m: [p.id for p in rag.retrieve(QUESTION, top_k=3, method=m).passages]
                for m in ("default", "seed")}
    rag.close()
    reopened = parts_of(rag)  # the graph opened again, from its modules
    assert isinstance(reopened.retriever.search, MemorySearcher)
    assert reopened.retriever.search.scanned == []  # the mirror read the files, not Milvus
    for limit in (0, 10**6):
        reopened = parts_of(rag, memory_limit=limit)  # searching as the limit says
        search = reopened.retriever.search
        if isinstance(search, MilvusSearcher):
            monkeypatch.setattr(reopened.store, "vectors", pytest.fail)  # no fetch by id
        for method, ids in expected.items():
            query = Query(QUESTION, top_k=3, method=method)
            assert [p.id for p in reopened.retriever.retrieve(query).passages] == ids


def test_stale_files_are_never_used_and_get_rebuilt(open_graph, parts_of) -> None:
    rag = open_graph()
    rag.add_files([need(BERNOULLI)])
    relations = rag.vector_files["relations"]
    rows = relations.rows()
    relations.append(np.ones((1, 384), dtype=np.float32))  # a torn append (crash)
    rag.close()
    again = parts_of(rag)  # the graph opened again, from its modules
    state = again.state
    assert state.vectors_of(state.version)["relations"] is None  # rows disagree: not trusted
    assert "relations" in again.retriever.search.scanned  # the mirror read Milvus...
    assert relations.rows() == rows  # ...and rewrote the file
    third = parts_of(rag)
    assert third.retriever.search.scanned == []


def test_vector_file_reads_only_the_expected_rows(tmp_path: Path) -> None:
    file = VectorFile(tmp_path / "v.f32", 4)
    assert file.rows() == 0 and file.read(0) is None
    file.append(np.arange(8, dtype=np.float32).reshape(2, 4))
    file.append(np.ones((1, 4), dtype=np.float32))
    assert file.rows() == 3 and file.read(2) is None
    assert file.read(3)[2].tolist() == [1.0, 1.0, 1.0, 1.0]
    file.write(np.zeros((1, 4), dtype=np.float32))
    assert file.rows() == 1
    file.discard()
    assert file.rows() == 0


def test_memory_vectors_append_past_the_views_searchers_hold() -> None:
    from hopgraph.store.vectors import MemoryVectors

    rng = np.random.default_rng(3)
    vectors, kept = MemoryVectors(4), np.zeros((0, 4), dtype=np.float32)
    held: list[tuple[np.ndarray, np.ndarray]] = []
    for size in [3, 0, 1500, 2, 700]:  # past the first buffer and its growth
        block = rng.standard_normal((size, 4)).astype(np.float32)
        vectors.append(block)
        kept = np.vstack([kept, block])
        view = vectors.read(len(kept))
        assert vectors.rows() == len(kept) and view is not None
        assert np.array_equal(view, kept) and not view.flags.writeable
        held.append((view, kept.copy()))
    assert vectors.read(len(kept) - 1) is None
    assert vectors.keep(np.arange(len(kept)) % 2 == 0)
    assert np.array_equal(vectors.read(len(kept[::2])), kept[::2])
    for view, expected in held:  # what was handed out never changed
        assert np.array_equal(view, expected)
    vectors.discard()
    assert vectors.rows() == 0 and vectors.read(0) is None


def test_vectors_kept_in_memory_are_dropped_past_the_cap(tmp_path: Path) -> None:
    """A server graph's writer keeps no vectors past the memory limit (its searches run in
    Milvus there): a write that would pass it drops every kind, appends nothing more, and
    ends with the vectors stale; vector files on disk (Milvus Lite) have no cap."""
    from hopgraph.store.vectors import KINDS, GraphVectors, MemoryVectors, vector_files

    rng = np.random.default_rng(5)

    def block(rows: int) -> np.ndarray:
        return rng.standard_normal((rows, 4)).astype(np.float32)

    vectors = GraphVectors(vector_files(tmp_path / "g.snapshot", 4, shared=False, cap=100),
                           ann_min_rows=0, cap=100)
    vectors.check(True, dict.fromkeys(KINDS, 0))  # an empty graph: trusted
    sink = vectors.sink()
    sink("relations", block(60))
    sink("entities", block(30))
    vectors.check(True, {"entities": 30, "relations": 60, "passages": 0})
    assert vectors.current({"entities": 30, "relations": 60, "passages": 0})

    sink = vectors.sink()  # the next write passes the cap
    sink("relations", block(30))
    sink("relations", block(20))
    sink("entities", block(5))  # nothing more is kept in this write
    assert all(file.rows() == 0 for file in vectors.files.values())
    assert all(isinstance(file, MemoryVectors) for file in vectors.files.values())
    sizes = {"entities": 35, "relations": 110, "passages": 0}
    vectors.check(True, sizes)
    assert not vectors.current(sizes) and vectors.matching(sizes)["relations"] is None
    vectors.keep({kind: block(size) for kind, size in sizes.items()})  # a scan: too big
    assert not vectors.current(sizes)

    vectors.limit(200)  # a higher limit: a scan's vectors are kept again ...
    vectors.keep({kind: block(size) for kind, size in sizes.items()})
    assert vectors.current(sizes)
    vectors.limit(50)  # ... and a lower one drops them at once
    assert not vectors.current(sizes) and vectors.files["relations"].rows() == 0

    vectors.limit(120)  # another process's change followed past the cap drops them too
    vectors.keep({kind: block(size) for kind, size in sizes.items()})
    masks = {kind: np.ones(size, dtype=bool) for kind, size in sizes.items()}
    vectors.follow(masks, {"relations": block(5), "entities": block(0), "passages": block(0)},
                   True, {**sizes, "relations": 115})
    assert vectors.current({**sizes, "relations": 115})
    vectors.follow(masks | {"relations": np.ones(115, dtype=bool)},
                   {"relations": block(10), "entities": block(0), "passages": block(0)},
                   True, {**sizes, "relations": 125})
    assert all(file.rows() == 0 for file in vectors.files.values())

    on_disk = GraphVectors(vector_files(tmp_path / "lite.snapshot", 4, shared=True, cap=10),
                           ann_min_rows=0, cap=10)
    on_disk.check(True, dict.fromkeys(KINDS, 0))
    on_disk.sink()("relations", block(25))
    on_disk.check(True, {"entities": 0, "relations": 25, "passages": 0})
    assert on_disk.current({"entities": 0, "relations": 25, "passages": 0})


def test_writers_of_one_file_never_collide(tmp_path: Path) -> None:
    """Two graphs of one name open at once (a server's pool reopening one while a request
    still holds the old) rewrite the same vector file: every rewrite is whole, none fails."""
    import threading

    path = tmp_path / "g.relations.f32"
    blocks = [np.full((500, 8), float(n), dtype=np.float32) for n in range(6)]
    errors: list[BaseException] = []

    def rewrite(block: np.ndarray) -> None:
        try:
            for _ in range(40):
                VectorFile(path, 8).write(block)
        except BaseException as exc:  # every failure is reported
            errors.append(exc)

    threads = [threading.Thread(target=rewrite, args=(b,)) for b in blocks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[:3]
    rows = VectorFile(path, 8).read(500)
    assert rows is not None and any(np.array_equal(rows, b) for b in blocks)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temp file left
