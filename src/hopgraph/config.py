"""Settings: one home for configuration, read from arguments, then HOPGRAPH_* env, then defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any

DEFAULT_URI = "./hopgraph.db"
DEFAULT_GRAPH = "hopgraph"
DEFAULT_EMBEDDER = "local"
DEFAULT_MEMORY_LIMIT = 500_000


@dataclass
class Settings:
    """Where the graph lives and how text is embedded."""

    uri: str = DEFAULT_URI
    token: str | None = None
    graph: str = DEFAULT_GRAPH
    embedder: str = DEFAULT_EMBEDDER
    embed_base_url: str | None = None
    memory_limit: int = DEFAULT_MEMORY_LIMIT  # mirror vectors in memory up to this many rows

    def __post_init__(self) -> None:
        try:
            self.memory_limit = int(self.memory_limit)
        except ValueError:
            raise ValueError(f"HOPGRAPH_MEMORY_LIMIT / memory_limit must be a whole number of "
                             f"rows, got {self.memory_limit!r}") from None

    @classmethod
    def load(cls, **overrides: Any) -> Settings:
        """Settings from env HOPGRAPH_<FIELD> (e.g. HOPGRAPH_URI), then non-None overrides."""
        values: dict[str, Any] = {}
        for f in fields(cls):
            env = os.environ.get(f"HOPGRAPH_{f.name.upper()}")
            if env:
                values[f.name] = env
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)
