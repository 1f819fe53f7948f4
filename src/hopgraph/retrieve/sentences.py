"""A passage scored by its best sentence as well as by its own vector (the default method).

A chunk's vector stands for all its sentences at once, so a passage one sentence of which
answers the question can score below one that is about the question's words throughout: a
profile whose one line says on which shift a person works, a minute whose one decision
names the supplier. Each passage search of the default method (the question's and each
bridge probe's) gives its first SENTENCE_TOP passages, by their score in that search,
SENTENCE_WEIGHT × (their best sentence's cosine − their own cosine) more. Passages further
down keep their score: they stay behind either way, and scoring them would cost reads.
Only a passage of several lines has sentences (`hopgraph.sentences`): one paragraph under
its title keeps its score, whatever the search.

A passage's sentences (`hopgraph.sentences`) are embedded at ingest and stored by id; a
query reads those it needs (`Searches.sentence_vectors`) and embeds the sentences of any
passage whose rows are missing (a graph stored by an earlier version, a write that stopped
between a passage and its sentences, a passage whose text changed in case or spacing): the
scores are the same either way. What was read or embedded is kept (`SentenceCache`, by
passage id and text, so a passage whose text changes is read again).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from hopgraph.embed import Embedder
from hopgraph.retrieve.search import Searches
from hopgraph.sentences import sentence_rows

SENTENCE_WEIGHT = 0.25
SENTENCE_TOP = 40
CACHE_BYTES = 64 * 2**20  # sentence vectors kept per opened graph


class SentenceCache:
    """Sentence vectors of passages (a matrix per passage, a row per sentence; zero rows
    for a passage with no sentence), least recently used dropped past `limit` bytes (the
    matrices' and their keys', a passage's id and text). Shared by the query threads of a
    server: every step holds the lock."""

    def __init__(self, limit: int = CACHE_BYTES) -> None:
        self.limit = limit
        self._kept: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, key: tuple[str, str]) -> np.ndarray | None:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
            return found

    def put(self, key: tuple[str, str], matrix: np.ndarray) -> None:
        with self._lock:
            if key in self._kept:
                return
            self._kept[key] = matrix
            self._bytes += _size(key, matrix)
            while self._bytes > self.limit and len(self._kept) > 1:
                dropped = self._kept.popitem(last=False)
                self._bytes -= _size(*dropped)


def _size(key: tuple[str, str], matrix: np.ndarray) -> int:
    """Bytes one kept passage counts for: its vectors and its key's characters."""
    return matrix.nbytes + len(key[0]) + len(key[1])


def passage_sentences(search: Searches, embedder: Embedder, cache: SentenceCache,
                      texts: dict[str, str]) -> dict[str, np.ndarray]:
    """Each passage's sentence vectors (`texts`: passage id → text): kept, stored, or
    embedded now, in that order of preference."""
    found: dict[str, np.ndarray] = {}
    wanted: dict[str, dict[str, str]] = {}
    for pid, text in texts.items():
        kept = cache.get((pid, text))
        if kept is not None:
            found[pid] = kept
        else:
            wanted[pid] = sentence_rows(pid, text)
    ids = [sid for rows in wanted.values() for sid in rows]
    stored = search.sentence_vectors(ids)
    missing = list(dict.fromkeys(
        (sid, sentence) for rows in wanted.values() for sid, sentence in rows.items()
        if sid not in stored))
    if missing:
        embedded = embedder.embed([sentence for _, sentence in missing])
        stored = {**stored, **{sid: embedded[i] for i, (sid, _) in enumerate(missing)}}
    for pid, rows in wanted.items():
        matrix = (np.vstack([stored[sid] for sid in rows]).astype(np.float32) if rows
                  else np.zeros((0, embedder.dim), dtype=np.float32))
        cache.put((pid, texts[pid]), matrix)
        found[pid] = matrix
    return found


def with_sentences(search: Searches, embedder: Embedder, cache: SentenceCache,
                   vectors: np.ndarray, dense: list[dict[str, float]],
                   scored: list[dict[str, float]]) -> list[dict[str, float]]:
    """Each search's scores (`scored`, one dict per row of `vectors`), its first
    SENTENCE_TOP passages given SENTENCE_WEIGHT × (best sentence cosine − passage cosine);
    `dense` holds each search's passage cosines. A passage without sentences keeps its
    score."""
    tops = [sorted(scores, key=lambda pid: (-scores[pid], pid))[:SENTENCE_TOP]
            for scores in scored]
    wanted = sorted({pid for top in tops for pid in top})
    if not wanted:
        return scored
    matrices = passage_sentences(search, embedder, cache, search.texts(wanted))
    adjusted = []
    for row, (scores, top, cosines) in enumerate(zip(scored, tops, dense, strict=True)):
        query = np.asarray(vectors[row], dtype=np.float32)
        out = dict(scores)
        for pid in top:
            matrix = matrices.get(pid)
            if matrix is None or not len(matrix) or pid not in cosines:
                continue
            best = float(np.max(matrix @ query))
            out[pid] = scores[pid] + SENTENCE_WEIGHT * (best - cosines[pid])
        adjusted.append(out)
    return adjusted
