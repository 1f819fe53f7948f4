"""Settings: one home for configuration, read from arguments, then the environment, then defaults.

`Settings` says where the graph lives and how text is embedded (HOPGRAPH_URI, ...);
`LLMSettings` says which chat model to call (HOPGRAPH_LLM_MODEL, ...). Both are read by the
same loader, `from_env`, and documented in docs/configuration.md.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from hopgraph.errors import UsageError

DEFAULT_URI = "./hopgraph.db"
DEFAULT_GRAPH = "hopgraph"
DEFAULT_EMBEDDER = "local"
DEFAULT_MEMORY_LIMIT = 500_000  # rows per collection mirrored by default with a server
DEFAULT_LLM_CACHE = ".hopgraph-cache/llm.sqlite"
DEFAULT_EMBED_TIMEOUT, DEFAULT_EMBED_BATCH, DEFAULT_EMBED_RETRIES = 60.0, 256, 3
_CACHE_OFF = ("", "off", "none", "0", "false")
_S = TypeVar("_S")


def mirror_rows(memory_limit: int | None, is_local: bool) -> int:
    """Rows per collection up to which searches run on the in-process mirror: the memory
    limit, or when it is None any size on Milvus Lite and DEFAULT_MEMORY_LIMIT on a server
    (0: always in Milvus; see `retrieve.search.make_searcher`)."""
    if memory_limit is None:
        return sys.maxsize if is_local else DEFAULT_MEMORY_LIMIT
    return memory_limit


def mirror_cap(memory_limit: int | None, is_local: bool) -> int | None:
    """Rows a kind's vectors kept in a process's heap may reach: a server graph's, whose
    searches past the memory limit run in Milvus (`store.vectors.GraphVectors`); None on
    Milvus Lite, whose vectors are memory-mapped files."""
    return None if is_local else mirror_rows(memory_limit, False)


def quiet_grpc() -> None:
    """Milvus Lite's embedded server throttles the client's keepalive pings and gRPC's C core
    prints each "GOAWAY too_many_pings" to stderr (the client reconnects by itself; errors
    that matter still arrive as exceptions). gRPC reads this once, when it loads: `store`
    calls it before importing pymilvus. A user's own setting wins."""
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")


def lite_memory_budget() -> None:
    """Milvus Lite keeps each collection's newest rows in memory until they pass a budget
    (its default: 128 MB per collection), then writes them out, copying them once more. A
    bulk load fills three collections at once, so that budget and its copies were a large
    part of an ingest's peak memory (benchmarks/RESULTS.md, "Ingest memory"): hopgraph
    asks for 16 MB. Milvus Lite reads it once, when it loads: `store` calls this before
    importing it. A user's own setting wins."""
    os.environ.setdefault("MILVUS_LITE_MEMTABLE_MEMORY_LIMIT_BYTES", str(LITE_MEMTABLE_BYTES))


def offline_model_hub() -> None:
    """The local model ships inside its package: never let the Hugging Face hub client go
    online or draw progress bars (called just before the model loads; a user's own setting
    wins)."""
    for name, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"),
                        ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
                        ("TRANSFORMERS_VERBOSITY", "error")):
        os.environ.setdefault(name, value)


def demo_data_override() -> Path | None:
    """$HOPGRAPH_DEMO_DATA: the demo's data file, when set."""
    value = os.environ.get("HOPGRAPH_DEMO_DATA")
    return Path(value) if value else None


def openai_api_key() -> str | None:
    """The key for OpenAI-compatible endpoints built without one (OPENAI_API_KEY)."""
    return os.environ.get("OPENAI_API_KEY") or None


DEFAULT_LEASE_SECONDS = 30.0  # a writer's claim lives this long unless renewed
DEFAULT_LEASE_WAIT = 600.0  # how long a writer waits for another one's lease, at most


