"""Graphs stored by the release before the writer lease and the change log keep working:
opened as they are, the two new collections added in place (idempotently), the old
unfinished-write flag reported until a write completes the graph."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import BERNOULLI, QUESTION, need

from hopgraph import GraphRAG
from hopgraph.embed import LocalEmbedder
from hopgraph.store.check import check

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each

RELEASE = Path(__file__).parent / "data" / "release_graph" / "graphs"


def _copy(tmp_path: Path) -> str:
    target = tmp_path / "release.db"
    shutil.copytree(RELEASE, target)
    return str(target)


def test_a_graph_of_the_last_release_opens_and_takes_writes(
        tmp_path: Path, local_embedder: LocalEmbedder, store_of: Callable) -> None:
    uri = _copy(tmp_path)
    with GraphRAG(uri=uri, graph="complete", embedder=local_embedder, create=False) as rag:
        store = store_of(rag)
        assert store.exists() and not store.migrate()  # added on open, once
        assert rag.stats()["state"] == "complete" and rag.unfinished() == {}
        stored = rag.documents()
        assert len(stored) == 1 and sum(stored.values()) == 4
        assert rag.retrieve(QUESTION).passages
        before = store.writes
        rag.add([{"passage": "Euler was born in Basel.",
                  "triplets": [["Leonhard Euler", "born in", "Basel"]]}], doc_id="basel")
        assert store_of(rag).writes == before + 1
        assert check(store).problems == []
    with GraphRAG(uri=uri, graph="complete", embedder=local_embedder, create=False) as rag:
        assert set(rag.documents()) == {*stored, "basel"}


def test_the_last_releases_unfinished_flag_is_reported_until_a_write_completes_it(
        tmp_path: Path, local_embedder: LocalEmbedder, store_of: Callable) -> None:
    uri = _copy(tmp_path)
    with GraphRAG(uri=uri, graph="interrupted", embedder=local_embedder,
                  create=False) as rag:
        store = store_of(rag)
        assert list(rag.unfinished()) == ["*"]
        assert "earlier hopgraph version" in rag.stats()["state"]
        assert [p.kind for p in check(store).problems] == ["unfinished write"]
        assert any("is incomplete" in n for n in rag.retrieve(QUESTION).notes)
        rag.add_files([need(BERNOULLI)])  # the rerun the old version asked for
        assert store.unfinished() == {} and check(store).problems == []
