"""Approximate nearest-neighbour indexes beside the vector files, for large graphs.

An exact search reads every vector of its kind: at 1M relations that is 1.5 GB per query
(its time: benchmarks/RESULTS.md, "Figures moved from code comments"). From
`config.ann_min_rows()` rows ($HOPGRAPH_ANN_MIN_ROWS) a kind gets an HNSW graph (faiss)
over 8-bit codes of its vectors. A search asks it for a generous candidate list
(`EF_SEARCH`) and scores the candidates exactly from the float32 vector file: every score
returned is the exact cosine, the number an exact search gives for that row; only which
rows reach the top can differ. Recall@10 against exact search is measured in
benchmarks/ann_recall.py and tested in tests/test_store_ann.py.

The index belongs to one vector file (`store.vectors.VectorFile`) and follows it:
- it covers the file's first rows; rows appended since (the tail) are searched exactly
  beside it, so a small write does not rewrite the index file (large at 1M relations:
  benchmarks/RESULTS.md, "Small writes into a large graph").
  Once the tail outgrows `tail_limit`, a write's finish adds it to the index
  (`AnnFile.update`);
- a removal maps the index's labels to the rows kept (`AnnFile.keep`); once a third of
  the labels point at removed rows, the next write builds the index again;
- a rewritten or discarded vector file discards the index.
Its metadata records how many rows it covers and a fingerprint of those rows; an index
whose metadata does not match the vector file is never used (a search is then exact).
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hopgraph.store.atomic import replace_file, replace_path

log = logging.getLogger(__name__)

LINKS = 32  # HNSW neighbours per node (M)
EF_CONSTRUCTION = 64  # candidate list while building
EF_SEARCH = 1024  # candidate list while searching: every candidate is then scored exactly
# Passages are longer, more alike texts: at 1,024 candidates the synthetic 1M graph's
# 100k passages kept too little of the exact top 10, at 2,048 enough (benchmarks/RESULTS.md,
# "Nearest-neighbour index").
EF_BY_KIND = {"passages": 2048}
REBUILD_REMOVED = 1 / 3  # share of labels pointing at removed rows that triggers a rebuild
TRAIN_ROWS = 50_000  # rows sampled to fit the 8-bit codes' ranges
# Most rows searched exactly beside the index: few enough to stay cheap per query vector
# (benchmarks/RESULTS.md, "Figures moved from code comments").
TAIL_ROWS = 20_000


def tail_limit(covered: int) -> int:
    """How many appended rows may wait beside an index of `covered` rows before a write
    adds them to it: a tenth of it, at most TAIL_ROWS (a small index is cheap to extend)."""
    return min(TAIL_ROWS, covered // 10)


def _faiss() -> Any:
    # Only for large graphs: importing faiss is slow (benchmarks/RESULTS.md, "Figures moved
    # from code comments").
    import faiss

    return faiss


def fingerprint(vectors: np.ndarray) -> str:
    """A digest of the row count and of up to 257 rows spread over the matrix: cheap on a
    memory map, and different once rows are rewritten, reordered or removed."""
    rows = len(vectors)
    picks = np.unique(np.linspace(0, max(rows - 1, 0), num=min(rows, 257)).astype(np.int64))
    digest = hashlib.blake2b(str(rows).encode(), digest_size=16)
    digest.update(np.ascontiguousarray(vectors[picks], dtype="<f4").tobytes())
    return digest.hexdigest()


@dataclass
class Ann:
    """A loaded index: faiss's HNSW graph, per label the vector row it stands for now (-1:
    removed), and the rows it covers (rows from `covered` on are the tail, scored exactly).
    """

    index: Any
    rowmap: np.ndarray
    covered: int
    ef: int = EF_SEARCH  # candidates asked for (at least twice the limit)
    _last: tuple[tuple[bytes, int, int], np.ndarray, np.ndarray] | None = field(
        default=None, repr=False, compare=False)

    def search(self, vectors: np.ndarray, qvec: np.ndarray, limit: int
               ) -> list[tuple[int, float]]:
        """Top-`limit` rows for one query vector, with exact cosines (unit vectors): the
        best of the index's candidates and of the tail (ties: the lower row first)."""
        if limit <= 0 or len(vectors) == 0:
            return []
        rows, scores = self._ranked(vectors, qvec, max(self.ef, 2 * limit))
        return list(zip(rows[:limit].tolist(), scores[:limit].tolist(), strict=True))

    def _ranked(self, vectors: np.ndarray, qvec: np.ndarray, wanted: int
                ) -> tuple[np.ndarray, np.ndarray]:
        """The index's `wanted` candidates and every tail row, scored exactly, best first.
        The last query's are kept: the default method asks for the question's best 20
        relations, then, at a hub, its best 200, from the same candidates."""
        query = np.ascontiguousarray(qvec, dtype=np.float32).reshape(1, -1)
        key = (query.tobytes(), wanted, len(vectors))
        cached = self._last  # one read: another thread may replace it meanwhile
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        rows = np.zeros(0, dtype=np.int64)
        if len(self.rowmap):
            params = _faiss().SearchParametersHNSW(efSearch=wanted)
            _, labels = self.index.search(query, min(wanted, len(self.rowmap)), params=params)
            labels = labels[0][labels[0] >= 0]
            rows = self.rowmap[labels]
            rows = np.unique(rows[rows >= 0])
        if len(vectors) > self.covered:  # the tail: after every covered row
            rows = np.concatenate([rows, np.arange(self.covered, len(vectors))])
        scores = np.asarray(vectors[rows], dtype=np.float32) @ query.reshape(-1)
        order = np.lexsort((rows, -scores))
        self._last = (key, rows[order], scores[order])
        return rows[order], scores[order]


