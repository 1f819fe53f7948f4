"""The local model under onnxruntime: exported once, checked against torch, then torch-free."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hopgraph.embed import LocalEmbedder, make_embedder
from hopgraph.embed import onnx as onnx_runtime
from hopgraph.embed.onnx import OnnxEmbedder, onnx_path
from hopgraph.errors import EmbedderError, UsageError

TEXTS = ["Who taught Euler?", "爱因斯坦 was born in Ulm.", "x", "",
         " ".join(["A sentence long enough to be cut at the model's 256-token limit."] * 40)]


@pytest.fixture(scope="module")
def onnx_embedder() -> OnnxEmbedder:
    embedder = OnnxEmbedder(fallback=False)
    embedder.embed(["export now"])  # exports into HOPGRAPH_CACHE_DIR once per test run
    return embedder


@pytest.mark.slow
def test_onnx_vectors_match_torch(onnx_embedder: OnnxEmbedder,
                                  local_embedder: LocalEmbedder) -> None:
    assert onnx_path().is_file() and onnx_embedder.runtime == "onnx"
    many = TEXTS + [f"passage number {i} about {'Basel ' * (i % 7)}" for i in range(150)]
    got = onnx_embedder.embed(many)  # more than one batch, sorted by length inside
    want = local_embedder.model.encode(many, normalize_embeddings=True, convert_to_numpy=True)
    assert got.shape == (len(many), 384) and got.dtype == np.float32
    assert np.min(np.sum(got * want, axis=1)) >= onnx_runtime.MIN_COSINE
    assert onnx_embedder.name == local_embedder.name  # one vector space: graphs interchange


def test_a_new_process_embeds_without_importing_torch(onnx_embedder: OnnxEmbedder) -> None:
    code = ("import sys; from hopgraph.embed import make_embedder; "
            "e = make_embedder('local'); v = e.embed(['Who taught Euler?']); "
            "print(v.shape, type(e).__name__, 'torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["(1,", "384)", "OnnxEmbedder", "False"]


def test_a_failed_export_falls_back_to_torch_or_raises(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from hopgraph.embed import local

    def broken(path: Path, folder: object = None) -> None:
        raise EmbedderError("exporting the local model to ONNX failed: no onnx here")

    monkeypatch.setenv("HOPGRAPH_CACHE_DIR", str(tmp_path))  # nothing exported there yet
    monkeypatch.setattr(local, "export_onnx", broken)
    auto = make_embedder("local", runtime="auto")
    assert auto.embed(["Basel"]).shape == (1, 384) and auto.runtime == "torch"
    with pytest.raises(EmbedderError, match="no onnx here"):
        make_embedder("local", runtime="onnx").embed(["Basel"])
    assert not any(tmp_path.rglob("*.onnx"))


def test_runtime_choice() -> None:
    assert isinstance(make_embedder("local", runtime="torch"), LocalEmbedder)
    assert isinstance(make_embedder("local"), OnnxEmbedder)
    int8 = make_embedder("local", runtime="onnx-int8")
    assert isinstance(int8, OnnxEmbedder) and int8.int8 and int8.name.endswith("-int8")
    named = make_embedder(int8.name)  # the name stored with a graph opens it again
    assert isinstance(named, OnnxEmbedder) and named.int8 and named.name == int8.name
    with pytest.raises(UsageError, match="runs only under onnx-int8"):
        make_embedder(int8.name, runtime="torch")
    with pytest.raises(UsageError, match="unknown embedding runtime 'gpu'") as bad:
        make_embedder("local", runtime="gpu")
    assert "onnx-int8" in str(bad.value)


@pytest.mark.slow
def test_concurrent_calls_give_the_vectors_of_serial_ones(onnx_embedder: OnnxEmbedder) -> None:
    from concurrent.futures import ThreadPoolExecutor

    texts = [f"Who taught the student number {i} in Basel?" for i in range(32)]
    alone = [onnx_embedder.embed([text]) for text in texts]
    with ThreadPoolExecutor(16) as pool:  # as a server's request threads call it
        together = list(pool.map(lambda text: onnx_embedder.embed([text]), texts))
    assert all(np.allclose(a, b, atol=1e-6) for a, b in zip(alone, together, strict=True))
    # The session's idle workers sleep instead of spinning (the CPU goes to other requests).
    options = onnx_embedder._load().get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_batches_by_tokens_give_the_vectors_of_single_texts(onnx_embedder: OnnxEmbedder) -> None:
    """Texts are cut into model calls by count and padded tokens (long ones in small calls,
    each padded to its longest text): a text's vector does not depend on its batch."""
    texts = TEXTS + [" ".join(["Basel"] * n) for n in range(1, 300, 7)]
    together = onnx_embedder.embed(texts)
    alone = np.vstack([onnx_embedder.embed([text]) for text in texts])
    assert np.allclose(together, alone, atol=1e-5)
    lengths = [3, 3, 5, 40, 200, 900]
    cuts = onnx_runtime._batches(list(range(len(lengths))), lengths)
    assert [i for batch in cuts for i in batch] == list(range(len(lengths)))
    assert all(len(batch) * lengths[batch[-1]] <= onnx_runtime._TOKENS or len(batch) == 1
               for batch in cuts)
    assert cuts[-1] == [5]  # longer than the budget: alone
