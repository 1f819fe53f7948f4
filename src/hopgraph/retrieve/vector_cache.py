"""Relation vectors fetched from Milvus, kept for the next questions (searches in Milvus).

When a graph is searched in Milvus and its relation vectors are not in this process (a
server process that did not write them), the default method's graph steps score known
relations from vectors fetched by id: thousands per question at a hub, 1.5 KB each and a
time that adds up (benchmarks/RESULTS.md, "1M relations on Milvus Lite, before and after
issue 23", "Vectors as float32 arrays"). The same hubs come back question after question,
so the vectors are kept, least recently used first out, up to `MAX_VECTORS`.

When a question needs many relations not held here (`search.SCORED_THERE`), those wanted
for the first time are scored by Milvus itself (`search.MilvusSearcher.score_relations`),
and a vector is fetched and kept the second time (`admit`; fewer, and the ids a filtered
search leaves out, are fetched and kept at once). A question that meets new hubs pays far
less (at 1M relations on a 2.3 server a filtered search scored relations much faster than
their vectors were fetched: the same section, "Relations scored by Milvus"), and the
relations that keep coming back are soon scored here.

Keyed by relation id: a relation's id names its text, and its vector is the embedder's
vector of that text, so an entry stays true across writes, removals and other processes'
changes (only the embedder could change it, and a graph keeps one embedder).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

MAX_VECTORS = 200_000  # ~300 MB of 384-dimensional float32 vectors (twice, while growing)
_FREE = np.iinfo(np.int64).max  # the tick of a free row: never the least recently wanted
# Ids wanted once, all forgotten past MAX_SEEN (the set's memory at 1M ids:
# benchmarks/RESULTS.md, "Figures moved from code comments").
MAX_SEEN = 1_000_000


class VectorCache:
    """Vectors by relation id, least recently used evicted first (thread-safe). Held in one
    array (a row per vector, with its norm), so a question's thousands of relations are
    gathered and scored in a few array operations (`gather`), not one Python object each."""

    def __init__(self, limit: int = MAX_VECTORS) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._seen: set[str] = set()  # wanted once, not kept (yet)
        self._slot: dict[str, int] = {}  # id -> its row in `_slab`
        self._ids: list[str | None] = []  # row -> id (None: free)
        self._free: list[int] = []
        self._slab = np.zeros((0, 0), dtype=np.float32)
        self._norms = np.zeros(0, dtype=np.float32)
        self._used = np.zeros(0, dtype=np.int64)  # row -> the tick it was last wanted at
        self._tick = 0

    def __len__(self) -> int:
        return len(self._slot)

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

    def gather(self, ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Which of `ids` are held (a mask over them), and the held ones' vectors and norms,
        in the order of `ids` (copies; shaped (0, 0) and (0,) before anything was kept)."""
        with self._lock:
            slots = np.fromiter((self._slot.get(rid, -1) for rid in ids), dtype=np.int64,
                                count=len(ids))
            held = slots >= 0
            rows = slots[held]
            self._tick += 1
            self._used[rows] = self._tick
            return held, self._slab[rows], self._norms[rows]

    def cached(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors of `ids` held here (no fetch)."""
        held, vectors, _ = self.gather(ids)
        return dict(zip([rid for rid, h in zip(ids, held.tolist(), strict=True) if h],
                        vectors, strict=True))

    def get(self, ids: Sequence[str], fetch: Callable[[list[str]], dict[str, np.ndarray]]
            ) -> dict[str, np.ndarray]:
        """The vectors of `ids` that exist: cached ones, and the others from `fetch`."""
        found = self.cached(ids)
        missing = [rid for rid in ids if rid not in found]
        if missing:
            fetched = fetch(missing)
            found.update(fetched)
            self.keep(fetched)
        return found

    def keep(self, fetched: dict[str, np.ndarray]) -> None:
        """Hold these vectors (those held already stay as they are), the least recently
        wanted leaving when over the limit."""
        if self.limit <= 0:  # a cache of nothing
            return
        with self._lock:
            new = [rid for rid in fetched if rid not in self._slot][-self.limit:]
            if not new:
                return
            vectors = np.vstack([np.asarray(fetched[rid], dtype=np.float32) for rid in new])
            if not len(self._slab):
                self._slab = np.zeros((0, vectors.shape[1]), dtype=np.float32)
            over = len(self._slot) + len(new) - self.limit
            if over > 0:  # the least recently wanted leave (free rows are never picked)
                for row in np.argpartition(self._used, over - 1)[:over].tolist():
                    del self._slot[self._ids[row]]
                    self._ids[row] = None
                    self._free.append(row)
                    self._used[row] = _FREE
            if len(self._free) < len(new):
                self._grow(len(new) - len(self._free))
            rows = np.array([self._free.pop() for _ in new], dtype=np.int64)
            self._slab[rows] = vectors
            self._norms[rows] = np.linalg.norm(vectors, axis=1)
            self._tick += 1
            self._used[rows] = self._tick
            for rid, row in zip(new, rows.tolist(), strict=True):
                self._slot[rid] = row
                self._ids[row] = rid

    def _grow(self, wanted: int) -> None:
        """At least `wanted` more free rows: capacity doubled (at most `limit` rows)."""
        size = len(self._ids)
        capacity = min(self.limit, max(size * 2, size + wanted, 1024))
        slab = np.zeros((capacity, self._slab.shape[1]), dtype=np.float32)
        slab[:size] = self._slab
        self._slab = slab
        self._norms = np.concatenate([self._norms, np.zeros(capacity - size, np.float32)])
        self._used = np.concatenate([self._used, np.full(capacity - size, _FREE, np.int64)])
        self._ids.extend([None] * (capacity - size))
        self._free.extend(range(capacity - 1, size - 1, -1))
