"""Relation vectors fetched from Milvus, kept for the next questions (searches in Milvus).

When a graph is searched in Milvus and its relation vectors are not in this process (a
server process that did not write them), the default method's graph steps score known
relations from vectors fetched by id: thousands per question at a hub, each converted from
the client's Python floats. The same hubs come back question after question, so the vectors
are kept, least recently used first out, up to `MAX_VECTORS`.

Keyed by relation id: a relation's id names its text, and its vector is the embedder's
vector of that text, so an entry stays true across writes, removals and other processes'
changes (only the embedder could change it, and a graph keeps one embedder).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

MAX_VECTORS = 200_000  # ~300 MB of 384-dimensional float32 vectors


class VectorCache:
    """Vectors by relation id, least recently used evicted first (thread-safe)."""

    def __init__(self, limit: int = MAX_VECTORS) -> None:
        self.limit = limit
        self._rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, ids: Sequence[str], fetch: Callable[[list[str]], dict[str, np.ndarray]]
            ) -> dict[str, np.ndarray]:
        """The vectors of `ids` that exist: cached ones, and the others from `fetch`."""
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for rid in ids:
                vector = self._rows.get(rid)
                if vector is not None:
                    self._rows.move_to_end(rid)
                    found[rid] = vector
        missing = [rid for rid in ids if rid not in found]
        if missing:
            fetched = fetch(missing)
            found.update(fetched)
            with self._lock:
                self._rows.update(fetched)
                while len(self._rows) > self.limit:
                    self._rows.popitem(last=False)
        return found
