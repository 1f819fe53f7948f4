"""The query pipeline: question → entities and relations → expansion → ranking → passages.

Methods (all LLM-free):
- ``naive``: dense passage search with the question (the comparison baseline);
- ``naive_lexical``: dense plus a BM25 term;
- ``seed``: the reference method with the LLM rerank replaced by question–relation cosine;
- ``default``: graph-guided re-query through bridge entities (see `hopgraph.rank`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

import numpy as np

from hopgraph import rank
from hopgraph.embed import Embedder
from hopgraph.graph import KnowledgeGraph
from hopgraph.lexical import LexicalSearch
from hopgraph.link import EntityLinker, EntityMatch
from hopgraph.store import Hit, MilvusStore

METHODS = ("default", "naive", "naive_lexical", "seed")


@dataclass
class RelationHit:
    """A relation that led to a passage, with its ranking score."""

    id: str
    text: str
    score: float


@dataclass
class PassageHit:
    """A retrieved passage, its score, and the relations that led to it (graph methods)."""

    id: str
    text: str
    score: float
    relations: list[str] = field(default_factory=list)


@dataclass
class Retrieval:
    """Everything one retrieval found, and how long each stage took."""

    question: str
    method: str
    passages: list[PassageHit]
    entities: list[dict[str, object]] = field(default_factory=list)
    relations: list[RelationHit] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        """Plain-JSON view."""
        return asdict(self)


class _Clock:
    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = self.ms.get(name, 0.0) + (time.perf_counter() - started) * 1000


class Retriever:
    """Runs the retrieval methods over one stored graph."""

    def __init__(self, store: MilvusStore, graph: KnowledgeGraph, embedder: Embedder) -> None:
        self.store = store
        self.graph = graph
        self.embedder = embedder
        self.lexical = LexicalSearch(store)
        self._linker: EntityLinker | None = None

    @property
    def linker(self) -> EntityLinker:
        """Entity-name index over the graph, built on first use."""
        if self._linker is None:
            self._linker = EntityLinker(self.graph.entity_names)
        return self._linker

    def retrieve(self, question: str, top_k: int = 5, degree: int = 1,
                 entities: list[str] | None = None, method: str = "default") -> Retrieval:
        """Retrieve the `top_k` passages for `question` with the named method."""
        if method not in METHODS:
            raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
        if not question.strip():
            raise ValueError("the question is empty")
        if top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
        clock = _Clock()
        started = time.perf_counter()
        with clock.stage("embed_question"):
            qvec = self.embedder.embed([question])
        if method in ("naive", "naive_lexical"):
            result = self._naive(question, qvec, top_k, clock, lexical=method == "naive_lexical")
        else:
            with clock.stage("link_entities"):
                matches = self._query_entities(question, entities)
            if method == "seed":
                result = self._seed(question, qvec, matches, top_k, degree, clock)
            else:
                result = self._default(question, qvec, matches, top_k, degree, clock)
            result.entities = [
                {"name": m.name, "matched": m.matched, "how": m.how, "score": round(m.score, 3)}
                for m in matches
            ]
        with clock.stage("fetch_passages"):
            self._fill_texts(result.passages)
        clock.ms["total"] = (time.perf_counter() - started) * 1000
        result.timings_ms = {k: round(v, 2) for k, v in clock.ms.items()}
        return result

    # --- pieces ----------------------------------------------------------------------------

    def _query_entities(self, question: str, given: list[str] | None) -> list[EntityMatch]:
        if not given:
            return self.linker.link(question)
        matches: list[EntityMatch] = []
        for name in given:
            matches.extend(self.linker.resolve(name))
        return matches

    def _dense_passages(self, qvecs: np.ndarray, limit: int) -> list[list[Hit]]:
        return self.store.search(self.store.passages, qvecs, limit)

    def _fill_texts(self, passages: list[PassageHit]) -> None:
        rows = self.store.get(self.store.passages, [p.id for p in passages], ["id", "text"])
        text = {row["id"]: row["text"] for row in rows}
        for p in passages:
            p.text = text.get(p.id, "")

    def _naive(self, question: str, qvec: np.ndarray, top_k: int, clock: _Clock,
               lexical: bool) -> Retrieval:
        pool = max(top_k, rank.POOL)
        with clock.stage("search_passages"):
            dense = self._dense_passages(qvec, pool if lexical else top_k)[0]
        scores = {h.id: h.score for h in dense}
        if lexical:
            with clock.stage("search_lexical"):
                bm25 = self.lexical.search([question], pool)[0]
            scores = rank.fuse_lexical(scores, bm25)
        best = sorted(scores.items(), key=lambda kv: -kv[1])[:top_k]
        method = "naive_lexical" if lexical else "naive"
        return Retrieval(question, method, [PassageHit(pid, "", s) for pid, s in best])

    def _seed_relations(self, qvec: np.ndarray, matches: list[EntityMatch], degree: int,
                        clock: _Clock) -> tuple[np.ndarray, list[Hit]]:
        """SPEC steps 4-6: entity and relation search, then expansion around them."""
        with clock.stage("search_graph"):
            seed_entities = sorted({m.index for m in matches})
            names = [self.graph.entity_names[i] for i in seed_entities]
            if names:
                for hits in self.store.search(self.store.entities, self.embedder.embed(names),
                                              rank.ENTITY_TOP_K):
                    seed_entities.extend(self.graph.entity_index[h.id] for h in hits
                                         if h.id in self.graph.entity_index
                                         and h.score >= rank.ENTITY_MIN_SCORE)
            relation_hits = self.store.search(self.store.relations, qvec, rank.RELATION_TOP_K)[0]
            seed_relations = [self.graph.relation_index[h.id] for h in relation_hits
                              if h.id in self.graph.relation_index]
        with clock.stage("expand"):
            expansion = self.graph.expand(seed_entities, seed_relations, degree)
        return expansion.relations, relation_hits

    def _seed(self, question: str, qvec: np.ndarray, matches: list[EntityMatch], top_k: int,
              degree: int, clock: _Clock) -> Retrieval:
        candidates, _ = self._seed_relations(qvec, matches, degree, clock)
        with clock.stage("rank"):
            ids = [self.graph.relations[r].id for r in candidates.tolist()]
            ranked = self.store.search(self.store.relations, qvec, len(ids), ids=ids)[0]
            relations = [RelationHit(h.id, self.graph.relations[self.graph.relation_index[h.id]]
                                     .text, h.score) for h in ranked]
            passages: dict[str, PassageHit] = {}
            for rel in relations:
                for pid in self.graph.relations[self.graph.relation_index[rel.id]].passage_ids:
                    hit = passages.setdefault(pid, PassageHit(pid, "", rel.score))
                    hit.relations.append(rel.text)
                if len(passages) >= top_k:
                    break
        chosen = list(passages.values())[:top_k]
        return Retrieval(question, "seed", chosen, relations=relations[: 2 * top_k])

    def _default(self, question: str, qvec: np.ndarray, matches: list[EntityMatch], top_k: int,
                 degree: int, clock: _Clock) -> Retrieval:
        raise NotImplementedError
