"""Column helpers of the in-memory graph: a growable int64 array, CSR row reads that need no
Python loop per row, and `graph.relations`, the relations viewed one `RelationInfo` at a
time."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
from scipy import sparse


@dataclass(frozen=True)
class RelationInfo:
    """A stored relation as the graph holds it (a view built on access)."""

    id: str
    subject: int  # entity index
    object: int  # entity index
    text: str
    passage_ids: list[str]


class Relations(Sequence[RelationInfo]):
    """`graph.relations`: the relations as a read-only sequence of `RelationInfo` views."""

    def __init__(self, graph: Any) -> None:  # a KnowledgeGraph (which imports this module)
        self._graph = graph

    def __len__(self) -> int:
        return len(self._graph.relation_ids)

    @overload
    def __getitem__(self, index: int) -> RelationInfo: ...

    @overload
    def __getitem__(self, index: slice) -> list[RelationInfo]: ...

    def __getitem__(self, index: int | slice) -> RelationInfo | list[RelationInfo]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        g = self._graph
        r = range(len(self))[index]  # bounds check, negative indices
        return RelationInfo(g.relation_ids[r], int(g.subjects[r]), int(g.objects[r]),
                            g.relation_texts[r], g.passages_of(r))

    def __iter__(self) -> Iterator[RelationInfo]:
        return (self[i] for i in range(len(self)))


class Ints:
    """An int64 array that grows by appending (capacity doubles), viewed as numpy."""

    def __init__(self, values: np.ndarray | None = None) -> None:
        self._data = np.zeros(16, dtype=np.int64) if values is None else np.array(
            values, dtype=np.int64)
        self.size = 0 if values is None else len(self._data)

    def append(self, value: int) -> None:
        if self.size == len(self._data):
            grown = np.zeros(max(16, 2 * self.size), dtype=np.int64)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size] = value
        self.size += 1

    def extend(self, values: Sequence[int]) -> None:
        for value in values:
            self.append(value)

    @property
    def values(self) -> np.ndarray:
        return self._data[: self.size]


def csr_rows(indptr: np.ndarray, indices: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The column indices of CSR rows `rows`, concatenated (no Python loop per row)."""
    rows = np.asarray(rows, dtype=np.int64)
    starts, ends = indptr[rows], indptr[rows + 1]
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    # Position k of the output reads indices[starts[row] + (k - first output of row)].
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.asarray(indices[np.arange(total, dtype=np.int64) + offsets], dtype=np.int64)


def neighbours(matrix: sparse.csr_matrix, rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size == 0:
        return np.zeros(0, dtype=np.int64)
    return sorted_unique(csr_rows(matrix.indptr, matrix.indices, rows), matrix.shape[1])


def sorted_unique(values: np.ndarray, bound: int) -> np.ndarray:
    """`np.unique(values)` for integers in [0, bound): by a mark array when `values` is large
    (on hub-heavy graphs one hop can reach most of the graph), else by sorting."""
    if len(values) * 16 < bound:
        return np.unique(values).astype(np.int64)
    marks = np.zeros(bound, dtype=bool)
    marks[values] = True
    return np.flatnonzero(marks).astype(np.int64)
