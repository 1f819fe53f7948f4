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

Builds and extensions run off the write path (`store.indexing`), over a memory map of the
file's first rows while writes may append more: the result is saved only if, under the
file's lock, the file still begins with the rows it was built from (a write that rewrote
the file meanwhile, removing rows, makes it void; the next request builds again). Removals
(`keep`), discards and loads take the same lock, so none sees an index half replaced.
"""

from __future__ import annotations

import hashlib
import logging
import mmap
import threading
import time
from collections.abc import Callable, Iterator
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
SLICE_ROWS = 100_000  # rows read at a time while an index is built


def tail_limit(covered: int) -> int:
    """How many appended rows may wait beside an index of `covered` rows before a write
    adds them to it: a tenth of it, at most TAIL_ROWS (a small index is cheap to extend)."""
    return min(TAIL_ROWS, covered // 10)


def _faiss() -> Any:
    # Only for large graphs: importing faiss is slow (benchmarks/RESULTS.md, "Figures moved
    # from code comments").
    import faiss

    return faiss


_LOCKS: dict[Path, threading.RLock] = {}
_LOCKS_LOCK = threading.Lock()


def _lock_of(path: Path) -> threading.RLock:
    """One lock per index in the process, however many graphs' states open it."""
    with _LOCKS_LOCK:
        return _LOCKS.setdefault(path.resolve(), threading.RLock())


def _map_of(vectors: np.ndarray) -> tuple[mmap.mmap, int] | None:
    """The memory map under `vectors` (a map of its own, not a view of one) and where its
    rows begin in the mapped region (numpy maps from an aligned offset)."""
    if isinstance(vectors, np.memmap) and isinstance(vectors.base, mmap.mmap):
        return vectors.base, int(vectors.offset % mmap.ALLOCATIONGRANULARITY)
    return None


def release(vectors: np.ndarray, start: int = 0, stop: int | None = None) -> None:
    """Let go of the pages of rows `start`…`stop` of a memory map: pages read through a
    map stay in the process's resident memory (file-backed, but counted) until it ends,
    1.5 GB for the relations of a 1M graph. Nothing for an array in memory."""
    found = _map_of(vectors)
    if found is None:
        return
    mapped, skip = found
    row_bytes = vectors.shape[1] * vectors.itemsize
    end = len(vectors) if stop is None else stop
    low = (skip + start * row_bytes) // mmap.PAGESIZE * mmap.PAGESIZE
    if end > start:
        mapped.madvise(mmap.MADV_DONTNEED, low, skip + end * row_bytes - low)


