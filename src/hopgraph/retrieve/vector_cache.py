"""Relation vectors fetched from Milvus, kept for the next questions (searches in Milvus).

When a graph is searched in Milvus and its relation vectors are not in this process (a
server process that did not write them), the default method's graph steps score known
relations from vectors fetched by id: thousands per question at a hub, ~40 us and 1.5 KB
each. The same hubs come back question after question, so the vectors
are kept, least recently used first out, up to `MAX_VECTORS`.

When a question needs many relations not held here (`search.SCORED_THERE`), those wanted
for the first time are scored by Milvus itself (`search.MilvusSearcher.score_relations`),
and a vector is fetched and kept the second time (`admit`; fewer, and the ids a filtered
search leaves out, are fetched and kept at once). A question that meets new hubs pays ~3x
less (measured at 1M relations on a 2.3 server: 8,000 relations scored in ~85 ms by a
filtered search against ~300 ms fetching their vectors), and the relations that keep
coming back are soon scored here.

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
MAX_SEEN = 1_000_000  # ids wanted once (the set: 32 MB at 1M, measured); all forgotten past it


class VectorCache:
    """Vectors by relation id, least recently used evicted first (thread-safe)."""

    def __init__(self, limit: int = MAX_VECTORS) -> None:
        self.limit = limit
        self._rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._seen: set[str] = set()  # wanted once, not kept (yet)

    def __len__(self) -> int:
        return len(self._rows)

    def admit(self, ids: Sequence[str]) -> list[str]:
        """Of ids not held here, those wanted before (to fetch and keep); the others are
        remembered as wanted once."""
        with self._lock:
            again = [rid for rid in ids if rid in self._seen]
            if len(self._seen) + len(ids) > MAX_SEEN:
                self._seen.clear()
            self._seen.update(ids)
            self._seen.difference_update(again)
        return again

    def cached(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors of `ids` held here (no fetch)."""
        return self.get(ids, lambda missing: {})

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
