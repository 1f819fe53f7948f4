"""The int8 model (`HOPGRAPH_EMBED_RUNTIME=onnx-int8`): made once from the fp32 export,
checked against it, cached apart, and named apart so its graphs never mix with fp32's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hopgraph import GraphRAG
from hopgraph.embed import make_embedder, quantize
from hopgraph.embed.onnx import INT8_NAME, OnnxEmbedder, onnx_path
from hopgraph.errors import EmbedderError, StoreError

TEXTS = ["Who taught Euler?", "爱因斯坦 was born in Ulm.", "x",
         "Daniel Bernoulli made major contributions to fluid dynamics and probability.",
         " ".join(["A sentence long enough to be cut at the model's 256-token limit."] * 40)]
PASSAGE = {"passage": "Leonhard Euler studied under Johann Bernoulli in Basel.",
           "triplets": [["Leonhard Euler", "studied under", "Johann Bernoulli"]]}


@pytest.fixture(scope="module")
def fp32() -> OnnxEmbedder:
    return OnnxEmbedder(fallback=False)


@pytest.fixture(scope="module")
def int8() -> OnnxEmbedder:
    embedder = OnnxEmbedder(int8=True)
    embedder.embed(["quantize now"])  # exports, then quantizes, into HOPGRAPH_CACHE_DIR
    return embedder


@pytest.mark.slow
def test_int8_vectors_are_close_to_fp32_but_not_the_same(fp32: OnnxEmbedder,
                                                          int8: OnnxEmbedder) -> None:
    got, want = int8.embed(TEXTS), fp32.embed(TEXTS)
    assert got.shape == (len(TEXTS), 384) and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(got * want, axis=1)
    assert cosines.min() >= quantize.MIN_COSINE and cosines.mean() >= 0.98
    assert cosines.min() < 0.9999  # not fp32's vectors: hence a name of its own
    assert (int8.name, int8.runtime) == (INT8_NAME, "onnx-int8") and fp32.name != INT8_NAME


@pytest.mark.slow
def test_int8_file_is_cached_apart_and_made_once(int8: OnnxEmbedder) -> None:
    small, full = quantize.int8_path(onnx_path()), onnx_path()
    assert small.is_file() and small != full
    # int8 weights: a smaller file (the sizes: benchmarks/RESULTS.md, "Model time per query:
    # int8 and threads")
    assert small.stat().st_size < full.stat().st_size * 0.8
    made = small.stat().st_mtime_ns
    again = make_embedder("local", runtime="onnx-int8")
    assert np.allclose(again.embed(TEXTS[:2]), int8.embed(TEXTS[:2]))
    assert small.stat().st_mtime_ns == made


@pytest.mark.slow
def test_a_graph_built_with_int8_opens_only_with_int8(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, int8: OnnxEmbedder) -> None:
    uri = str(tmp_path / "int8.db")
    monkeypatch.setenv("HOPGRAPH_EMBED_RUNTIME", "onnx-int8")
    with GraphRAG(uri=uri, graph="g") as rag:
        assert rag.embedder.name == INT8_NAME
        rag.add([PASSAGE])
        assert rag.stats()["embedder"] == INT8_NAME
    monkeypatch.setenv("HOPGRAPH_EMBED_RUNTIME", "onnx")
    with pytest.raises(StoreError, match="int8"):
        GraphRAG(uri=uri, graph="g")
    monkeypatch.setenv("HOPGRAPH_EMBED_RUNTIME", "onnx-int8")
    with GraphRAG(uri=uri, graph="g", create=False) as rag:
        top = rag.retrieve("Who taught Euler?", method="naive").passages[0]
        assert "Johann Bernoulli" in top.text


@pytest.mark.slow
def test_a_failed_quantization_raises_and_leaves_no_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, int8: OnnxEmbedder) -> None:
    import onnxruntime.quantization

    target = tmp_path / "onnx" / "int8.onnx"
    monkeypatch.setattr(quantize, "int8_path", lambda fp32: target)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("no quantizer here")

    monkeypatch.setattr(onnxruntime.quantization, "quantize_dynamic", broken)
    calls: list[int] = []
    monkeypatch.setattr(quantize, "_feed_forward_outputs", lambda model, real=quantize.
                        _feed_forward_outputs: calls.append(1) or real(model))
    embedder = OnnxEmbedder(int8=True)
    with pytest.raises(EmbedderError, match="no quantizer here") as failed:
        embedder.embed(["Basel"])  # int8 never falls back to torch
    assert "HOPGRAPH_EMBED_RUNTIME=onnx" in str(failed.value)
    assert list(target.parent.rglob("*")) == []  # nothing left, not even the temp folder
    with pytest.raises(EmbedderError, match="no quantizer here"):
        embedder.embed(["Basel"])  # the same error again, without quantizing again
    assert calls == [1]


@pytest.mark.slow
def test_an_int8_model_that_disagrees_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, int8: OnnxEmbedder) -> None:
    import shutil

    import onnxruntime.quantization

    target = tmp_path / "onnx" / "int8.onnx"
    monkeypatch.setattr(quantize, "int8_path", lambda fp32: target)
    monkeypatch.setattr(onnxruntime.quantization, "quantize_dynamic",  # a quick stand-in
                        lambda source, out, **options: shutil.copy(source, out))
    monkeypatch.setattr(quantize, "MIN_COSINE", 1.01)  # no model passes the check
    with pytest.raises(EmbedderError, match="disagrees"):
        OnnxEmbedder(int8=True).embed(["Basel"])
    assert list(target.parent.rglob("*")) == []
