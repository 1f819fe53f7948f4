"""The bfloat16 runtime (`HOPGRAPH_EMBED_RUNTIME=torch-bf16`): the transformer in bfloat16,
pooling in fp32; vectors close to fp32's but named apart, so its graphs never mix with
fp32's. The packaged model and a model folder (a copy of the packaged one) alike."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from hopgraph import GraphRAG
from hopgraph.embed import LocalEmbedder, make_embedder
from hopgraph.embed.bf16 import BF16_NAME, Bf16Embedder
from hopgraph.embed.folder import read_folder
from hopgraph.embed.local import model_dir
from hopgraph.errors import EmbedderError, StoreError, UsageError

TEXTS = ["Who taught Euler?", "爱因斯坦 was born in Ulm.", "x",
         "Daniel Bernoulli made major contributions to fluid dynamics and probability.",
         " ".join(["A sentence long enough to be cut at the model's 256-token limit."] * 40)]
PASSAGES = [{"passage": "Leonhard Euler studied under Johann Bernoulli in Basel.",
             "triplets": [["Leonhard Euler", "studied under", "Johann Bernoulli"]]},
            {"passage": "Hydrodynamica was written by Daniel Bernoulli in Strasbourg.",
             "triplets": [["Hydrodynamica", "written by", "Daniel Bernoulli"]]}]


@pytest.fixture(scope="module")
def bf16() -> Bf16Embedder:
    embedder = make_embedder("local", runtime="torch-bf16")
    assert isinstance(embedder, Bf16Embedder)
    return embedder


@pytest.mark.slow
def test_bf16_vectors_are_close_to_fp32_but_named_apart(
        bf16: Bf16Embedder, local_embedder: LocalEmbedder) -> None:
    got, want = bf16.embed(TEXTS), local_embedder.embed(TEXTS)
    assert got.shape == (len(TEXTS), 384) and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(got * want, axis=1)
    assert cosines.min() >= 0.99
    assert (bf16.name, bf16.runtime, bf16.dim) == (BF16_NAME, "torch-bf16", 384)
    assert bf16.name != local_embedder.name
    # the same vector for a text whatever batch it comes in (batches are sorted by length)
    alone = np.vstack([bf16.embed([text]) for text in TEXTS[:3]])
    assert np.allclose(alone, got[:3], atol=2e-2)
    assert bf16.embed([]).shape == (0, 384)


@pytest.mark.slow
def test_a_folder_under_bf16_is_named_after_its_weights_and_the_runtime(
        tmp_path: Path, bf16: Bf16Embedder) -> None:
    folder = shutil.copytree(model_dir(), tmp_path / "MiniLM-copy")
    embedder = make_embedder(str(folder), runtime="torch-bf16")
    assert isinstance(embedder, Bf16Embedder)
    assert embedder.name == f"{read_folder(folder).name}-bf16"
    assert np.allclose(embedder.embed(TEXTS[:2]), bf16.embed(TEXTS[:2]), atol=1e-6)
    with pytest.raises(EmbedderError, match="HOPGRAPH_EMBED_RUNTIME=torch-bf16"):
        make_embedder(embedder.name)  # a graph's stored name says which folder and runtime


def test_the_stored_bf16_name_implies_its_runtime() -> None:
    assert isinstance(make_embedder(BF16_NAME), Bf16Embedder)
    with pytest.raises(UsageError, match="runs only under torch-bf16"):
        make_embedder(BF16_NAME, runtime="onnx")


@pytest.mark.slow
def test_a_graph_built_with_bf16_opens_only_with_bf16(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bf16: Bf16Embedder) -> None:
    uri = str(tmp_path / "bf16.db")
    monkeypatch.setenv("HOPGRAPH_EMBED_RUNTIME", "torch-bf16")
    with GraphRAG(uri=uri, graph="g") as rag:
        assert rag.embedder.name == BF16_NAME
        rag.add(PASSAGES)
        assert rag.stats()["embedder"] == BF16_NAME
    monkeypatch.setenv("HOPGRAPH_EMBED_RUNTIME", "onnx")
    with pytest.raises(StoreError, match="bf16"):
        GraphRAG(uri=uri, graph="g")
    monkeypatch.delenv("HOPGRAPH_EMBED_RUNTIME")
    with GraphRAG(uri=uri, graph="g", embedder=BF16_NAME, create=False) as rag:
        top = rag.retrieve("Who taught Euler?", method="naive").passages[0]
        assert "Johann Bernoulli" in top.text
