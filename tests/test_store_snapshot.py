"""The graph snapshot: used when current, rebuilt from Milvus when missing, stale or corrupt."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from conftest import BERNOULLI, need

from hopgraph import Query
from hopgraph.graph import KnowledgeGraph
from hopgraph.store import MilvusStore, snapshot
from hopgraph.store.writes import WriteSession, writing

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each


def content(graph: KnowledgeGraph) -> tuple[dict, dict]:
    """The graph independent of row order: names by entity id, relations by id."""
    ids = graph.entity_ids
    return (dict(zip(ids, graph.entity_names, strict=True)),
            {r.id: (ids[r.subject], ids[r.object], r.text, sorted(r.passage_ids))
             for r in graph.relations})


def same_graph(a: KnowledgeGraph, b: KnowledgeGraph) -> bool:
    return content(a) == content(b)


def test_reopen_uses_the_snapshot_written_by_ingest(open_graph, store_of, parts_of) -> None:
    rag = open_graph()
    rag.add_files([need(BERNOULLI)])
    path = store_of(rag).snapshot_path()
    assert path.is_file() and path.parent.name.endswith(".db.snapshots")
    built = rag.graph
    rag.close()
    again = parts_of(rag)  # opened again: its store and state
    assert again.state.source == "snapshot" and same_graph(again.state.graph, built)
    assert again.retriever.retrieve(Query("Who taught Euler?", top_k=1)).passages  # working
    with np.load(path, allow_pickle=False) as npz:  # plain arrays, never pickle
        assert int(npz["writes"][0]) == again.store.writes == 1


@pytest.mark.parametrize("damage", ["missing", "stale", "corrupt", "other graph"])
def test_a_bad_snapshot_is_rebuilt_from_milvus(open_graph, store_of, parts_of, damage: str
                                               ) -> None:
    rag = open_graph()
    rag.add_files([need(BERNOULLI)])
    store = store_of(rag)
    path, built = store.snapshot_path(), rag.graph
    if damage == "missing":
        path.unlink()
    elif damage == "stale":  # a finished write the snapshot never saw (another process's)
        with writing(store, "another process") as session:
            session.touch("passages", [], ["elsewhere"])
    elif damage == "corrupt":
        path.write_bytes(b"PK\x03\x04 not really a zip file")
    else:
        snapshot.save(built, path, "someone_else", store.writes)
    rag.close()
    again = parts_of(rag)  # opened again: its store and state
    assert again.state.source == "Milvus" and same_graph(again.state.graph, built)
    third = parts_of(rag)  # the rebuilt graph was saved: the next open needs no rebuild
    assert third.state.source == "snapshot" and same_graph(third.state.graph, built)


def test_a_graph_rebuilt_from_milvus_is_read_strong(open_graph, store_of, parts_of,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The rebuilt graph is stamped with the write counter read first, so its rows must
    hold every write up to it: a session read from a client that has not written (a
    process just started) may not see another process's last write yet on a server."""
    rag = open_graph()
    rag.add([{"doc_id": "a", "passage": "Euler studied under Johann Bernoulli.",
              "triplets": [["Euler", "studied under", "Johann Bernoulli"]]}])
    store_of(rag).snapshot_path().unlink()
    rag.close()
    strong: list[bool] = []
    original = MilvusStore.scan

    def scan(store, collection, fields):  # the rows of the rebuild, and how they were read
        strong.append(store.strong_now)
        return original(store, collection, fields)

    monkeypatch.setattr(MilvusStore, "scan", scan)
    again = parts_of(rag)
    assert again.state.source == "Milvus" and strong == [True, True, True]
    assert again.state.graph.documents() == {"a": 1}


def test_a_crash_mid_write_is_never_served_stale(open_graph, store_of, parts_of) -> None:
    rag = open_graph()
    rag.add_files([need(BERNOULLI)])
    # A write that died after storing rows: its change-log part names them, no end part.
    store = store_of(rag)
    session = WriteSession(store, "a write that dies")
    session.start()
    session.touch("entities", ["e-crash"], ["crashed-doc"])
    store.insert(store.entities, [{"id": "e-crash", "name": "Crash Test",
                                   "vector": [0.0] * 383 + [1.0]}])
    store.flush()
    rag.close()
    again = parts_of(rag)  # opened again: its store and state
    # The snapshot is of the last closed write; the open write's rows are read on top.
    assert again.state.source == "snapshot"
    assert "Crash Test" in again.state.graph.entity_names
    assert list(again.state.unfinished) == ["crashed-doc"]


def test_a_dropped_graphs_snapshot_never_serves_its_successor(open_graph, store_of,
                                                             parts_of) -> None:
    """A graph made again under a dropped one's name, with as many writes, does not take the
    old snapshot (another machine's cache still holds one: drop cannot reach it)."""
    old = open_graph("reborn")
    old.add([{"passage": "Basel lies on the Rhine.",
              "triplets": [["Basel", "lies on", "Rhine"]]}], doc_id="old")
    path = store_of(old).snapshot_path()
    kept = path.read_bytes()  # what another machine's cache would hold
    assert old.drop() and not path.exists()  # drop removes this machine's files
    old.close()
    new = open_graph("reborn")
    new.add([{"passage": "Bern lies on the Aare.",
              "triplets": [["Bern", "lies on", "Aare"]]}], doc_id="new")
    assert store_of(new).writes == 1
    new.close()
    path.write_bytes(kept)  # the old graph's snapshot, at the same write counter
    again = parts_of(new)  # opened again: its store and state
    assert again.state.source == "Milvus" and again.state.graph.documents() == {"new": 1}


def test_snapshot_round_trip_keeps_unicode_and_passage_links(tmp_path: Path) -> None:
    graph = KnowledgeGraph()
    graph.add_entity("e1", "Gödel")
    graph.add_entity("e2", "爱因斯坦")
    graph.add_relation("r1", "e1", "e2", "Gödel met 爱因斯坦", ["p1", "p2"])
    graph.add_relation("r2", "e2", "e2", "爱因斯坦 self", [])
    path = tmp_path / "g.npz"
    snapshot.save(graph, path, "g", 7)
    saved = snapshot.load(path, "g", 7)
    assert saved is not None
    loaded = saved.graph
    assert same_graph(loaded, graph)
    assert loaded.entity_ids == graph.entity_ids  # the same positions, too
    assert snapshot.load(path, "g", 8) is None and snapshot.load(path, "h", 7) is None


def test_drop_removes_temp_files_a_killed_writer_left(open_graph, store_of) -> None:
    """Files are replaced through unique temp files (store.atomic); one left by a process
    killed mid-write goes with its graph, and another graph's stays."""
    rag = open_graph("left")
    rag.add([{"passage": "Euler studied in Basel.", "triplets": [["Euler", "studied in",
                                                                  "Basel"]]}])
    folder = store_of(rag).snapshot_path().parent
    mine = folder / f".{rag.name}.relations.f32.k1ll3d.tmp"
    other = folder / f".{rag.name}x.relations.f32.k1ll3d.tmp"
    for path in (mine, other):
        path.write_bytes(b"half a file")
    mask = os.umask(0o022)
    os.umask(mask)
    files = [p for p in folder.iterdir() if p.name.startswith(f"{rag.name}.")]
    assert files and all(p.stat().st_mode & 0o777 == 0o666 & ~mask for p in files), [
        (p.name, oct(p.stat().st_mode)) for p in files]  # as open() makes them, not 0600
    rag.drop()
    assert not mine.exists() and other.exists()
    other.unlink()
