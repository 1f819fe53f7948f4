"""A local cross-encoder: a sentence-transformers CrossEncoder folder on disk, under torch on
the CPU, scoring (question, passage) pairs for the rerank stage (`retrieve.rerank`). Never
online; torch and sentence-transformers are imported when the first pair is scored."""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from hopgraph.config import offline_model_hub
from hopgraph.embed.folder import PATH_PREFIX, fingerprint, weights_of
from hopgraph.errors import EmbedderError

log = logging.getLogger(__name__)


@lru_cache(maxsize=2)
def _model(path: str) -> Any:
    """The folder's CrossEncoder, loaded once per process."""
    offline_model_hub()
    from sentence_transformers import CrossEncoder
    from threadpoolctl import threadpool_limits

    model = CrossEncoder(path, device="cpu", local_files_only=True)
    threadpool_limits(limits=1, user_api="blas")  # as for the embedding models
    log.info("loaded the cross-encoder %s", path)
    return model


class CrossEncoderReranker:
    """Scores pairs with the cross-encoder in the folder `path` (one output per pair: the
    relevance logit), `batch` pairs at a time. Its name is the folder's and its weights'
    fingerprint, as an embedder folder's is."""

    def __init__(self, path: str | Path, batch: int = 32) -> None:
        folder = Path(path).expanduser()
        if not (folder / "config.json").is_file():
            raise EmbedderError(f"no cross-encoder folder at {folder} (no config.json)",
                                fix="give the folder of a sentence-transformers CrossEncoder, "
                                    "or the URL of a /rerank endpoint (HOPGRAPH_RERANK)")
        self.path = folder.resolve()
        self.batch = batch
        self.name = f"{PATH_PREFIX}{folder.name}@{fingerprint(weights_of(folder))}"

    def score(self, query: str, texts: list[str]) -> list[float]:
        """One relevance score per text (higher: more relevant), in the texts' order."""
        if not texts:
            return []
        scores = np.asarray(_model(str(self.path)).predict(
            [(query, text) for text in texts], batch_size=self.batch,
            show_progress_bar=False, convert_to_numpy=True), dtype=np.float64)
        if scores.ndim != 1:
            raise EmbedderError(f"the cross-encoder {self.path} gives {scores.shape[-1]} "
                                "scores per pair; the rerank stage reads one",
                                fix="use a cross-encoder with one output (a relevance score)")
        return [float(s) for s in scores]
