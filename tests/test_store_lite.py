"""A Milvus Lite file is free for another process as soon as this one has closed its last
graph on it (`store.lite`): a script can hand a graph to the CLI, a server or a program."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import BERNOULLI, QUESTION, need, run_process

from hopgraph import GraphRAG
from hopgraph.errors import StoreError

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each


class OtherEmbedder:
    """An embedder the graph was not built with."""

    name, dim = "other", 8

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), self.dim), dtype=np.float32) / np.sqrt(self.dim)


def query_elsewhere(uri: str) -> tuple[int, str]:
    done = run_process("query", QUESTION, "--uri", uri, "--graph", "g", "--top-k", "2",
                       "--json")
    return done.code, done.stdout + done.stderr


def test_closing_releases_the_file_for_another_process(tmp_path: Path, local_embedder
                                                       ) -> None:
    uri = str(tmp_path / "g.db")
    with GraphRAG(uri=uri, graph="g", embedder=local_embedder) as rag:
        rag.add_files([need(BERNOULLI)])
        expected = [p.id for p in rag.retrieve(QUESTION, top_k=2).passages]
        code, said = query_elsewhere(uri)  # open here: the other process is refused
        assert code == 1 and "open in another process" in said
    code, said = query_elsewhere(uri)
    assert code == 0, said
    assert all(pid in said for pid in expected)
    with GraphRAG(uri=uri, graph="g", embedder=local_embedder) as again:  # and back here
        assert [p.id for p in again.retrieve(QUESTION, top_k=2).passages] == expected


def test_the_file_stays_open_while_another_graph_of_it_is(tmp_path: Path, local_embedder
                                                          ) -> None:
    uri = str(tmp_path / "g.db")
    first = GraphRAG(uri=uri, graph="g", embedder=local_embedder)
    first.add_files([need(BERNOULLI)])
    second = GraphRAG(uri=uri, graph="other", embedder=local_embedder)
    second.close()
    second.close()  # twice is harmless, and does not count as the first one's close
    assert first.retrieve(QUESTION, top_k=2).passages  # still served in this process
    code, said = query_elsewhere(uri)
    assert code == 1 and "open in another process" in said
    first.close()  # and now it is free (the first test shows it)


def test_a_failed_open_leaves_the_file_free(tmp_path: Path, local_embedder) -> None:
    uri = str(tmp_path / "g.db")
    with GraphRAG(uri=uri, graph="g", embedder=local_embedder) as rag:
        rag.add_files([need(BERNOULLI)])
    with pytest.raises(StoreError, match="was built with embedder"):
        GraphRAG(uri=uri, graph="g", embedder=OtherEmbedder())
    code, said = query_elsewhere(uri)
    assert code == 0, said
