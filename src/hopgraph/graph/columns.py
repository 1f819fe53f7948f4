"""Column helpers of the in-memory graph: a growable int64 array, integer lists per row kept
as one CSR, CSR row reads that need no Python loop per row, the consistency check of a graph's
columns, and `graph.relations`, the relations viewed one `RelationInfo` at a time."""

from __future__ import annotations

import threading
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


@dataclass(frozen=True)
class _Csr:
    """One state of a `RowLists`: the CSR and the rows replaced since it was built."""

    indptr: Ints
    index: Ints
    changed: dict[int, np.ndarray]


class RowLists:
    """Integer lists, one per row, as one CSR that grows by appending rows. A replaced row is
    kept aside until `fold` writes every replacement into the CSR in one pass.

    A server's queries read one graph from many threads, and a filtered query folds it
    (`KnowledgeGraph.passage_csr`): a graph its follower took in from another process holds
    replaced rows. So the CSR and its replaced rows are one state, read once by each reader
    and replaced whole by `fold` (under a lock), never changed in place while others may
    read. `append` and `replace` change it in place: only a write does, on a graph of its
    own (`KnowledgeGraph.copy`)."""

    def __init__(self, indptr: np.ndarray | None = None,
                 index: np.ndarray | None = None) -> None:
        self._state = _Csr(Ints(np.zeros(1, dtype=np.int64) if indptr is None else indptr),
                           Ints(index), {})
        self._fold_lock = threading.Lock()

    def copy(self) -> RowLists:
        """An independent copy; only reads this one (safe while other threads read it)."""
        state = self._state
        other = RowLists(state.indptr.values, state.index.values)
        other._state.changed.update(state.changed)
        return other

    def append(self, values: Sequence[int]) -> None:
        """Add a row."""
        state = self._state
        state.index.extend(values)
        state.indptr.append(state.index.size)

    def replace(self, row: int, values: np.ndarray) -> None:
        """Replace the values of row `row`."""
        self._state.changed[row] = values

    def row(self, row: int) -> np.ndarray:
        """The values of row `row`."""
        return _row(self._state, row)

    def rows(self, rows: np.ndarray) -> np.ndarray:
        """The values of rows `rows`, concatenated."""
        state = self._state
        if state.changed:
            picked = [_row(state, r) for r in rows.tolist()]
            return np.concatenate(picked) if picked else np.zeros(0, dtype=np.int64)
        return csr_rows(state.indptr.values, state.index.values, rows)

    def fold(self) -> tuple[np.ndarray, np.ndarray]:
        """The CSR (indptr, index) with every replaced row written in; views, not copies."""
        with self._fold_lock:
            state = self._state
            if state.changed:
                indptr, index = state.indptr.values, state.index.values
                lengths = np.diff(indptr)
                pieces, start = [], 0
                for r in sorted(state.changed):  # unchanged run before r, then r's new row
                    pieces += [index[indptr[start]:indptr[r]], state.changed[r]]
                    lengths[r] = len(state.changed[r])
                    start = r + 1
                pieces.append(index[indptr[start]:indptr[-1]])
                state = _Csr(Ints(np.concatenate([[0], np.cumsum(lengths)])),
                             Ints(np.concatenate(pieces)), {})
                self._state = state
        return state.indptr.values, state.index.values


def _row(state: _Csr, row: int) -> np.ndarray:
    changed = state.changed.get(row)
    if changed is not None:
        return changed
    indptr = state.indptr.values
    return state.index.values[indptr[row]:indptr[row + 1]]


def check_columns(
    entity_ids: list[str], entity_names: list[str], relation_ids: list[str],
    relation_texts: list[str], subjects: np.ndarray, objects: np.ndarray,
    passage_ids: list[str], passage_indptr: np.ndarray, passage_index: np.ndarray,
    doc_ids: list[str], passage_doc: np.ndarray,
) -> None:
    """ValueError unless a graph's columns have matching lengths and in-range indices."""
    n_ent, n_rel = len(entity_ids), len(relation_ids)
    if len(passage_doc) != len(passage_ids) or (
            len(passage_doc) and (passage_doc.min() < -1 or passage_doc.max() >= len(doc_ids))):
        raise ValueError("passage documents out of range")
    if not (len(entity_names) == n_ent and len(relation_texts) == n_rel
            and len(subjects) == len(objects) == n_rel and len(passage_indptr) == n_rel + 1
            and passage_indptr[0] == 0 and passage_indptr[-1] == len(passage_index)):
        raise ValueError("graph arrays of different lengths")
    for ends, bound in ((subjects, n_ent), (objects, n_ent), (passage_index, len(passage_ids))):
        if len(ends) and (ends.min() < 0 or ends.max() >= bound):
            raise ValueError("graph array index out of range")
    if np.any(np.diff(passage_indptr) < 0):
        raise ValueError("graph passage offsets decrease")


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
