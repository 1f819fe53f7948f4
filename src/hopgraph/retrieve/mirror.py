"""The in-process mirror: a graph's vectors searched exactly with NumPy, in this process.

For graphs up to `memory_limit` rows (see `search.make_searcher`): a Milvus Lite search is
slow, more so as the graph grows (benchmarks/RESULTS.md, "Search backends give the same
passages"), and the default method makes two to six. Entity, relation and passage vectors
are the vector files beside the snapshot, memory-mapped, when they are current; otherwise
they are scanned from Milvus once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from hopgraph.graph import KnowledgeGraph
from hopgraph.lexicon.lexical import LocalBM25, carried_bm25, passage_bm25
from hopgraph.records import Hit
from hopgraph.retrieve.scope import Scope, top_in_scope
from hopgraph.store import MilvusStore
from hopgraph.store.ann import Ann, fingerprint

log = logging.getLogger(__name__)


class _Matrix:
    """Unit vectors of one collection, in memory, with exact top-k, or, with a
    nearest-neighbour index (`ann`, large graphs: `store.ann`), top-k of its candidates
    scored exactly."""

    def __init__(self, ids: list[str], vectors: np.ndarray, ann: Ann | None = None) -> None:
        self.ids = ids
        self.vectors = vectors
        self.ann = ann
        self._row_of: tuple[bytes, np.ndarray] | None = None

    def scores(self, qvec: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Cosine of one query vector to the given rows: from the query's row of scores
        (`row`), or, with an index, from those rows alone (no query reads every vector)."""
        if self.ann is None:
            scores: np.ndarray = self.row(qvec)[rows]
            return scores
        query = np.ascontiguousarray(qvec, dtype=np.float32).reshape(-1)
        return np.asarray(self.vectors[rows], dtype=np.float32) @ query

    def row(self, qvec: np.ndarray) -> np.ndarray:
        """Cosine of one query vector to every row (the last query's row is kept: the
        default method scores the same question against several relation sets)."""
        query = np.ascontiguousarray(qvec, dtype=np.float32).reshape(-1)
        key = query.tobytes()
        cached = self._row_of  # one read: another thread may replace it meanwhile
        if cached is not None and cached[0] == key:
            return cached[1]
        row = self.vectors @ query
        self._row_of = (key, row)
        return row

    def top(self, qvecs: np.ndarray, limit: int, by_row: bool = False
            ) -> list[list[tuple[int, float]]]:
        """Top-`limit` rows per query; `by_row` computes each query's scores with `row`, so
        they equal what `row` gives later for the same query (with an index, `scores`)."""
        if self.ann is not None:
            return [self.ann.search(self.vectors, q, limit) for q in qvecs]
        if by_row:
            scores = np.vstack([self.row(q) for q in qvecs]) if len(qvecs) else np.zeros(
                (0, len(self.ids)), dtype=np.float32)
        else:
            scores = qvecs @ self.vectors.T
        limit = min(limit, scores.shape[1])
        out: list[list[tuple[int, float]]] = []
        for row in scores:
            if limit <= 0:
                out.append([])
                continue
            part = np.argpartition(-row, limit - 1)[:limit]
            order = part[np.argsort(-row[part])]
            out.append([(int(i), float(row[i])) for i in order])
        return out

    def top_among(self, qvecs: np.ndarray, rows: np.ndarray, limit: int
                  ) -> list[list[tuple[int, float]]]:
        """Top-`limit` of the given rows per query (a scope's): only those rows are scored
        when they are few, else every row and then those."""
        if len(rows) * 2 < len(self.ids):
            scores = qvecs @ self.vectors[rows].T
        else:
            scores = (qvecs @ self.vectors.T)[:, rows]
        every = np.ones(len(rows), dtype=bool)
        return [[(int(rows[i]), s) for i, s in top_in_scope(row, every, limit)]
                for row in scores]


