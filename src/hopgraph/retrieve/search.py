"""Vector and lexical search over one graph, in Milvus or in an in-process mirror.

Milvus is the store of record. A Milvus Lite search, though, is slow on this kind of
machine (benchmarks/RESULTS.md, "Search backends give the same passages"), a large share of
the default method's per-question budget, which makes four to six searches. So for graphs up to
`memory_limit` rows the vectors are mirrored in memory (`mirror.MemorySearcher`) and
searched exactly with NumPy; larger graphs, or `memory_limit=0`, search in Milvus itself.

Both return the same passages (tested on MuSiQue questions): Milvus searches ask HNSW for a
candidate list large enough to be exact (`store.schema.search_ef`), relations of known ids are
scored from their stored vectors rather than by a filtered search, and BM25 is the same local
index on both (`lexical`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np

from hopgraph.config import mirror_rows
from hopgraph.embed.base import unit
from hopgraph.graph import KnowledgeGraph
from hopgraph.lexicon.lexical import LocalBM25, carried_bm25, passage_bm25
from hopgraph.records import Hit
from hopgraph.retrieve.mirror import MemorySearcher
from hopgraph.retrieve.scope import Scope, top_in_scope
from hopgraph.retrieve.vector_cache import VectorCache
from hopgraph.store import MAX_TOP_K, MilvusStore
from hopgraph.store.ann import Ann
from hopgraph.store.vectors import KINDS

log = logging.getLogger(__name__)
SCORED_HERE = 20_000  # rows of a scope up to which Milvus searches are scored in-process
SCORED_THERE = 256  # relations not held here from which Milvus scores them (no vectors sent)

__all__ = ["MemorySearcher", "MilvusSearcher", "Searcher", "Searches", "make_searcher"]


class Searches(Protocol):
    """The searches the retrieval methods need (`Context.search`: a backend's, or a
    `scope.ScopedSearch` of one)."""

    def relations(self, qvecs: np.ndarray, limit: int) -> list[dict[int, float]]: ...

    def score_relations(self, qvec: np.ndarray, relations: list[int]) -> dict[int, float]: ...

    def entities(self, qvecs: np.ndarray, limit: int) -> list[dict[int, float]]: ...

    def passages(self, qvecs: np.ndarray, limit: int) -> list[dict[str, float]]: ...

    def score_passages(self, qvecs: np.ndarray, passage_ids: list[str]
                       ) -> list[dict[str, float]]: ...

    def lexical(self, queries: list[str], limit: int) -> list[list[Hit]]: ...

    def name_shares(self, names: list[str]) -> list[float]: ...

    def texts(self, passage_ids: list[str]) -> dict[str, str]: ...

    def sentence_vectors(self, sentence_ids: list[str]) -> dict[str, np.ndarray]: ...

    @property
    def bm25(self) -> LocalBM25 | None: ...


class Searcher(Searches, Protocol):
    """A search backend: the searches, each also inside a scope (`scope=`)."""

    def relations(self, qvecs: np.ndarray, limit: int, scope: Scope | None = None
                  ) -> list[dict[int, float]]: ...

    def entities(self, qvecs: np.ndarray, limit: int, scope: Scope | None = None
                 ) -> list[dict[int, float]]: ...

    def passages(self, qvecs: np.ndarray, limit: int, scope: Scope | None = None
                 ) -> list[dict[str, float]]: ...

    def score_passages(self, qvecs: np.ndarray, passage_ids: list[str]
                       ) -> list[dict[str, float]]: ...

    def lexical(self, queries: list[str], limit: int, scope: Scope | None = None
                ) -> list[list[Hit]]: ...


class MilvusSearcher:
    """Dense searches in Milvus (COSINE); known relations scored from their stored vectors;
    BM25 from the local index (`lexical`), as on every backend."""

    def __init__(self, store: MilvusStore, graph: KnowledgeGraph,
                 vectors: dict[str, np.ndarray | None] | None = None,
                 known_texts: Mapping[str, str] | None = None,
                 previous: Searcher | None = None, stale: frozenset[str] = frozenset()
                 ) -> None:
        """`previous`: a searcher of an earlier state of the graph, whose BM25 index (if it
        built one) is brought up to date here (`stale`: passages whose text changed since;
        `known_texts`: current texts, read before Milvus)."""
        self.store = store
        self.graph = graph
        self._bm25: LocalBM25 | None = None
        earlier = previous.bm25 if previous is not None else None
        if earlier is not None:
            known = known_texts or {}

            def text_of(ids: list[str]) -> dict[str, str]:
                found = {pid: known[pid] for pid in ids if pid in known}
                rest = [pid for pid in ids if pid not in found]
                found.update((row["id"], row["text"]) for row in
                             store.get(store.passages, rest, ["id", "text"], strong=True))
                return found

            self._bm25 = carried_bm25(earlier, graph.passage_ids, set(stale), text_of)
        # Relation vectors on disk in graph order (store.vectors), when they are current;
        # else those fetched from Milvus (the retriever pipeline hands the cache on to the
        # searchers of the graph's next states).
        self._relation_vectors = (vectors or {}).get("relations")
        self.vector_cache = VectorCache()

    def _indexed(self, hits: list[list[Hit]], index: dict[str, int]) -> list[dict[int, float]]:
        return [{index[h.id]: h.score for h in row if h.id in index} for row in hits]

    def relations(self, qvecs: np.ndarray, limit: int, scope: Scope | None = None
                  ) -> list[dict[int, float]]:
        """Top-`limit` relations per query vector (in `scope`), by relation index."""
        if scope is not None:
            return [self._in_scope("relations", q, limit, scope) for q in qvecs]
        hits = self.store.search(self.store.relations, qvecs, limit)
        return self._indexed(hits, self.graph.relation_index)

    def score_relations(self, qvec: np.ndarray, relations: list[int]) -> dict[int, float]:
        """Cosine of one query vector to each given relation: from their vectors when they
        are on disk or kept (`vector_cache`), else scored by Milvus (a search filtered to
        their ids, when there are at least SCORED_THERE, the first time they are wanted).
        A filtered search may leave rows out (it did on Milvus Lite: benchmarks/RESULTS.md,
        "Search backends give the same passages"); their vectors are fetched, as every
        relation needs a score.
        """
        if not relations:
            return {}
        if self._relation_vectors is not None:  # rows on disk: no Milvus round trip per id
            return _cosines(qvec, np.asarray(self._relation_vectors[relations]), relations)
        ids = [self.graph.relation_ids[r] for r in relations]
        scores = np.full(len(ids), np.nan)
        held, vectors, norms = self.vector_cache.gather(ids)
        if len(vectors):
            scores[held] = _cosine_row(qvec, vectors, norms)
        missing = [rid for rid, h in zip(ids, held.tolist(), strict=True) if not h]
        if missing:
            scored: dict[str, float] = {}
            if len(missing) >= SCORED_THERE:  # new ones scored by Milvus (vector_cache.admit)
                again = set(self.vector_cache.admit(missing))
                if first := [rid for rid in missing if rid not in again]:
                    scored = self.store.scores(self.store.relations, qvec, first)
            if rest := [rid for rid in missing if rid not in scored]:  # fetched and kept
                fetched = self.store.vectors(self.store.relations, rest)
                self.vector_cache.keep(fetched)
                if fetched:
                    scored.update(_cosines(qvec, np.vstack(list(fetched.values())),
                                           list(fetched)))
            at = {rid: i for i, rid in enumerate(ids)}
            for rid, score in scored.items():
                scores[at[rid]] = score
        # In the order asked (as the mirror gives them; `relations` are distinct); a relation
        # Milvus lacks is left out, as is a NaN score.
        return {r: s for r, s in zip(relations, scores.tolist(), strict=True) if s == s}

    def entities(self, qvecs: np.ndarray, limit: int, scope: Scope | None = None
                 ) -> list[dict[int, float]]:
        """Top-`limit` entities per query vector (in `scope`), by entity index."""
        if scope is not None:
            return [self._in_scope("entities", q, limit, scope) for q in qvecs]
        hits = self.store.search(self.store.entities, qvecs, limit)
        return self._indexed(hits, self.graph.entity_index)

    def passages(self, qvecs: np.ndarray, limit: int, scope: Scope | None = None
                 ) -> list[dict[str, float]]:
        """Top-`limit` passages per query vector, by passage id. With a `scope` of few
        passages, they are scored here from their stored vectors (read once per scope);
        with many, the filter runs in Milvus (its expression) and hits outside this graph
        version are dropped."""
        if scope is None:  # hits outside this graph version are dropped: a Session search
            # may miss this client's last delete (a 2.3 server gives a delete no timestamp,
            # so pymilvus's session timestamp stays at the last insert) and sees other
            # processes' writes before this version follows them
            index = self.graph.passage_index
            hits = self.store.search(self.store.passages, qvecs, limit)
            return [{h.id: h.score for h in row if h.id in index} for row in hits]
        if len(scope.rows("passages")) <= SCORED_HERE:
            ids = self.graph.passage_ids
            return [{ids[i]: s for i, s in self._in_scope("passages", q, limit, scope).items()}
                    for q in qvecs]
        hits = self.store.search(self.store.passages, qvecs, limit,
                                 condition=scope.expression)
        return [{h.id: h.score for h in row if h.id in scope.passage_ids} for row in hits]

    def score_passages(self, qvecs: np.ndarray, passage_ids: list[str]
                       ) -> list[dict[str, float]]:
        """Cosine of each query vector to each given passage of this graph version, from
        their stored vectors (fetched once for all the queries)."""
        index = self.graph.passage_index
        wanted = [pid for pid in passage_ids if pid in index]
        stored = self.store.vectors(self.store.passages, wanted) if wanted else {}
        found = [pid for pid in wanted if pid in stored]  # in the order asked
        if not found:
            return [{} for _ in qvecs]
        matrix = np.vstack([stored[pid] for pid in found])
        return [_cosines(q, matrix, found) for q in qvecs]

    def _in_scope(self, kind: str, qvec: np.ndarray, limit: int, scope: Scope
                  ) -> dict[int, float]:
        """Top-`limit` rows of one kind in scope for one query vector: scored here from
        their stored vectors when the scope holds few, else (entities, relations) Milvus's
        top rows asked for until enough of them are in scope (exact either way)."""
        rows, mask = scope.rows(kind), getattr(scope, kind)
        ids = {"relations": self.graph.relation_ids, "entities": self.graph.entity_ids,
               "passages": self.graph.passage_ids}[kind]
        if len(rows) > SCORED_HERE and kind != "passages":
            index = self.graph.relation_index if kind == "relations" else self.graph.entity_index
            collection = getattr(self.store, kind)
            fetch = limit
            while fetch < MAX_TOP_K:
                fetch = min(MAX_TOP_K, max(4 * fetch, 2 * limit * len(ids) // len(rows)))
                hits = self.store.search(collection, qvec.reshape(1, -1), fetch)[0]
                inside = [(index[h.id], h.score) for h in hits
                          if h.id in index and mask[index[h.id]]]
                if len(inside) >= limit or len(hits) < fetch:
                    return dict(inside[:limit])
        vectors = scope.kept(f"vectors:{kind}", lambda: self._vectors(kind, rows, ids))
        scores = vectors @ unit(np.asarray(qvec).reshape(1, -1)).reshape(-1)
        every = np.ones(len(rows), dtype=bool)
        return {int(rows[i]): s for i, s in top_in_scope(scores, every, limit)}

    def _vectors(self, kind: str, rows: np.ndarray, ids: list[str]) -> np.ndarray:
        """Unit vectors of the given rows (zeros for rows Milvus lacks), in that order."""
        if kind == "relations" and self._relation_vectors is not None:
            return unit(np.asarray(self._relation_vectors[rows], dtype=np.float32))
        wanted = [ids[r] for r in rows.tolist()]
        stored = self.store.vectors(getattr(self.store, kind), wanted)
        dim = int(self.store.meta["dim"])
        matrix = np.vstack([stored.get(i, np.zeros(dim, np.float32)) for i in wanted]
                           ) if wanted else np.zeros((0, dim), np.float32)
        return unit(matrix)

    def lexical(self, queries: list[str], limit: int, scope: Scope | None = None
                ) -> list[list[Hit]]:
        """Top-`limit` passages per query by BM25 (the local index, built on first use; in
        `scope`)."""
        allowed = None if scope is None else scope.passage_ids
        return self._lexicon().search_many(queries, limit, allowed)

    def name_shares(self, names: list[str]) -> list[float]:
        """For each name, the largest share of all passages that can hold it
        (`LocalBM25.share`)."""
        index = self._lexicon()
        return [index.share(name) for name in names]

    def _lexicon(self) -> LocalBM25:
        """The local BM25 index, built on first use."""
        if self._bm25 is None:  # the graph's passages (Milvus may hold newer ones)
            index = self.graph.passage_index
            pairs = [(row["id"], row["text"])
                     for row in self.store.scan(self.store.passages, ["id", "text"])
                     if row["id"] in index]
            self._bm25 = passage_bm25(pairs)
        return self._bm25

    @property
    def bm25(self) -> LocalBM25 | None:
        """The BM25 index, if built (a later searcher may carry it over)."""
        return self._bm25

    def texts(self, passage_ids: list[str]) -> dict[str, str]:
        """Passage texts by id, fetched from Milvus."""
        rows = self.store.get(self.store.passages, passage_ids, ["id", "text"])
        return {row["id"]: row["text"] for row in rows}

    def sentence_vectors(self, sentence_ids: list[str]) -> dict[str, np.ndarray]:
        """Stored sentence vectors by id (`hopgraph.sentences`; ids not stored are absent),
        read by id: a filter would walk every row on Milvus Lite."""
        return self.store.vectors(self.store.sentences, sentence_ids) if sentence_ids else {}


def _cosines(qvec: np.ndarray, matrix: np.ndarray, keys: list[Any]) -> dict[Any, float]:
    """Cosine of one query vector to each row, by the rows' keys (as Milvus's COSINE)."""
    matrix = np.asarray(matrix, dtype=np.float32)
    scores = _cosine_row(qvec, matrix, np.linalg.norm(matrix, axis=1))
    return dict(zip(keys, scores.tolist(), strict=True))


def _cosine_row(qvec: np.ndarray, matrix: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """Cosine of one query vector to each row of `matrix`, whose row norms are `norms`."""
    query = unit(np.asarray(qvec).reshape(1, -1)).reshape(-1)
    cosines: np.ndarray = _dots(matrix, query) / np.maximum(norms, 1e-12)
    return cosines


def _dots(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Each row's dot product with `query`, on this thread alone (einsum, not BLAS).

    After a product it ran on several threads, OpenBLAS keeps its worker threads spinning
    for a while: on a two-core machine that took a core from the Milvus server answering
    this process's next search (1M relations, a 2.3 server on the same machine: a question's
    relation search was markedly slower; benchmarks/RESULTS.md, "1M relations on a 2.3
    server") and from the other requests of a serving process. A scope's rows on one thread
    are cheap (the same section).
    """
    dots: np.ndarray = np.einsum("ij,j->i", matrix, query)
    return dots