def slices(vectors: np.ndarray, first: int = 0) -> Iterator[np.ndarray]:
    """Rows `first`… of `vectors` in slices of SLICE_ROWS, each a float32 array of its own;
    a memory map's pages of a slice are let go once it is copied (`release`). (Read through
    the map, not the file by its name: a write may have replaced the file since.)"""
    for start in range(first, len(vectors), SLICE_ROWS):
        stop = min(start + SLICE_ROWS, len(vectors))
        part = np.array(vectors[start:stop], dtype=np.float32)
        release(vectors, start, stop)
        yield part


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
    print_: str = ""  # fingerprint of the rows it covers (`fingerprint`)
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
        self.lock = _lock_of(self.meta_path)  # the index files change only under it

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
        with self.lock:
            return self._load(vectors)

    def _load(self, vectors: np.ndarray) -> Ann | None:
        meta = self._meta() if self.exists() else None
        if meta is None:
            return None
        rowmap, rows, print_ = meta
        if rows > len(vectors) or print_ != fingerprint(vectors[:rows]):
            log.info("ANN index %s does not match its vectors; searching exactly", self.path)
            return None
        if len(rowmap) and float(np.mean(rowmap < 0)) >= REBUILD_REMOVED:
            return None  # too few of its candidates are rows: rebuilt in the background
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
        return Ann(index, rowmap, rows, print_)

    def update(self, vectors: np.ndarray, min_rows: int,
               current: Callable[[], np.ndarray | None] | None = None,
               stop: Callable[[], bool] = lambda: False) -> bool:
        """Bring the index up to these vectors: nothing below `min_rows` rows; while the
        rows it covers are unchanged and a third of its labels at most are removed, the
        rows added since stay beside it up to `tail_limit`, and are added to it beyond;
        else built again. `current` gives the file's first `len(vectors)` rows as they are
        now (None: fewer): what was built is saved only if they are still `vectors`.
        `stop()` is asked between slices of rows: once true, nothing is saved. Whether the
        index files changed."""
        if min_rows <= 0 or len(vectors) < min_rows:
            with self.lock:
                found = self.exists()
                self.discard()
            return found
        index: Any = None
        with self.lock:  # the labels and the index they belong to, read together
            meta = self._meta() if self.exists() else None
            if meta is not None:
                rowmap, rows, print_ = meta
                removed = float(np.mean(rowmap < 0)) if len(rowmap) else 1.0
                if (rows <= len(vectors) and removed < REBUILD_REMOVED
                        and print_ == fingerprint(vectors[:rows])):
                    if len(vectors) - rows <= tail_limit(rows):
                        return False  # searched exactly beside the index until it grows
                    index = _faiss().read_index(str(self.path))
        if meta is not None and index is not None and index.ntotal == len(meta[0]):
            return self._extend(index, meta[0], vectors, meta[1], current, stop)
        return self._build(vectors, current, stop)

    def _commit(self, index: Any, rowmap: np.ndarray, vectors: np.ndarray,
                current: Callable[[], np.ndarray | None] | None) -> bool:
        """Save an index over `vectors` (the file's first rows when it was made), unless
        the file no longer begins with them."""
        print_ = fingerprint(vectors)
        with self.lock:
            now = vectors if current is None else current()
            if now is None or fingerprint(now) != print_:
                log.info("not saving the ANN index %s: its vectors changed while it was "
                         "built", self.path.name)
                return False
            self._save_index(index)
            self._save_meta(rowmap, len(vectors), print_)
        return True

    def _extend(self, index: Any, rowmap: np.ndarray, vectors: np.ndarray, rows: int,
                current: Callable[[], np.ndarray | None] | None,
                stop: Callable[[], bool]) -> bool:
        started = time.perf_counter()
        for part in slices(vectors, rows):
            if stop():
                return False
            index.add(part)
        rowmap = np.concatenate([rowmap, np.arange(rows, len(vectors), dtype=np.int64)])
        saved = self._commit(index, rowmap, vectors, current)
        if saved:
            log.info("ANN index %s: %d rows added in %.1fs", self.path.name,
                     len(vectors) - rows, time.perf_counter() - started)
        return saved

    def _build(self, vectors: np.ndarray, current: Callable[[], np.ndarray | None] | None,
               stop: Callable[[], bool]) -> bool:
        faiss = _faiss()
        started = time.perf_counter()
        dim = vectors.shape[1]
        index = faiss.IndexHNSWSQ(dim, faiss.ScalarQuantizer.QT_8bit, LINKS,
                                  faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EF_CONSTRUCTION
        sample = np.sort(np.random.default_rng(0).choice(
            len(vectors), min(len(vectors), TRAIN_ROWS), replace=False))
        index.train(np.array(vectors[sample], dtype=np.float32))
        release(vectors)  # the sample's pages
        for part in slices(vectors):
            if stop():
                return False
            index.add(part)
        saved = self._commit(index, np.arange(len(vectors), dtype=np.int64), vectors, current)
        if saved:
            log.info("ANN index %s: built over %d rows in %.1fs", self.path.name,
                     len(vectors), time.perf_counter() - started)
        return saved

    def keep(self, mask: np.ndarray, kept: np.ndarray | None) -> None:
        """The vector file kept the rows where `mask` is true (`kept`: its rows now): map
        the labels to the rows' new positions (removed rows: -1)."""
        with self.lock:
            self._keep(mask, kept)

    def _keep(self, mask: np.ndarray, kept: np.ndarray | None) -> None:
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
        with self.lock:
            self.meta_path.unlink(missing_ok=True)
            self.path.unlink(missing_ok=True)
