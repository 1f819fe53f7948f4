"""Exact top-k that reads less: 8-bit codes of a matrix's rows are scanned first, their best
candidates scored exactly, and the answer proven to be the exact search's (or, when it cannot
be, the exact search is done).

An exact search of the 100,000 passages of a 1M-relation graph reads 150 MB of float32 for
each batch of query vectors: half of a warm default query there. Codes are a quarter of that
and faiss scans them with SIMD. When the codes are made, every row's reconstruction error is
measured: `bound` is the largest |x - decode(code(x))| over the rows, so no row's code score
is further than |q| * bound from its exact score (Cauchy-Schwarz). For each query the
`wanted` best rows by code score are scored exactly from the float32 vectors. If the
`limit`-th best of those is above the lowest candidate's code score plus that bound (and a
float slack), no row left out can reach the top `limit`: the rows and their scores are the
exact search's. Otherwise that query is searched exactly (counted in `fallbacks`).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

MIN_ROWS = 50_000  # below this an exact pass is a few milliseconds: no codes are made
WANTED = 128  # candidates per query read from the codes (at least 4x the limit)
SLACK = 1e-4  # float32 rounding in the two scores compared (~1e-6), with a wide margin
_CHUNK = 16_384  # rows decoded at a time while measuring the bound


def _faiss() -> Any:
    import faiss  # only for large graphs: importing it costs ~0.3 s

    return faiss


class CodedRows:
    """8-bit codes of `vectors` (unit rows) and the largest decoding error among them."""

    def __init__(self, vectors: np.ndarray) -> None:
        faiss = _faiss()
        self.rows = len(vectors)
        self.index = faiss.IndexScalarQuantizer(
            vectors.shape[1], faiss.ScalarQuantizer.QT_8bit_uniform, faiss.METRIC_INNER_PRODUCT)
        bound = 0.0
        for start in range(0, self.rows, _CHUNK):
            chunk = np.ascontiguousarray(vectors[start:start + _CHUNK], dtype=np.float32)
            if start == 0:
                self.index.train(self._range_sample(vectors))
            self.index.add(chunk)
            codes = faiss.vector_to_array(self.index.codes)[
                start * self.index.code_size:].reshape(len(chunk), -1)
            decoded = self.index.sa_decode(codes)
            bound = max(bound, float(np.linalg.norm(chunk - decoded, axis=1).max()))
        self.bound = bound

    @staticmethod
    def _range_sample(vectors: np.ndarray) -> np.ndarray:
        """Two rows holding every component's smallest and largest value: the uniform
        codes' range is fitted on them, so no row falls outside it."""
        low = np.full(vectors.shape[1], np.inf, dtype=np.float32)
        high = np.full(vectors.shape[1], -np.inf, dtype=np.float32)
        for start in range(0, len(vectors), _CHUNK):
            chunk = np.asarray(vectors[start:start + _CHUNK], dtype=np.float32)
            low = np.minimum(low, chunk.min(axis=0))
            high = np.maximum(high, chunk.max(axis=0))
        return np.vstack([low, high])

    def candidates(self, qvecs: np.ndarray, wanted: int) -> tuple[np.ndarray, np.ndarray]:
        """The `wanted` best rows per query by code score, and those scores."""
        query = np.ascontiguousarray(qvecs, dtype=np.float32)
        scores, rows = self.index.search(query, min(wanted, self.rows))
        return rows, scores


class CoarseSearch:
    """Exact top-k over one matrix through its codes. The codes are made in a background
    thread from the matrix's second search on (a one-shot command never makes them; a
    serving process does not wait for them): until they are ready, `top` returns None and
    the caller does the exact pass."""

    def __init__(self, vectors: np.ndarray) -> None:
        self.vectors = vectors
        self.fallbacks = 0  # queries the codes could not answer, searched exactly
        self._coded: CodedRows | None = None
        self._searches = 0
        self._lock = threading.Lock()
        self.making: threading.Thread | None = None

    @property
    def ready(self) -> bool:
        return self._coded is not None

    def coded(self) -> CodedRows:
        """The codes, made now if they are not yet (~0.5 s at 100k rows, ~5 s at 1M)."""
        with self._lock:
            if self._coded is None:
                self._coded = CodedRows(self.vectors)
        return self._coded

    def _make_in_background(self) -> None:
        def make() -> None:
            try:
                self.coded()
            except Exception:  # the exact pass goes on answering
                log.exception("making 8-bit codes of %d rows failed", len(self.vectors))

        self.making = threading.Thread(target=make, name="hopgraph-codes", daemon=True)
        self.making.start()

    def top(self, qvecs: np.ndarray, limit: int) -> list[list[tuple[int, float]] | None] | None:
        """Per query, its exact top-`limit` rows, best first, with exact scores; None for a
        query the codes could not prove, and None for all while the codes are not ready
        (the caller searches those exactly)."""
        coded = self._coded
        if coded is None:
            self._searches += 1
            if self._searches >= 2 and self.making is None:
                self._make_in_background()
            return None
        wanted = max(WANTED, 4 * limit)
        rows, code_scores = coded.candidates(qvecs, wanted)
        out: list[list[tuple[int, float]] | None] = []
        for query, found, approximate in zip(qvecs, rows, code_scores, strict=True):
            keep = found >= 0
            found, approximate = found[keep], approximate[keep]
            exact = np.asarray(self.vectors[found], dtype=np.float32) @ np.asarray(
                query, dtype=np.float32)
            order = np.lexsort((found, -exact))[:limit]
            best: list[tuple[int, float]] | None = [
                (int(found[i]), float(exact[i])) for i in order]
            if len(found) < coded.rows:  # rows left out: prove none of them belongs
                margin = coded.bound * float(np.linalg.norm(query)) + SLACK
                if len(order) < limit or not exact[order[-1]] > approximate.min() + margin:
                    self.fallbacks += 1
                    best = None
            out.append(best)
        return out