class AnnFile:
    """The index of one vector file: `<vector file>.hnsw` (faiss) and `.hnsw.npz` (labels'
    rows, rows covered, fingerprint), both replaced atomically."""

    def __init__(self, vector_path: Path) -> None:
        self.path = vector_path.with_name(vector_path.name + ".hnsw")
        self.meta_path = vector_path.with_name(vector_path.name + ".hnsw.npz")

    def exists(self) -> bool:
        """Whether an index is on disk (matching or not)."""
        return self.meta_path.is_file() and self.path.is_file()

    def _meta(self) -> tuple[np.ndarray, int, str] | None:
        try:
            with np.load(self.meta_path, allow_pickle=False) as npz:
                return npz["rowmap"], int(npz["rows"][0]), str(npz["fingerprint"][0])
        except (OSError, KeyError, ValueError, IndexError):
            return None

    def _save_meta(self, rowmap: np.ndarray, rows: int, print_: str) -> None:
        replace_file(self.meta_path, lambda out: np.savez(
            out, rowmap=rowmap.astype(np.int64), rows=np.array([rows], np.int64),
            fingerprint=np.array([print_])))

    def _save_index(self, index: Any) -> None:
        replace_path(self.path, lambda temp: _faiss().write_index(index, str(temp)))

    def load(self, vectors: np.ndarray) -> Ann | None:
        """The index, if the rows it covers are these vectors' first rows (else None:
        search exactly)."""
        meta = self._meta() if self.exists() else None
        if meta is None:
            return None
        rowmap, rows, print_ = meta
        if rows > len(vectors) or print_ != fingerprint(vectors[:rows]):
            log.info("ANN index %s does not match its vectors; searching exactly", self.path)
            return None
        faiss = _faiss()
        # The codes memory-mapped, not read: much quicker at 1M rows (benchmarks/RESULTS.md,
        # "Figures moved from code comments").
        try:
            index = faiss.read_index(str(self.path), getattr(faiss, "IO_FLAG_MMAP_IFC", 0))
        except RuntimeError as exc:
            log.warning("ANN index %s is unreadable (%s); searching exactly", self.path, exc)
            return None
        if index.ntotal != len(rowmap):
            return None
        return Ann(index, rowmap, rows)

    def update(self, vectors: np.ndarray, min_rows: int) -> None:
        """Bring the index up to these vectors: nothing below `min_rows` rows; while the
        rows it covers are unchanged and a third of its labels at most are removed, the
        rows added since stay beside it up to `tail_limit`, and are added to it beyond;
        else built again."""
        if min_rows <= 0 or len(vectors) < min_rows:
            self.discard()
            return
        meta = self._meta() if self.exists() else None
        if meta is not None:
            rowmap, rows, print_ = meta
            removed = float(np.mean(rowmap < 0)) if len(rowmap) else 1.0
            if (rows <= len(vectors) and removed < REBUILD_REMOVED
                    and print_ == fingerprint(vectors[:rows])):
                if len(vectors) - rows <= tail_limit(rows):
                    return  # searched exactly beside the index until it grows
                index = _faiss().read_index(str(self.path))
                if index.ntotal == len(rowmap):
                    self._extend(index, rowmap, vectors, rows)
                    return
        self._build(vectors)

    def _extend(self, index: Any, rowmap: np.ndarray, vectors: np.ndarray, rows: int) -> None:
        started = time.perf_counter()
        index.add(np.ascontiguousarray(vectors[rows:], dtype=np.float32))
        rowmap = np.concatenate([rowmap, np.arange(rows, len(vectors), dtype=np.int64)])
        self._save_index(index)
        self._save_meta(rowmap, len(vectors), fingerprint(vectors))
        log.info("ANN index %s: %d rows added in %.1fs", self.path.name, len(vectors) - rows,
                 time.perf_counter() - started)

    def _build(self, vectors: np.ndarray) -> None:
        faiss = _faiss()
        started = time.perf_counter()
        dim = vectors.shape[1]
        index = faiss.IndexHNSWSQ(dim, faiss.ScalarQuantizer.QT_8bit, LINKS,
                                  faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EF_CONSTRUCTION
        sample = np.random.default_rng(0).choice(len(vectors), min(len(vectors), TRAIN_ROWS),
                                                 replace=False)
        index.train(np.ascontiguousarray(vectors[np.sort(sample)], dtype=np.float32))
        for start in range(0, len(vectors), 100_000):  # a memory map, read in slices
            index.add(np.ascontiguousarray(vectors[start:start + 100_000], dtype=np.float32))
        self._save_index(index)
        self._save_meta(np.arange(len(vectors), dtype=np.int64), len(vectors),
                        fingerprint(vectors))
        log.info("ANN index %s: built over %d rows in %.1fs", self.path.name, len(vectors),
                 time.perf_counter() - started)

    def keep(self, mask: np.ndarray, kept: np.ndarray | None) -> None:
        """The vector file kept the rows where `mask` is true (`kept`: its rows now): map
        the labels to the rows' new positions (removed rows: -1)."""
        meta = self._meta() if self.exists() else None
        if meta is None or meta[1] > len(mask) or kept is None or not mask.any():
            self.discard()
            return
        rowmap, rows = meta[0], meta[1]
        moved = np.cumsum(mask) - 1
        moved[~mask] = -1
        rowmap = np.where(rowmap >= 0, moved[np.clip(rowmap, 0, None)], -1)
        covered = int(mask[:rows].sum())  # the tail's rows kept stay after them, in order
        self._save_meta(rowmap, covered, fingerprint(kept[:covered]))

    def discard(self) -> None:
        """Remove the index (built again by the next write that needs it)."""
        self.meta_path.unlink(missing_ok=True)
        self.path.unlink(missing_ok=True)
