"""The int8 variant of the exported model (`HOPGRAPH_EMBED_RUNTIME=onnx-int8`).

onnxruntime's dynamic quantization of the checked fp32 export: the weights of the matrix
products stored as int8 with one scale per output channel, activations quantized per call.
Two choices keep it close to fp32 (cosine to fp32's vectors, mean over MuSiQue questions):
one scale per channel (0.993, against 0.965 with one per tensor), and the six feed-forward
output products left in fp32 (0.996). On MuSiQue the default method's Recall@5 then stays
within half a point of fp32, Recall@2 does not (docs/configuration.md, "int8"), which is
why it is an option and not the default. Made once from the fp32 file, checked against it,
and cached beside it under its own key.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from hopgraph.errors import EmbedderError

log = logging.getLogger(__name__)

QUANT_RECIPE = "dynamic-qint8-per-channel-ffn-out-fp32"  # in the cache key: a new recipe
# re-quantizes. The int8 vectors are not fp32's (hence their own embedder name); below this
# cosine on the check texts the quantization went wrong rather than lost precision (the
# check texts measured well above it: benchmarks/RESULTS.md, "Figures moved from code
# comments").
MIN_COSINE = 0.95
Embed = Callable[[Path, list[str]], np.ndarray]  # a model file's unit vectors for texts


def int8_path(fp32: Path) -> Path:
    """The cached int8 file made from the fp32 file `fp32` (its name carries fp32's key)."""
    digest = hashlib.sha256(f"{QUANT_RECIPE}|{fp32.name}".encode()).hexdigest()[:16]
    return fp32.parent / f"all-MiniLM-L6-v2-int8-{digest}.onnx"


def quantize(fp32: Path, path: Path, embed: Embed, texts: list[str]) -> None:
    """Write the int8 model of `fp32` to `path`, checked against fp32 on `texts` with
    `embed` (onnx.py's own session path, so the check runs the file as queries will)."""
    try:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise EmbedderError("the int8 model needs onnxruntime's quantization tools and onnx",
                            fix="pip install onnx, or set HOPGRAPH_EMBED_RUNTIME=onnx") from exc
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        candidate = Path(tmp) / path.name
        try:
            with _quiet_quantizer():
                # DefaultTensorType: the fused BERT kernels of the fp32 file (SkipLayerNorm,
                # BiasGelu) have no shape inference, so their outputs' type must be given.
                kept = _feed_forward_outputs(onnx.load(str(fp32)))
                if len(kept) != LAYERS:  # else the products meant to stay fp32 would not
                    raise ValueError(f"found {len(kept)} feed-forward output products, "
                                     f"expected {LAYERS}: the export names nodes otherwise")
                quantize_dynamic(str(fp32), str(candidate), weight_type=QuantType.QInt8,
                                 per_channel=True, op_types_to_quantize=["MatMul"],
                                 nodes_to_exclude=kept,
                                 extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        except Exception as exc:  # the quantizer raises many types; all mean "no int8 model"
            raise EmbedderError(f"quantizing {fp32} to int8 failed: {exc}",
                                fix="set HOPGRAPH_EMBED_RUNTIME=onnx (the fp32 model)") from exc
        got, want = embed(candidate, texts), embed(fp32, texts)
        cosine = float(np.min(np.sum(got * want, axis=1)))
        if cosine < MIN_COSINE:
            raise EmbedderError(f"the int8 model of {fp32} disagrees with it (cosine "
                                f"{cosine:.4f} < {MIN_COSINE})",
                                fix="set HOPGRAPH_EMBED_RUNTIME=onnx (the fp32 model)")
        os.replace(candidate, path)  # atomic: a reader never sees half a file
    log.info("quantized the local model to int8 at %s (min cosine to fp32 %.4f)", path, cosine)


LAYERS = 6  # all-MiniLM-L6-v2's transformer layers: one feed-forward output product each


def _feed_forward_outputs(model: object) -> list[str]:
    """The names of the layers' feed-forward output products ("layer.N/output/dense"), whose
    inputs (after GELU) quantize worst; attention's output products are not among them."""
    return [node.name for node in model.graph.node  # type: ignore[attr-defined]
            if node.op_type == "MatMul" and "/output/dense/" in node.name
            and "/attention/" not in node.name]


class _FromQuantizer(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "onnxruntime" not in record.pathname


@contextlib.contextmanager
def _quiet_quantizer() -> Iterator[None]:
    """The quantizer logs advice on the root logger ("consider pre-processing"), which
    would reach a user's terminal; what matters is checked after it, so drop it."""
    root, quiet = logging.getLogger(), _FromQuantizer()
    root.addFilter(quiet)
    try:
        yield
    finally:
        root.removeFilter(quiet)
