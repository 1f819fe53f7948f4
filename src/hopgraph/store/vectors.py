"""Entity, relation and passage vectors on disk, row i = the graph's entity / relation /
passage i (`graph.passage_ids`), beside the snapshot (raw float32, read through memory maps).

Ingestion appends each new row's vector as it stores it, so the files grow with the graph
and cost no extra pass over Milvus. They are trusted only when the snapshot records the same
row counts as the files hold and as the graph has; otherwise they are rebuilt (the in-memory
mirror writes them after it scanned Milvus). With them, the mirror loads without scanning
Milvus, and a search in Milvus scores known relations without fetching vectors by id.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from hopgraph.store.ann import EF_BY_KIND, Ann, AnnFile
from hopgraph.store.atomic import replace_file
from hopgraph.store.indexing import Indexing

log = logging.getLogger(__name__)

KINDS = ("entities", "relations", "passages")


class VectorFile:
    """One kind's vectors: a raw little-endian float32 file of `dim`-wide rows."""

    def __init__(self, path: Path, dim: int) -> None:
        self.path = path
        self.dim = dim
        self.ann: AnnFile | None = AnnFile(path)  # its nearest-neighbour index (store.ann)

    def rows(self) -> int:
        """Complete rows in the file (0 when it is missing)."""
        try:
            return self.path.stat().st_size // (4 * self.dim)
        except FileNotFoundError:
            return 0

    def append(self, vectors: np.ndarray) -> None:
        """Add rows at the end."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "ab") as out:
            out.write(np.ascontiguousarray(vectors, dtype="<f4").tobytes())

    def write(self, vectors: np.ndarray) -> None:
        """Replace the file's rows (atomically); its index no longer fits them."""
        if self.ann is not None:
            self.ann.discard()
        self._replace(vectors)

    def _replace(self, vectors: np.ndarray) -> None:
        replace_file(self.path, np.ascontiguousarray(vectors, dtype="<f4").tofile)

    def keep(self, mask: np.ndarray) -> bool:
        """Keep only the rows where `mask` is true (atomically); False, changing nothing,
        if the file does not hold exactly `len(mask)` rows."""
        if self.rows() != len(mask):
            return False
        rows = self.read(len(mask))
        self._replace(np.zeros((0, self.dim), dtype=np.float32) if rows is None
                      else np.asarray(rows[mask]))
        if self.ann is not None:  # its labels now point at the rows kept
            self.ann.keep(mask, self.read(int(mask.sum())))
        return True

    def discard(self) -> None:
        """Remove the file and its index (rebuilt when needed)."""
        self.path.unlink(missing_ok=True)
        if self.ann is not None:
            self.ann.discard()

    def read(self, rows: int) -> np.ndarray | None:
        """The first `rows` rows as a read-only memory map, or None if the file has another
        number of rows."""
        if rows == 0 or self.rows() != rows:
            return None
        return np.memmap(self.path, dtype="<f4", mode="r", shape=(rows, self.dim))

    def prefix(self, rows: int) -> np.ndarray | None:
        """The file's first `rows` rows as a read-only memory map, whatever follows them
        (None: it holds fewer)."""
        if rows == 0 or self.rows() < rows:
            return None
        try:
            return np.memmap(self.path, dtype="<f4", mode="r", shape=(rows, self.dim))
        except (OSError, ValueError):  # replaced by a shorter file meanwhile
            return None


