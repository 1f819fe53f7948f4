"""Any sentence-transformers model folder by path (`--embedder PATH`): read from its own
files, named by its weights, run under onnxruntime with torch as the fallback. Tested with
all-MiniLM-L6-v2 through the PATH form (a copy of the packaged folder), not a 400 MB model."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import BERNOULLI, need, run_cli

from hopgraph import GraphRAG
from hopgraph.embed import LocalEmbedder, make_embedder
from hopgraph.embed import onnx as onnx_runtime
from hopgraph.embed.folder import PATH_PREFIX, read_folder
from hopgraph.embed.local import model_dir
from hopgraph.embed.onnx import OnnxEmbedder, pool
from hopgraph.errors import EmbedderError, HopgraphError, UsageError

TEXTS = ["Who taught Euler?", "Daniel Bernoulli wrote Hydrodynamica in Strasbourg.", "x",
         " ".join(["A sentence long enough to be cut at the model's 256-token limit."] * 40)]


def copy_folder(source: Path, target: Path) -> Path:
    """A copy of a model folder (hard links where the file system allows)."""
    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, copy_function=link)
    return target


@pytest.fixture(scope="module")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """all-MiniLM-L6-v2 as a user's model folder: a copy of the packaged one."""
    return copy_folder(model_dir(), tmp_path_factory.mktemp("models") / "MiniLM-copy")


def test_a_folder_is_read_from_its_own_files(minilm: Path) -> None:
    folder = read_folder(minilm)
    assert (folder.dim, folder.max_length, folder.pooling, folder.pad_token) == (
        384, 256, "mean", "[PAD]")
    assert (folder.model_type, folder.heads, folder.hidden) == ("bert", 12, 384)
    assert folder.name == f"{PATH_PREFIX}MiniLM-copy@{folder.fingerprint}"
    assert len(folder.fingerprint) == 16
    assert read_folder(str(minilm) + "/").name == folder.name  # however the path is written


def test_the_name_follows_the_weights_not_the_place(minilm: Path, tmp_path: Path) -> None:
    elsewhere = copy_folder(minilm, tmp_path / "MiniLM-copy")
    assert read_folder(elsewhere).name == read_folder(minilm).name
    changed = tmp_path / "changed" / "MiniLM-copy"
    shutil.copytree(minilm, changed)  # real copies: the weights are edited below
    weights = changed / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    assert read_folder(changed).fingerprint != read_folder(minilm).fingerprint


def test_pooling_and_width_come_from_the_pooling_module(minilm: Path, tmp_path: Path) -> None:
    folder = copy_folder(minilm, tmp_path / "cls-model")
    config = folder / "1_Pooling" / "config.json"
    settings = json.loads(config.read_text())
    config.unlink()  # a hard link: replace it, never write through it
    settings.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    config.write_text(json.dumps(settings))
    assert read_folder(folder).pooling == "cls"
    settings.update(pooling_mode_max_tokens=True)
    config.write_text(json.dumps(settings))
    with pytest.raises(EmbedderError, match="pools by"):
        read_folder(folder)


def test_pool_takes_the_mean_the_first_token_or_the_maximum() -> None:
    hidden = np.array([[[1.0, 0.0], [3.0, 4.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]])  # the third token is padding
    assert pool(hidden, mask, "mean").tolist() == [[2.0, 2.0]]
    assert pool(hidden, mask, "cls").tolist() == [[1.0, 0.0]]
    assert pool(hidden, mask, "max").tolist() == [[3.0, 4.0]]


def test_a_folder_that_is_not_a_model_is_refused_naming_what_is_missing(
        minilm: Path, tmp_path: Path) -> None:
    with pytest.raises(EmbedderError, match="no model folder at"):
        make_embedder(str(tmp_path / "nowhere"))
    broken = copy_folder(minilm, tmp_path / "no-tokenizer")
    (broken / "tokenizer.json").unlink()
    with pytest.raises(EmbedderError, match=r"has no tokenizer\.json"):
        make_embedder(str(broken))
    (tmp_path / "empty").mkdir()
    with pytest.raises(EmbedderError, match=r"has no config\.json"):
        make_embedder(str(tmp_path / "empty"))
    with pytest.raises(UsageError, match="packaged model only"):
        make_embedder(str(minilm), runtime="onnx-int8")
    with pytest.raises(EmbedderError, match="give the path of the folder 'MiniLM-copy' "):
        make_embedder(read_folder(minilm).name)  # a graph's stored name: where is it?


@pytest.mark.slow
def test_a_folder_runs_under_onnx_with_the_torch_models_vectors(
        minilm: Path, local_embedder: LocalEmbedder) -> None:
    """Exported once (keyed by the weights), checked against torch; the packaged model's
    vectors, since these are its weights: under onnxruntime and under torch alike."""
    embedder = make_embedder(str(minilm))
    assert isinstance(embedder, OnnxEmbedder)
    got = embedder.embed(TEXTS)
    assert embedder.runtime == "onnx" and embedder.dim == 384
    assert onnx_runtime.onnx_path(read_folder(minilm)).is_file()
    want = local_embedder.embed(TEXTS)
    assert np.min(np.sum(got * want, axis=1)) >= onnx_runtime.MIN_COSINE
    under_torch = make_embedder(str(minilm), runtime="torch")
    assert isinstance(under_torch, LocalEmbedder) and under_torch.name == embedder.name
    assert np.min(np.sum(under_torch.embed(TEXTS) * want, axis=1)) >= onnx_runtime.MIN_COSINE


@pytest.mark.slow
def test_a_graph_built_with_a_folder_opens_only_with_that_model(
        minilm: Path, tmp_path: Path) -> None:
    """The CLI's `--embedder PATH` (and `GraphRAG(embedder=PATH)`): ingest and query by
    path; the graph stores the folder's name, and `local` (other vectors, as far as the
    graph can tell) is refused."""
    db = str(tmp_path / "folder.db")
    ingested = run_cli("ingest", str(need(BERNOULLI)), "--uri", db, "--embedder", str(minilm))
    assert ingested.code == 0, ingested.stderr
    asked = run_cli("query", "Who taught Euler?", "--uri", db, "--embedder", str(minilm),
                    "--json")
    assert asked.code == 0, asked.stderr
    assert json.loads(asked.stdout)["graph"]
    with GraphRAG(uri=db, embedder=str(minilm)) as rag:
        assert rag.stats()["embedder"] == read_folder(minilm).name
    with pytest.raises(HopgraphError, match="was built with embedder path:MiniLM-copy@"):
        GraphRAG(uri=db, embedder="local")
