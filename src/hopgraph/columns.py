"""Column helpers of the in-memory graph: a growable int64 array, and CSR row reads that
need no Python loop per row."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse


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