class MemoryVectors(VectorFile):
    """One kind's vectors held in this process only, with the same interface as a file.

    For graphs on a Milvus server: several processes on one machine would share (and
    garble) one set of files, and each follows the graph in its own order (`store.follow`),
    so each keeps its own vectors; a new process reads them from Milvus once.
    """

    def __init__(self, dim: int, cap: int | None = None) -> None:
        super().__init__(Path(os.devnull), dim)
        self.ann = None  # a server's mirror searches exactly (docs/storage.md)
        self.cap = cap  # rows it will hold at most (`GraphVectors`): the buffer stops there
        # Rows live in the first `_rows` rows of `_buffer`, which grows by half when full:
        # an append writes past the rows that searchers already hold views of, never over
        # them, and costs the rows added (amortized), not the rows kept.
        self._buffer = np.zeros((0, dim), dtype=np.float32)
        self._rows = 0

    def rows(self) -> int:
        return self._rows

    def append(self, vectors: np.ndarray) -> None:
        vectors = np.asarray(vectors, dtype=np.float32).reshape(-1, self.dim)
        end = self._rows + len(vectors)
        if end > len(self._buffer):
            size = max(len(self._buffer) * 3 // 2, 1024)
            if self.cap is not None:
                size = min(size, self.cap)
            grown = np.zeros((max(end, size), self.dim), dtype=np.float32)
            grown[:self._rows] = self._buffer[:self._rows]
            self._buffer = grown
        self._buffer[self._rows:end] = vectors
        self._rows = end

    def _replace(self, vectors: np.ndarray) -> None:
        self._buffer = np.array(vectors, dtype=np.float32).reshape(-1, self.dim)
        self._rows = len(self._buffer)

    def discard(self) -> None:
        self._buffer = np.zeros((0, self.dim), dtype=np.float32)
        self._rows = 0

    def read(self, rows: int) -> np.ndarray | None:
        if rows == 0 or self._rows != rows:
            return None
        view = self._buffer[:rows].view()
        view.flags.writeable = False  # a searcher keeps it; appends write past its rows
        return view


def vector_files(snapshot_path: Path, dim: int, shared: bool = True,
                 cap: int | None = None) -> dict[str, VectorFile]:
    """The vector files that go with a snapshot file (`shared`), or vectors kept in this
    process only (`MemoryVectors`, holding at most `cap` rows each)."""
    if not shared:
        return {kind: MemoryVectors(dim, cap) for kind in KINDS}
    stem = snapshot_path.with_suffix("")
    return {kind: VectorFile(stem.with_name(f"{stem.name}.{kind}.f32"), dim) for kind in KINDS}


class GraphVectors:
    """The vectors that go with one graph, by kind (`files`), and how many rows each holds
    for it as far as is known (`rows`: what the snapshot recorded, then kept in step; -1:
    not known to match). Every method takes the graph's row counts (`follow.sizes`).

    `cap` bounds vectors kept in this process only (a server's graph, `MemoryVectors`): a
    graph with more rows of any kind than the searches mirror (the memory limit,
    `config.mirror_rows`) is searched in Milvus, which reads no mirror but the relations'
    for rescoring, and finds their vectors by id without it (`retrieve.search`). So past
    the cap every kind is dropped, and not kept again until a search mirrors the graph.
    Vector files on disk (Milvus Lite) have no cap: they cost page cache, not the heap."""

    def __init__(self, files: dict[str, VectorFile], ann_min_rows: int,
                 cap: int | None = None) -> None:
        self.files = files
        self.ann_min_rows = ann_min_rows  # rows from which a kind is indexed (0: never)
        self.cap = cap
        self.rows: dict[str, int] = {}
        # Index builds run in the background (`store.indexing`); its `landed` is set by
        # the graph's state, which hands a new index to the current retriever.
        self.indexing = Indexing(self._build_indexes)

    def current(self, sizes: dict[str, int]) -> bool:
        """Whether every kind holds exactly the graph's rows, as recorded."""
        return all(self.rows.get(kind) == size == self.files[kind].rows()
                   for kind, size in sizes.items())

    def matching(self, sizes: dict[str, int]) -> dict[str, np.ndarray | None]:
        """The vectors that match the graph (memory maps on disk), by kind (None: stale)."""
        return {kind: self.files[kind].read(size) if self.rows.get(kind) == size else None
                for kind, size in sizes.items()}

    def unknown(self, sizes: dict[str, int]) -> None:
        """Forget every kind's vectors (a graph read back from Milvus, or dropped), and
        end a build of their indexes."""
        self.drop()
        self.rows = {kind: 0 if not size else -1 for kind, size in sizes.items()}

    def keep(self, matrices: dict[str, np.ndarray]) -> None:
        """Keep vectors read back from Milvus (graph order, by kind), within the cap."""
        if self._over_cap(max(map(len, matrices.values()), default=0)):
            return
        for kind, matrix in matrices.items():
            self.files[kind].write(matrix)
            self.rows[kind] = len(matrix)
        self.index({kind: len(matrix) for kind, matrix in matrices.items()})

    def index(self, sizes: dict[str, int], opening: bool = False) -> None:
        """Bring each kind's nearest-neighbour index up to its vectors, when they match the
        graph, in the background (`store.indexing`): built, extended or discarded. A kind
        with no index and too few rows for one asks for nothing. `opening`: only kinds that
        should have an index are looked at (a reader discards none)."""
        wanted = {kind: size for kind, size in sizes.items()
                  if self.files[kind].ann is not None and self.rows.get(kind) == size
                  and (not opening or self._due(size))}
        if any(self._due(size) or self._has_index(kind) for kind, size in wanted.items()):
            self.indexing.request(wanted)

    def _due(self, size: int) -> bool:
        return bool(self.ann_min_rows) and size >= self.ann_min_rows

    def _has_index(self, kind: str) -> bool:
        ann = self.files[kind].ann
        return ann is not None and ann.exists()

    def _build_indexes(self, sizes: dict[str, int], stop: Callable[[], bool]) -> bool:
        """One round of `index` (in the indexing thread; `stop`: `Indexing.cancel` was
        called): whether an index was saved. A failure costs only speed."""
        saved = False
        for kind, size in sizes.items():
            file = self.files[kind]
            ann, vectors = file.ann, file.prefix(size)
            if ann is None or vectors is None:
                continue  # rewritten shorter since: the write that did it asks again
            try:
                saved = ann.update(vectors, self.ann_min_rows,
                                   functools.partial(file.prefix, size), stop) or saved
            except (OSError, RuntimeError, MemoryError) as exc:
                log.warning("could not index the %s vectors (%s); searching them exactly",
                            kind, exc)
                ann.discard()
        return saved

    def wait_indexed(self, timeout: float | None = None) -> bool:
        """Wait for the background index builds (at most `timeout` s); whether they
        ended."""
        return self.indexing.wait(timeout)

    def indexes(self, sizes: dict[str, int]) -> dict[str, Ann]:
        """The nearest-neighbour indexes that match the graph's vectors, by kind."""
        found: dict[str, Ann] = {}
        min_rows = self.ann_min_rows
        for kind, size in sizes.items():
            file = self.files[kind]
            if not min_rows or file.ann is None or self.rows.get(kind) != size or (
                    size < min_rows):
                continue
            vectors = file.read(size)
            ann = None if vectors is None else file.ann.load(vectors)
            if ann is not None:
                ann.ef = EF_BY_KIND.get(kind, ann.ef)
                found[kind] = ann
        return found

    def sink(self) -> Callable[[str, np.ndarray], None]:
        """Where a write appends the vectors of the rows it adds, by kind: past the cap,
        nowhere (every kind is dropped, and the write's end finds them stale)."""
        dropped = False

        def append(kind: str, vectors: np.ndarray) -> None:
            nonlocal dropped
            if not dropped and self._over_cap(self.files[kind].rows() + len(vectors)):
                self.drop()
                dropped = True
            if not dropped:
                self.files[kind].append(vectors)

        return append

    def _over_cap(self, rows: int) -> bool:
        return self.cap is not None and rows > self.cap and any(
            isinstance(file, MemoryVectors) for file in self.files.values())

    def limit(self, cap: int | None) -> None:
        """A new cap (the memory limit changed); kinds past it are dropped at once."""
        self.cap = cap
        for file in self.files.values():
            if isinstance(file, MemoryVectors):
                file.cap = cap
        if self._over_cap(max((file.rows() for file in self.files.values()), default=0)):
            self.drop()

    def drop(self) -> None:
        """Forget every kind's vectors: stale until read back from Milvus again."""
        self.indexing.cancel()
        for kind, file in self.files.items():
            file.discard()
            self.rows[kind] = -1

    def compact(self, masks: dict[str, np.ndarray], current: bool) -> None:
        """Keep the rows of each mask (rows removed from the graph); discard a kind that
        cannot be (`current`: whether the vectors matched the graph before)."""
        for kind, mask in masks.items():
            if not (current and self.files[kind].keep(mask)):
                self.files[kind].discard()

    def follow(self, masks: dict[str, np.ndarray], added: dict[str, np.ndarray | None],
               current: bool, sizes: dict[str, int]) -> None:
        """An absorbed change (`store.follow`): rows removed by the masks, then the added
        rows' vectors appended (None: not read); a kind left unlike the graph is dropped,
        and every kind once the graph passes the cap."""
        if self._over_cap(max(sizes.values(), default=0)):
            self.drop()
            return
        for kind in KINDS:
            file, mask, more = self.files[kind], masks.get(kind), added.get(kind)
            ok = current and (mask is None or file.keep(mask)) and more is not None
            if ok and more is not None and len(more):
                file.append(more)
            self.settle(kind, ok, sizes[kind])

    def check(self, current: bool, sizes: dict[str, int]) -> None:
        """After a write: trust a kind only if it holds the graph's rows (`current`:
        whether the write kept the vectors in step)."""
        for kind, size in sizes.items():
            self.settle(kind, current, size)

    def settle(self, kind: str, ok: bool, size: int) -> None:
        """Record a kind as holding the graph's `size` rows, or discard it."""
        file = self.files[kind]
        if ok and file.rows() == size:
            self.rows[kind] = size
        else:
            file.discard()
            self.rows[kind] = -1