def cache_dir() -> Path:
    """hopgraph's cache (exported models, snapshots of server graphs): $HOPGRAPH_CACHE_DIR,
    else $XDG_CACHE_HOME/hopgraph, else ~/.cache/hopgraph."""
    explicit = os.environ.get("HOPGRAPH_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "hopgraph"


NAME_SOURCES = ("rules", "spacy", "both")  # where the offline extractor's names come from
LITE_MEMTABLE_BYTES = 16 * 2**20  # Milvus Lite's budget for a collection's newest rows
DEFAULT_ANN_MIN_ROWS = 200_000  # rows of one kind from which it gets an ANN index
DEFAULT_FANOUT = 2_000  # relations of one entity followed per graph step
DEFAULT_RERANK_TOP_N = 20  # candidates a reranker orders per query
DEFAULT_RERANK_TIMEOUT = 30.0  # seconds per rerank request
DEFAULT_RERANK_BATCH = 32  # passages per rerank request (or local batch)


def from_env(cls: type[_S], env_names: Mapping[str, str], overrides: Mapping[str, Any],
             keep_empty: tuple[str, ...] = ()) -> _S:
    """`cls` built from the set environment variables, then the non-None `overrides`.

    `env_names` maps a field name to its variable; an empty variable counts as unset unless
    its field is in `keep_empty` (where empty means something, e.g. "no cache").
    """
    values: dict[str, Any] = {}
    for name, variable in env_names.items():
        raw = os.environ.get(variable)
        if raw or (raw is not None and name in keep_empty):
            values[name] = raw
    values.update({k: v for k, v in overrides.items() if v is not None})
    return cls(**values)


def as_number(value: Any, kind: Callable[[Any], Any], setting: str, unit: str) -> Any:
    """`value` converted by `kind` (int or float), or a UsageError naming the setting."""
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise UsageError(f"{setting} must be {unit}, got {value!r}") from None


def _whole_number(value: Any, setting: str, what: str) -> int:
    """`value` as a whole number >= 0 (0: off); a bad value is a UsageError naming `setting`."""
    try:
        return max(int(str(value).strip()), 0)
    except ValueError:
        raise UsageError(f"{setting}={value!r} is not a whole number",
                         fix=f"set {setting} to a number of {what} (0 turns it off)") from None


def embed_limits(timeout: Any, batch: Any, retries: Any) -> tuple[float, int, int]:
    """An embeddings endpoint's (seconds per request, texts per request, retries), checked."""
    seconds = as_number(timeout, float, "HOPGRAPH_EMBED_TIMEOUT", "a number of seconds")
    texts = as_number(batch, int, "HOPGRAPH_EMBED_BATCH", "a whole number of texts")
    again = as_number(retries, int, "HOPGRAPH_EMBED_RETRIES", "a whole number")
    for wrong, name, need, value in (
            (not 0 < seconds < float("inf"), "TIMEOUT", "finite and above 0", seconds),
            (texts < 1, "BATCH", "at least 1", texts), (again < 0, "RETRIES", "0 or more", again)):
        if wrong:
            raise UsageError(f"HOPGRAPH_EMBED_{name} (--embed-{name.lower()}) must be {need}, "
                             f"got {value:g}")
    return seconds, texts, again


@dataclass
class Settings:
    """Where the graph lives and how text is embedded."""

    uri: str = DEFAULT_URI
    token: str | None = None
    graph: str = DEFAULT_GRAPH
    embedder: str = DEFAULT_EMBEDDER
    embed_base_url: str | None = None
    # for an "openai:MODEL" embedder (OPENAI_API_KEY); kept out of repr so logs never show it
    embed_api_key: str | None = field(default=None, repr=False)
    embed_runtime: str = "auto"  # the local model under onnxruntime or torch (auto: onnx)
    # Search a mirror of the vectors in this process up to this many rows per collection
    # (0: always search in Milvus); None: any size on Milvus Lite, DEFAULT_MEMORY_LIMIT on a
    # server (see retrieve.search.make_searcher).
    memory_limit: int | None = None
    embed_timeout: float = DEFAULT_EMBED_TIMEOUT  # an openai:MODEL endpoint's, per reply
    embed_batch: int = DEFAULT_EMBED_BATCH  # texts per request
    embed_retries: int = DEFAULT_EMBED_RETRIES  # again after a 429, a 5xx, a lost connection
    # Relations of one entity followed per graph step (retrieve.fanout); 0: no cap.
    fanout: int = DEFAULT_FANOUT
    # Rows of one kind of vectors from which it gets a nearest-neighbour index (store.ann);
    # 0: none, every search exact.
    ann_min_rows: int = DEFAULT_ANN_MIN_ROWS
    lease_seconds: float = DEFAULT_LEASE_SECONDS  # a writer's lease lives this long unrenewed
    lease_wait: float = DEFAULT_LEASE_WAIT  # a writer waits this long for the lease, at most
    # Where the offline extractor's names come from: "rules", "spacy" or "both"
    # (`mentions.Rules.names`, docs/extraction.md).
    names: str = "rules"
    # A rerank stage after retrieval (docs/configuration.md, "Reranking"): None, off; else a
    # cross-encoder folder's path or the URL of a /rerank endpoint (`retrieve.rerank`).
    rerank: str | None = None
    rerank_model: str | None = None  # the model an endpoint is asked for
    rerank_api_key: str | None = field(default=None, repr=False)  # an endpoint's key
    rerank_top_n: int = DEFAULT_RERANK_TOP_N  # candidates the reranker orders per query
    rerank_timeout: float = DEFAULT_RERANK_TIMEOUT  # seconds per request or batch
    rerank_batch: int = DEFAULT_RERANK_BATCH  # pairs per request or batch

    def __post_init__(self) -> None:
        self.embed_timeout, self.embed_batch, self.embed_retries = embed_limits(
            self.embed_timeout, self.embed_batch, self.embed_retries)
        self.fanout = _whole_number(self.fanout, "HOPGRAPH_FANOUT", "relations")
        self.ann_min_rows = _whole_number(self.ann_min_rows, "HOPGRAPH_ANN_MIN_ROWS", "rows")
        self.lease_seconds = as_number(self.lease_seconds, float, "HOPGRAPH_LEASE_SECONDS",
                                       "a number of seconds")
        self.lease_wait = as_number(self.lease_wait, float, "HOPGRAPH_LEASE_WAIT",
                                    "a number of seconds")
        if not 1 <= self.lease_seconds < float("inf") or not 0 <= self.lease_wait < float("inf"):
            raise UsageError("HOPGRAPH_LEASE_SECONDS must be at least 1 and HOPGRAPH_LEASE_WAIT "
                             "not negative")
        self.names = str(self.names).strip().lower() or "rules"
        if self.names not in NAME_SOURCES:
            raise UsageError(f"HOPGRAPH_NAMES must be one of {', '.join(NAME_SOURCES)}, got "
                             f"{self.names!r}")
        self.rerank = (str(self.rerank).strip() or None) if self.rerank is not None else None
        self.rerank_top_n = as_number(self.rerank_top_n, int, "HOPGRAPH_RERANK_TOP_N",
                                      "a whole number of passages")
        self.rerank_timeout = as_number(self.rerank_timeout, float, "HOPGRAPH_RERANK_TIMEOUT",
                                        "a number of seconds")
        self.rerank_batch = as_number(self.rerank_batch, int, "HOPGRAPH_RERANK_BATCH",
                                      "a whole number of passages")
        if not (1 <= self.rerank_top_n <= 1000 and 0 < self.rerank_timeout < float("inf")
                and self.rerank_batch >= 1):
            raise UsageError("HOPGRAPH_RERANK_TOP_N must be 1-1000, HOPGRAPH_RERANK_TIMEOUT "
                             "above 0 and HOPGRAPH_RERANK_BATCH at least 1, got "
                             f"{self.rerank_top_n}, {self.rerank_timeout:g}, "
                             f"{self.rerank_batch}")
        if self.memory_limit is not None:
            self.memory_limit = as_number(self.memory_limit, int,
                                          "HOPGRAPH_MEMORY_LIMIT / memory_limit",
                                          "a whole number of rows")

    @classmethod
    def load(cls, **overrides: Any) -> Settings:
        """Settings from env HOPGRAPH_<FIELD> (e.g. HOPGRAPH_URI; the embedding key from
        OPENAI_API_KEY), then non-None overrides."""
        env = {f.name: f"HOPGRAPH_{f.name.upper()}" for f in fields(cls)}
        env["embed_api_key"] = "OPENAI_API_KEY"
        return from_env(cls, env, overrides)


DEFAULT_MAX_BODY_MB = 10.0
# Answers kept per graph version; an answer is small (a MuSiQue answer's size:
# benchmarks/RESULTS.md, "Figures moved from code comments").
DEFAULT_ANSWER_CACHE = 1024
DEFAULT_MAX_GRAPHS = 8  # graphs a server keeps open (each holds its graph and vectors)
DEFAULT_MAX_FILE_MB = 50.0  # per uploaded file (POST /uploads)
DEFAULT_MAX_FILES = 20  # per upload
DEFAULT_MAX_JOBS = 8  # upload jobs queued or running in one server process
DEFAULT_WRITE_WAIT = 30.0  # seconds a write request waits behind another write of its graph


@dataclass
class ServeSettings:
    """How `hopgraph serve` guards itself and what it keeps: the API key
    (HOPGRAPH_API_KEY), allowed CORS origins (HOPGRAPH_CORS_ORIGINS, comma-separated), the
    Host names it answers to (HOPGRAPH_ALLOWED_HOSTS, comma-separated; empty: any, which
    `hopgraph serve` never leaves it at), the largest request body, and how many answers it
    caches per graph version (`cache_size`: the CLI hands it to `GraphService(...,
    cache_size=)`), how many graphs it keeps open (HOPGRAPH_MAX_GRAPHS), and the limits of
    uploads: MB per file, files per upload, jobs queued or running (HOPGRAPH_MAX_FILE_MB,
    HOPGRAPH_MAX_FILES, HOPGRAPH_MAX_JOBS), and how long a write request waits behind
    another write of its graph (HOPGRAPH_WRITE_WAIT, seconds); `create_app` reads the
    others."""

    api_key: str | None = field(default=None, repr=False)
    cors_origins: list[str] = field(default_factory=list)
    allowed_hosts: list[str] = field(default_factory=list)
    log_json: bool = False  # the access log as one JSON object per line
    max_body_bytes: int = int(DEFAULT_MAX_BODY_MB * 1024 * 1024)
    cache_size: int = DEFAULT_ANSWER_CACHE
    max_graphs: int = DEFAULT_MAX_GRAPHS  # open at once (least recently used closed first)
    max_file_mb: float = DEFAULT_MAX_FILE_MB
    max_files: int = DEFAULT_MAX_FILES
    max_jobs: int = DEFAULT_MAX_JOBS
    write_wait: float = DEFAULT_WRITE_WAIT

    def __post_init__(self) -> None:
        for name, kind, unit in (("max_file_mb", float, "a number of MB"),
                                 ("max_files", int, "a whole number"),
                                 ("max_jobs", int, "a whole number")):
            value = as_number(getattr(self, name), kind, f"HOPGRAPH_{name.upper()}", unit)
            if value <= 0:
                raise UsageError(f"HOPGRAPH_{name.upper()} (--{name.replace('_', '-')}) must "
                                 f"be positive, got {value}")
            setattr(self, name, value)
        self.write_wait = as_number(self.write_wait, float, "HOPGRAPH_WRITE_WAIT", "seconds")
        if not 0 <= self.write_wait < 1e6:
            raise UsageError(f"HOPGRAPH_WRITE_WAIT (--write-wait) is seconds, 0 or more, got "
                             f"{self.write_wait}")

    @property
    def max_file_bytes(self) -> int:
        """The largest uploaded file, in bytes."""
        return int(self.max_file_mb * 1024 * 1024)

    @classmethod
    def load(cls, **overrides: Any) -> ServeSettings:
        """Settings from the environment, then non-None overrides."""
        env = {"api_key": "HOPGRAPH_API_KEY", "cors_origins": "HOPGRAPH_CORS_ORIGINS",
               "allowed_hosts": "HOPGRAPH_ALLOWED_HOSTS", "max_graphs": "HOPGRAPH_MAX_GRAPHS",
               **{name: f"HOPGRAPH_{name.upper()}"
                  for name in ("max_file_mb", "max_files", "max_jobs", "write_wait")}}
        settings = from_env(cls, env, overrides)
        for name in ("cors_origins", "allowed_hosts"):
            value = getattr(settings, name)
            if isinstance(value, str):
                setattr(settings, name, [v.strip() for v in value.split(",") if v.strip()])
        settings.max_graphs = as_number(settings.max_graphs, int, "HOPGRAPH_MAX_GRAPHS",
                                        "a whole number")
        if settings.max_graphs < 1:
            raise UsageError(f"the server keeps at least one graph open, not "
                             f"{settings.max_graphs} (--max-graphs / HOPGRAPH_MAX_GRAPHS)")
        return settings


_LLM_ENV = {"model": "HOPGRAPH_LLM_MODEL", "base_url": "HOPGRAPH_LLM_BASE_URL",
            "api_key": "OPENAI_API_KEY", "timeout": "HOPGRAPH_LLM_TIMEOUT",
            "cache_path": "HOPGRAPH_LLM_CACHE"}


@dataclass
class LLMSettings:
    """Which chat model to call, where, and how patiently."""

    model: str | None = None
    base_url: str | None = None  # None: the SDK's default (api.openai.com)
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0  # seconds per HTTP request (per read, when streaming)
    max_retries: int = 4  # extra attempts after the first, on 429 / 5xx / timeouts
    concurrency: int = 4  # parallel requests in complete_many
    cache_path: str | None = DEFAULT_LLM_CACHE  # None (or "off") disables the cache
    temperature: float = 0.0
    retry_base_delay: float = 0.5  # first backoff; doubles per attempt, plus jitter
    retry_max_delay: float = 30.0

    def __post_init__(self) -> None:
        self.timeout = as_number(self.timeout, float, "HOPGRAPH_LLM_TIMEOUT / timeout",
                                 "a number of seconds")
        self.max_retries = as_number(self.max_retries, int, "max_retries", "a whole number")
        self.concurrency = max(1, as_number(self.concurrency, int, "concurrency",
                                            "a whole number"))
        if self.cache_path is not None and str(self.cache_path).strip().lower() in _CACHE_OFF:
            self.cache_path = None

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMSettings:
        """Settings from HOPGRAPH_LLM_{MODEL,BASE_URL,TIMEOUT,CACHE}, OPENAI_API_KEY, overrides."""
        return from_env(cls, _LLM_ENV, overrides, keep_empty=("cache_path",))

    @property
    def configured(self) -> bool:
        """True when a model is set, i.e. the LLM path can be used."""
        return bool(self.model)


# What to tell a user who needs an LLM and has none configured (CLI and server).
NO_LLM_HELP = (
    "An LLM is needed to write the answer, and none is configured. Point hopgraph at any "
    "OpenAI-compatible server:\n"
    "  OpenAI:  export OPENAI_API_KEY=sk-...; export HOPGRAPH_LLM_MODEL=gpt-4o-mini\n"
    "  Ollama:  export HOPGRAPH_LLM_MODEL=llama3.1 "
    "HOPGRAPH_LLM_BASE_URL=http://localhost:11434/v1\n"
    "  or pass --llm MODEL [--llm-base-url URL]. The retrieved evidence is shown above."
)