class MemorySearcher:
    """Exact search over vectors mirrored from Milvus, plus a local BM25 index."""

    def __init__(self, store: MilvusStore, graph: KnowledgeGraph,
                 vectors: dict[str, np.ndarray | None] | None = None,
                 known_texts: Mapping[str, str] | None = None,
                 previous: object | None = None, stale: frozenset[str] = frozenset(),
                 indexes: Callable[[], dict[str, Ann]] | None = None) -> None:
        """`known_texts`: passage texts still current from an earlier mirror (after a
        change only the new passages' texts are read from Milvus); `previous`: a searcher
        of an earlier state of the graph, whose BM25 index (if built) is brought up to date
        rather than built again (`stale`: passages whose text changed since); `indexes`:
        the nearest-neighbour indexes of the on-disk vectors (`store.ann`), by kind."""
        self.store = store
        self.graph = graph
        started = time.perf_counter()
        vectors = vectors or {}
        self.scanned: list[str] = []  # kinds read from Milvus rather than from disk
        self._relations = self._load(store.relations, graph.relation_ids, graph.relation_index,
                                     vectors.get("relations"), "relations")
        self._entities = self._load(store.entities, graph.entity_ids, graph.entity_index,
                                    vectors.get("entities"), "entities")
        texts: dict[str, str] = {}
        self._passages = self._load(store.passages, graph.passage_ids, graph.passage_index,
                                    vectors.get("passages"), "passages", texts,
                                    known_texts or {})
        self.use_indexes(indexes() if indexes is not None else {})
        ids = self._passages.ids
        earlier = getattr(previous, "bm25", None)
        if earlier is not None:
            self._bm25 = carried_bm25(earlier, ids, set(stale),
                                      lambda wanted: {p: texts[p] for p in wanted if p in texts})
        else:
            self._bm25 = passage_bm25([(pid, texts[pid]) for pid in ids if pid in texts])
        self._texts = texts
        log.info("mirrored %d relations, %d entities, %d passages in memory in %.1fs",
                 len(self._relations.ids), len(self._entities.ids), len(ids),
                 time.perf_counter() - started)

    def use_indexes(self, found: dict[str, Ann]) -> None:
        """Search with these nearest-neighbour indexes of the vector files, by kind (kinds
        read from Milvus instead have none). A search already under way may have used
        either: both score every row they return exactly."""
        for kind, ann in found.items():
            matrix = getattr(self, f"_{kind}")
            if (kind not in self.scanned and len(matrix.ids) == len(matrix.vectors)
                    and ann.covered <= len(matrix.vectors)
                    and fingerprint(matrix.vectors[:ann.covered]) == ann.print_):
                matrix.ann = ann  # (an index of these very rows: a file may have changed)

    def _load(self, collection: str, ids: list[str], index: dict[str, int],
              on_disk: np.ndarray | None, kind: str, texts: dict[str, str] | None = None,
              known: Mapping[str, str] | None = None) -> _Matrix:
        """Vectors in the graph's own row order (position = entity/relation/passage index):
        the vector file itself when it is current (a read-only memory map: nothing is copied
        or parsed, and processes on one graph share the pages), else scanned from Milvus.
        With `texts`, the rows' texts are read into it in the same scan, or, when most are
        `known`, only the others, by id."""
        current = on_disk is not None and len(on_disk) == len(ids)
        if current and texts is not None and known:
            missing = [i for i in ids if i not in known]
            if len(missing) <= len(ids) // 2:
                texts.update((i, known[i]) for i in ids if i in known)
                texts.update((row["id"], row["text"])
                             for row in self.store.get(collection, missing, ["id", "text"]))
                texts.update((row["id"], row["text"]) for row in self.store.missed(
                    collection, missing, texts, ["id", "text"]))
                return _Matrix(list(ids), np.asarray(on_disk, dtype=np.float32))
        if current:
            matrix = np.asarray(on_disk, dtype=np.float32)
        else:
            self.scanned.append(kind)
            matrix = np.zeros((len(ids), int(self.store.meta["dim"])), dtype=np.float32)
        if not current or texts is not None:
            fields = ["id", *(["text"] if texts is not None else []),
                      *([] if current else ["vector"])]
            seen: set[str] = set()

            def take(rows: Iterable[dict[str, Any]]) -> None:
                for row in rows:
                    position = index.get(row["id"])
                    if position is None:  # not in this graph (another process wrote it since)
                        continue
                    seen.add(row["id"])
                    if texts is not None:
                        texts[row["id"]] = row["text"]
                    if not current:
                        matrix[position] = row["vector"]

            take(self.store.scan(collection, fields))
            take(self.store.missed(collection, ids, seen, fields))  # (a session scan's lag)
        return _Matrix(list(ids), matrix)

    def matrices(self) -> dict[str, np.ndarray]:
        """The mirrored vectors of each kind, in graph order (to save to disk)."""
        return {"entities": self._entities.vectors, "relations": self._relations.vectors,
                "passages": self._passages.vectors}

    def relations(self, qvecs: np.ndarray, limit: int, scope: Scope | None = None
                  ) -> list[dict[int, float]]:
        """Top-`limit` relations per query vector (in `scope`), by relation index."""
        if scope is not None:  # from the question's row of scores, as `score_relations`
            return [dict(top_in_scope(self._relations.row(q), scope.relations, limit))
                    for q in qvecs]
        return [dict(row) for row in self._relations.top(qvecs, limit, by_row=True)]

    def score_relations(self, qvec: np.ndarray, relations: list[int]) -> dict[int, float]:
        """Cosine of one query vector to each given relation: read from the query's row of
        scores against every relation (computed once per question, whatever the set)."""
        if not relations:
            return {}
        scores = self._relations.scores(qvec, np.asarray(relations, dtype=np.int64))
        return dict(zip(relations, scores.tolist(), strict=True))

    def entities(self, qvecs: np.ndarray, limit: int, scope: Scope | None = None
                 ) -> list[dict[int, float]]:
        """Top-`limit` entities per query vector (in `scope`), by entity index."""
        if scope is not None:
            return [dict(row) for row in
                    self._entities.top_among(qvecs, scope.rows("entities"), limit)]
        return [dict(row) for row in self._entities.top(qvecs, limit)]

    def passages(self, qvecs: np.ndarray, limit: int, scope: Scope | None = None
                 ) -> list[dict[str, float]]:
        """Top-`limit` passages per query vector (in `scope`), by passage id."""
        ids = self._passages.ids
        found = (self._passages.top(qvecs, limit) if scope is None else
                 self._passages.top_among(qvecs, scope.rows("passages"), limit))
        return [{ids[i]: s for i, s in row} for row in found]

    def score_passages(self, qvecs: np.ndarray, passage_ids: list[str]
                       ) -> list[dict[str, float]]:
        """Cosine of each query vector to each given passage of the graph (its mirrored
        unit vector)."""
        index = self.graph.passage_index
        wanted = [pid for pid in passage_ids if pid in index]
        if not wanted:
            return [{} for _ in qvecs]
        rows = np.fromiter((index[pid] for pid in wanted), dtype=np.int64, count=len(wanted))
        scores = np.asarray(qvecs, dtype=np.float32) @ self._passages.vectors[rows].T
        return [dict(zip(wanted, row.tolist(), strict=True)) for row in scores]

    def lexical(self, queries: list[str], limit: int, scope: Scope | None = None
                ) -> list[list[Hit]]:
        """Top-`limit` passages per query by local BM25 (in `scope`)."""
        allowed = None if scope is None else scope.passage_ids
        return self._bm25.search_many(queries, limit, allowed)

    def name_shares(self, names: list[str]) -> list[float]:
        """For each name, the largest share of all passages that can hold it
        (`LocalBM25.share`)."""
        return [self._bm25.share(name) for name in names]

    @property
    def bm25(self) -> LocalBM25:
        """The BM25 index (a later searcher may carry it over)."""
        return self._bm25

    @property
    def passage_texts(self) -> dict[str, str]:
        """Every passage's text, by id (what a later mirror may start from)."""
        return self._texts

    def texts(self, passage_ids: list[str]) -> dict[str, str]:
        """Passage texts by id, from the mirror."""
        return {pid: self._texts[pid] for pid in passage_ids if pid in self._texts}

    def sentence_vectors(self, sentence_ids: list[str]) -> dict[str, np.ndarray]:
        """Stored sentence vectors by id, read from Milvus (not mirrored: a query needs
        those of its few candidates, which `retrieve.sentences` keeps)."""
        return self.store.vectors(self.store.sentences, sentence_ids) if sentence_ids else {}
