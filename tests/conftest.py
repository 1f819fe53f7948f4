"""Shared fixtures: the real local embedder (loaded once) and Milvus Lite graphs in temp dirs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from hopgraph import GraphRAG
from hopgraph.embed import LocalEmbedder

DATA = (Path(__file__).resolve().parents[1] / ".." / "shared" / "data").resolve()
BERNOULLI = DATA / "bernoulli" / "nano.json"
MUSIQUE = DATA / "musique"
QUESTION = "What contribution did the son of Euler's teacher make?"


def need(path: Path) -> Path:
    """Skip the calling test, with a clear message, when shared data is absent."""
    if not path.exists():
        pytest.skip(f"shared data not found at {path} (expected ../shared/data beside the repo)")
    return path


class CountingEmbedder:
    """The real local embedder, counting how many texts it was asked to embed."""

    def __init__(self, inner: LocalEmbedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls = 0
        self.texts = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed(texts)


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    return LocalEmbedder()


@pytest.fixture
def embedder(local_embedder: LocalEmbedder) -> CountingEmbedder:
    return CountingEmbedder(local_embedder)


@pytest.fixture
def open_graph(tmp_path: Path, embedder: CountingEmbedder
               ) -> Iterator[Callable[..., GraphRAG]]:
    """Open (or reopen) a graph in this test's own Milvus Lite file."""
    opened: list[GraphRAG] = []

    def _open(graph: str = "test", uri: str | None = None, **kwargs: object) -> GraphRAG:
        kwargs.setdefault("embedder", embedder)
        rag = GraphRAG(uri=uri or str(tmp_path / "hop.db"), graph=graph, **kwargs)
        opened.append(rag)
        return rag

    yield _open
    for rag in opened:
        rag.close()


@pytest.fixture(scope="module")
def bernoulli(tmp_path_factory: pytest.TempPathFactory, local_embedder: LocalEmbedder
              ) -> Iterator[GraphRAG]:
    """The Bernoulli set ingested once per test module."""
    need(BERNOULLI)
    uri = str(tmp_path_factory.mktemp("bernoulli") / "b.db")
    rag = GraphRAG(uri=uri, graph="bernoulli", embedder=local_embedder)
    rag.add_files([BERNOULLI])
    yield rag
    rag.close()