def make_searcher(store: MilvusStore, graph: KnowledgeGraph, memory_limit: int | None,
                  vectors: dict[str, np.ndarray | None] | None = None,
                  scan: bool = True, known_texts: Mapping[str, str] | None = None,
                  previous: Searcher | None = None, stale: frozenset[str] = frozenset(),
                  indexes: Callable[[], dict[str, Ann]] | None = None) -> Searcher:
    """The in-process mirror when every collection is within `memory_limit` rows, else Milvus.

    `memory_limit` None: any size on Milvus Lite (its own search walks every row in Python,
    slow on large graphs: benchmarks/RESULTS.md, "Search backends give the same passages";
    the mirror's NumPy scan is always faster), and
    DEFAULT_MEMORY_LIMIT rows with a server (whose index beats a scan on large graphs;
    `config.mirror_rows`). A server graph's writer keeps no mirror past it (`store.vectors`).
    `vectors` are the current on-disk vectors (graph order), if any; with `scan=False` the
    mirror is used only when all of them are, never reading vectors back from Milvus.
    `known_texts`: passage texts an earlier mirror read that are still current; `previous`:
    the searcher of an earlier state of the graph, whose BM25 index is carried over
    (`stale`: passages whose text changed since). `indexes` gives the nearest-neighbour
    indexes of the vector files (`store.ann`), loaded only for the mirror.
    """
    memory_limit = mirror_rows(memory_limit, store.is_local)
    largest = max(len(graph.relation_ids), len(graph.entity_ids), len(graph.passage_ids))
    on_disk = vectors is not None and all(vectors.get(kind) is not None for kind in KINDS)
    if memory_limit > 0 and largest <= memory_limit and (scan or on_disk):
        return MemorySearcher(store, graph, vectors, known_texts, previous, stale, indexes)
    store.ensure_all_loaded()
    return MilvusSearcher(store, graph, vectors, known_texts, previous, stale)
