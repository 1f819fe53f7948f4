"""A sentence-transformers model folder on disk, as hopgraph runs it.

What a folder says about itself is read from its own files, never assumed: the vector width
and pooling from `1_Pooling/config.json` (through `modules.json`), the longest input from
`sentence_bert_config.json`, the padding token from the tokenizer's config, the
architecture from `config.json`. Its name in a graph is the folder's name and a fingerprint
of its weights (`ModelFolder.name`), so a graph built with one model never opens with
another's vectors, wherever the folder lies.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopgraph.errors import EmbedderError

PATH_PREFIX = "path:"  # stored names of folder models: "path:FOLDER@FINGERPRINT"
WEIGHTS = ("model.safetensors", "pytorch_model.bin")
POOLINGS = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls",
            "pooling_mode_max_tokens": "max"}
_FINGERPRINTS: dict[tuple[str, int, int], str] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class ModelFolder:
    """A sentence-transformers model folder (see the module docstring)."""

    path: Path
    weights: Path
    dim: int
    max_length: int
    pooling: str  # "mean", "cls" or "max"
    pad_token: str
    model_type: str  # config.json's: "bert", "mpnet", ...
    heads: int
    hidden: int

    @property
    def fingerprint(self) -> str:
        """A digest of the weights file's bytes (computed once per file and process)."""
        return fingerprint(self.weights)

    @property
    def name(self) -> str:
        """The name a graph stores: the folder's name and its weights' fingerprint."""
        return f"{PATH_PREFIX}{self.path.name}@{self.fingerprint}"


def fingerprint(weights: Path) -> str:
    """A digest of a weights file's bytes (computed once per file and process)."""
    stat = weights.stat()
    key = (str(weights.resolve()), stat.st_size, stat.st_mtime_ns)
    with _LOCK:
        if key not in _FINGERPRINTS:
            digest = hashlib.blake2b(digest_size=8)
            with weights.open("rb") as data:
                for block in iter(lambda: data.read(1 << 22), b""):
                    digest.update(block)
            _FINGERPRINTS[key] = digest.hexdigest()
        return _FINGERPRINTS[key]


def weights_of(folder: Path) -> Path:
    """A model folder's weights file; EmbedderError when it has none."""
    weights = next((folder / w for w in WEIGHTS if (folder / w).is_file()), None)
    if weights is None:
        raise EmbedderError(f"the model folder {folder} has no weights ({' or '.join(WEIGHTS)})",
                            fix="copy the whole model folder")
    return weights


def _json(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text("utf-8"))
    except FileNotFoundError as exc:
        raise EmbedderError(f"the model folder {path.parent} has no {path.name}",
                            fix="give the folder of a sentence-transformers model (the one "
                                "with config.json, tokenizer.json and the weights)") from exc
    except (OSError, ValueError) as exc:
        raise EmbedderError(f"could not read {path}: {exc}",
                            fix="give the folder of a sentence-transformers model") from exc
    if not isinstance(found, dict | list):
        raise EmbedderError(f"{path} is not a JSON object", fix="check the model folder")
    return found if isinstance(found, dict) else {"modules": found}


def _pooling(path: Path, dim_fallback: int) -> tuple[str, int]:
    """The pooling mode and vector width, from the Pooling module's config (mean pooling of
    the transformer's width when the folder has no modules.json, as sentence-transformers
    does)."""
    modules_file = path / "modules.json"
    if not modules_file.exists():
        return "mean", dim_fallback
    modules = _json(modules_file)["modules"]
    pooling = [m for m in modules if str(m.get("type", "")).endswith("Pooling")]
    if not pooling:
        return "mean", dim_fallback
    config = _json(path / pooling[0].get("path", "1_Pooling") / "config.json")
    modes = [mode for key, mode in POOLINGS.items() if config.get(key)]
    others = [k for k, v in config.items() if k.startswith("pooling_mode") and v
              and k not in POOLINGS]
    if len(modes) != 1 or others:
        raise EmbedderError(f"the model in {path} pools by {modes + others or 'nothing'}; "
                            "hopgraph runs one of mean, cls or max",
                            fix="use a model with one of those pooling modes")
    return modes[0], int(config.get("word_embedding_dimension", dim_fallback))


def read_folder(path: str | Path) -> ModelFolder:
    """The model folder at `path`, described by its own files; EmbedderError naming the
    file that is missing or wrong."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise EmbedderError(f"no model folder at {folder}",
                            fix="give the folder of a sentence-transformers model, or "
                                "'local' / 'openai:MODEL'")
    config = _json(folder / "config.json")
    weights = weights_of(folder)
    if not (folder / "tokenizer.json").is_file():
        raise EmbedderError(f"the model folder {folder} has no tokenizer.json",
                            fix="save the model with a fast tokenizer (tokenizer.json)")
    hidden = int(config.get("hidden_size", 0))
    pooling, dim = _pooling(folder, hidden)
    bert_config = folder / "sentence_bert_config.json"
    limit = int(config.get("max_position_embeddings", 512)) - 2
    if bert_config.exists():
        limit = int(_json(bert_config).get("max_seq_length", limit))
    special = folder / "special_tokens_map.json"
    pad = "[PAD]"
    for source in (folder / "tokenizer_config.json", special):
        if source.exists():
            found = _json(source).get("pad_token")
            if isinstance(found, dict):
                found = found.get("content")
            if isinstance(found, str):
                pad = found
                break
    if not dim or limit <= 0:
        raise EmbedderError(f"{folder / 'config.json'} gives no hidden_size",
                            fix="check the model folder")
    return ModelFolder(folder.resolve(), weights, dim, limit, pooling, pad,
                       str(config.get("model_type", "")), int(config.get(
                           "num_attention_heads", 12)), hidden)
