"""The torch runtime in bfloat16 (`HOPGRAPH_EMBED_RUNTIME=torch-bf16`): the packaged model
or a model folder with its weights cast to bfloat16, for CPUs with bfloat16 instructions
(AVX512-BF16, AMX), where torch's matrix products run several times faster than in fp32.

Only the transformer runs in bfloat16: its last hidden state is cast back to fp32 before the
model's own pooling and the unit length, so the vectors stay close to fp32's (their cosine
is in benchmarks/RESULTS.md, "bfloat16"). Close is not equal: the vectors are their own,
stored under their own name (the fp32 name and "-bf16"), so a graph built with them opens
only with them, as with int8. On a CPU without bfloat16 instructions torch emulates them,
slower than fp32: it runs, with a warning.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from hopgraph.config import offline_model_hub
from hopgraph.embed.base import unit
from hopgraph.embed.local import LOCAL_NAME, model_dir

if TYPE_CHECKING:
    from hopgraph.embed.folder import ModelFolder

log = logging.getLogger(__name__)

SUFFIX = "-bf16"  # after the fp32 model's stored name
BF16_NAME = f"{LOCAL_NAME}{SUFFIX}"  # the packaged model's
_BATCH = 32


def has_bf16() -> bool:
    """Whether this CPU has bfloat16 instructions torch uses (AVX512-BF16 or AMX)."""
    import torch

    cpu: Any = torch.cpu
    return bool(cpu._is_avx512_bf16_supported() or cpu._is_amx_tile_supported())


@lru_cache(maxsize=2)
def _model(path: str) -> Any:
    """The SentenceTransformer at `path` with its weights in bfloat16, once per process."""
    offline_model_hub()
    import torch
    from sentence_transformers import SentenceTransformer
    from threadpoolctl import threadpool_limits

    if not has_bf16():
        log.warning("this CPU has no bfloat16 instructions: HOPGRAPH_EMBED_RUNTIME=torch-bf16 "
                    "runs slower than fp32 here (set it to onnx or auto)")
    model = SentenceTransformer(path, device="cpu", local_files_only=True)
    model.to(torch.bfloat16)
    threadpool_limits(limits=1, user_api="blas")  # as local.py does, for the same reason
    log.info("loaded %s in bfloat16", path)
    return model


class Bf16Embedder:
    """The packaged all-MiniLM-L6-v2, or the model folder `folder`, under torch with its
    transformer in bfloat16 (see the module docstring)."""

    runtime = "torch-bf16"

    def __init__(self, folder: ModelFolder | None = None) -> None:
        self.folder = folder
        self.name = BF16_NAME if folder is None else f"{folder.name}{SUFFIX}"
        self.pooling = "mean" if folder is None else folder.pooling

    @property
    def dim(self) -> int:
        """The model's vector width (all-MiniLM-L6-v2: 384)."""
        return 384 if self.folder is None else self.folder.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length fp32 vectors for `texts`, batched by length as sentence-transformers
        batches them."""
        import torch

        from hopgraph.embed.onnx import pool

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        model = _model(str(model_dir() if self.folder is None else self.folder.path))
        transformer = model[0].auto_model
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(texts), _BATCH):
            chosen = order[start:start + _BATCH]
            batch = model.tokenizer([texts[i] for i in chosen], padding=True, truncation=True,
                                    max_length=model.max_seq_length, return_tensors="pt")
            with torch.inference_mode():
                hidden = transformer(input_ids=batch["input_ids"],
                                     attention_mask=batch["attention_mask"]).last_hidden_state
            out[chosen] = pool(hidden.float().numpy(), batch["attention_mask"].numpy(),
                               self.pooling)
        return unit(out)
