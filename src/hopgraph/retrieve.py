"""The query pipeline: question → entities and relations → expansion → ranking → passages.

Methods (all LLM-free):
- ``naive``: dense passage search with the question (the comparison baseline);
- ``naive_lexical``: dense plus a BM25 term;
- ``seed``: the reference method with the LLM rerank replaced by question–relation cosine;
- ``default``: graph-guided re-query through bridge entities (see `hopgraph.bridge`).

With an LLM client, ``llm`` follows the reference method: LLM query entities, expansion,
one LLM rerank of the candidates (shown in the offline ranking's order), passages from the
chosen relations filled up from the offline ranking; any LLM failure falls back to the
offline ranking and says so in ``notes`` and ``llm["fallback"]``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

import numpy as np

from hopgraph import bridge, llmrank, rank
from hopgraph.embed import Embedder
from hopgraph.graph import KnowledgeGraph
from hopgraph.identity import normalize
from hopgraph.link import EntityLinker, EntityMatch
from hopgraph.llm import LLMClient
from hopgraph.search import Searcher

OFFLINE_METHODS = ("default", "naive", "naive_lexical", "seed")
METHODS = (*OFFLINE_METHODS, "llm")


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
    llm: dict[str, object] | None = None  # what the LLM did, when one was used

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

    def __init__(self, graph: KnowledgeGraph, embedder: Embedder, searcher: Searcher,
                 llm: LLMClient | None = None) -> None:
        self.graph = graph
        self.embedder = embedder
        self.search = searcher
        self.llm = llm
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
        if method == "llm" and self.llm is None:
            raise ValueError("method 'llm' needs an LLM: set HOPGRAPH_LLM_MODEL or pass --llm")
        clock = _Clock()
        started = time.perf_counter()
        with clock.stage("embed_question"):
            qvec = self.embedder.embed([question])
        if method in ("naive", "naive_lexical"):
            result = self._naive(question, qvec, top_k, clock, lexical=method == "naive_lexical")
        elif method == "llm":
            result = self._llm(question, qvec, top_k, degree, entities, clock)
        else:
            link_notes: list[str] = []
            with clock.stage("link_entities"):
                matches = self._query_entities(question, entities, link_notes)
            if method == "seed":
                result = self._seed(question, qvec, matches, top_k, degree, clock)
            else:
                result = self._default(question, qvec, matches, top_k, clock)
            result.notes[:0] = link_notes
            result.entities = _entity_dicts(matches)
        with clock.stage("fetch_passages"):
            self._fill_texts(result.passages)
        clock.ms["total"] = (time.perf_counter() - started) * 1000
        result.timings_ms = {k: round(v, 2) for k, v in clock.ms.items()}
        return result

    # --- pieces ----------------------------------------------------------------------------

    def _query_entities(self, question: str, given: list[str] | None,
                        notes: list[str]) -> list[EntityMatch]:
        """Given names resolved to graph entities, else entities linked from the question."""
        if not given:
            return self.linker.link(question)
        matches: list[EntityMatch] = []
        for name in given:
            found = self.linker.resolve(name)
            if not found:
                notes.append(f"entity {name!r} is not in the graph")
            matches.extend(found)
        if not matches:
            notes.append("no given entity is in the graph; entities linked from the question")
            return self.linker.link(question)
        return matches

    def _fill_texts(self, passages: list[PassageHit]) -> None:
        text = self.search.texts([p.id for p in passages])
        for p in passages:
            p.text = text.get(p.id, "")

    def _naive(self, question: str, qvec: np.ndarray, top_k: int, clock: _Clock,
               lexical: bool) -> Retrieval:
        pool = max(top_k, rank.POOL)
        with clock.stage("search_passages"):
            scores = self.search.passages(qvec, pool if lexical else top_k)[0]
        if lexical:
            with clock.stage("search_lexical"):
                bm25 = self.search.lexical([question], pool)[0]
            scores = rank.with_lexical(scores, bm25)
        best = sorted(scores.items(), key=lambda kv: -kv[1])[:top_k]
        method = "naive_lexical" if lexical else "naive"
        return Retrieval(question, method, [PassageHit(pid, "", s) for pid, s in best])

    def _seed_relations(self, qvec: np.ndarray, matches: list[EntityMatch], degree: int,
                        clock: _Clock, extra_names: list[str] | None = None) -> np.ndarray:
        """SPEC steps 4-6: entity and relation search, then expansion around them."""
        with clock.stage("search_graph"):
            seed_entities = sorted({m.index for m in matches})
            names = [self.graph.entity_names[i] for i in seed_entities] + (extra_names or [])
            # LLM names usually resolve to the entities already listed: embed each name once.
            unique: dict[str, str] = {}
            for name in names:
                unique.setdefault(normalize(name), name)
            names = list(unique.values())
            if names:
                for hits in self.search.entities(self.embedder.embed(names), rank.ENTITY_TOP_K):
                    seed_entities.extend(e for e, score in hits.items()
                                         if score >= rank.ENTITY_MIN_SCORE)
            seed_relations = list(self.search.relations(qvec, rank.RELATION_TOP_K)[0])
        with clock.stage("expand"):
            expansion = self.graph.expand(seed_entities, seed_relations, degree)
        return expansion.relations

    def _seed(self, question: str, qvec: np.ndarray, matches: list[EntityMatch], top_k: int,
              degree: int, clock: _Clock) -> Retrieval:
        candidates = self._seed_relations(qvec, matches, degree, clock)
        with clock.stage("rank"):
            scores = self.search.score_relations(qvec, candidates.tolist())
            ranked = sorted(scores.items(), key=lambda kv: -kv[1])
            passages: dict[str, PassageHit] = {}
            used: list[RelationHit] = []
            for r, score in ranked:
                if len(passages) >= top_k:
                    break
                rel = self.graph.relations[r]
                used.append(RelationHit(rel.id, rel.text, score))
                for pid in rel.passage_ids:
                    hit = passages.setdefault(pid, PassageHit(pid, "", score))
                    hit.relations.append(rel.text)
        notes = []
        if len(passages) < top_k:  # too few relations with passages: top up by dense search
            notes.append(f"the graph gave {len(passages)} passages; the rest by dense search")
            floor = min((p.score for p in passages.values()), default=float("inf"))
            for pid, score in self.search.passages(qvec, top_k)[0].items():
                if len(passages) < top_k:
                    passages.setdefault(pid, PassageHit(pid, "", min(score, floor)))
        chosen = list(passages.values())[:top_k]
        return Retrieval(question, "seed", chosen, relations=used, notes=notes)

    def _default(self, question: str, qvec: np.ndarray, matches: list[EntityMatch], top_k: int,
                 clock: _Clock) -> Retrieval:
        linked = {m.index for m in matches}
        with clock.stage("search_graph"):
            scores = self.search.relations(qvec, bridge.RELATION_POOL)[0]
            own = [r for r in self.graph.relations_of(np.array(sorted(linked))).tolist()
                   if r not in scores]
            scores.update(self.search.score_relations(qvec, own))
        with clock.stage("bridges"):
            finder = bridge.BridgeFinder(self.graph, question, linked)
            probes = finder.bridges(scores)
            if probes:
                probes += self._chain(question, qvec, finder, probes, scores)
        with clock.stage("embed_probes"):
            vectors = np.vstack([qvec, self.embedder.embed([p.text for p in probes])])
        pool = max(top_k, rank.POOL)
        with clock.stage("search_passages"):
            dense = self.search.passages(vectors, pool)
        with clock.stage("search_lexical"):
            lexical = self.search.lexical([question] + [p.text for p in probes], pool)
        with clock.stage("rank"):
            per_search = [rank.with_lexical(d, lx) for d, lx in zip(dense, lexical, strict=True)]
            merged = bridge.merge_searches(
                per_search[0], list(zip(probes, per_search[1:], strict=True)),
                {p.entity: self.graph.passages_of_entity(p.entity) for p in probes},
            )
            best = sorted(merged.items(), key=lambda kv: -kv[1].score)[:top_k]
            passages = [PassageHit(pid, "", s.score, self._evidence(s.probe))
                        for pid, s in best]
        relations = [RelationHit(self.graph.relations[p.relation].id,
                                 self.graph.relations[p.relation].text, p.confidence)
                     for p in probes]
        notes = [] if probes else ["no bridge entity found; dense + lexical ranking only"]
        return Retrieval(question, "default", passages, relations=relations, notes=notes)

    def _chain(self, question: str, qvec: np.ndarray, finder: bridge.BridgeFinder,
               probes: list[bridge.Probe], scores: dict[int, float]) -> list[bridge.Probe]:
        """Third-hop probes: neighbours of the best bridge, ranked by path score."""
        first = probes[0]
        around = self.graph.relations_of(np.array([first.entity])).tolist()
        inner = [first.entity]
        if around == [first.relation]:  # a dead end: go on from the names inside its name
            inner = self._and_inner(first.entity)
            around = self.graph.relations_of(np.array(inner)).tolist()
        scores.update(self.search.score_relations(qvec, [r for r in around if r not in scores]))
        candidates = finder.chain_candidates(first, {r: scores.get(r, 0.0) for r in around},
                                             {p.entity for p in probes}, set(inner))
        onward_rels = {c[0]: [r for r in self.graph.relations_of(np.array([c[0]])).tolist()
                              if r != c[2]] for c in candidates}
        missing = sorted({r for rels in onward_rels.values() for r in rels} - scores.keys())
        scores.update(self.search.score_relations(qvec, missing))
        onward = {e: max((scores.get(r, 0.0) for r in rels), default=0.0)
                  for e, rels in onward_rels.items()}
        return finder.chain(first, candidates, onward)

    def _and_inner(self, entity: int) -> list[int]:
        """An entity and the entities named inside its name.

        Extracted names vary: "Johann Bernoulli's influence" is its own node, with one
        relation, while the facts are on "Johann Bernoulli". Walking on from both lets a
        third hop start from a bridge that was found under a longer name. Used only for
        dead ends: for a bridge with relations of its own, inner names are usually other
        things ("Mississippi" inside "Mississippi River").
        """
        inner = {m.index for m in self.linker.link(self.graph.entity_names[entity], whole=False)}
        return sorted(inner | {entity})

    def _llm(self, question: str, qvec: np.ndarray, top_k: int, degree: int,
             given: list[str] | None, clock: _Clock) -> Retrieval:
        assert self.llm is not None
        notes: list[str] = []
        info: dict[str, object] = {"model": self.llm.settings.model, "fallback": None}
        names = given
        if not given:
            with clock.stage("llm_entities"):
                try:
                    names = llmrank.query_entities(self.llm, question)
                except llmrank.Fallback as exc:
                    notes.append(f"{exc}; entities linked from the question instead")
        info["entities"] = names
        with clock.stage("link_entities"):
            matches = self._query_entities(question, names, notes)
        candidates = self._seed_relations(qvec, matches, degree, clock, extra_names=names)
        offline = self._default(question, qvec, matches, max(top_k, rank.POOL), clock)
        with clock.stage("rank"):
            facts = self._ordered_candidates(qvec, candidates.tolist(), offline)
        with clock.stage("llm_rerank"):
            try:
                choice = llmrank.choose_relations(
                    self.llm, question, [self.graph.relations[r].text for r, _ in facts])
            except llmrank.Fallback as exc:
                choice = None
                info["fallback"] = str(exc)
                notes.append(f"LLM rerank fell back to the offline ranking: {exc}")
        info["usage"] = self.llm.usage.as_dict()
        if choice is None:
            offline.passages = offline.passages[:top_k]
            offline.method, offline.notes, offline.llm = "llm", notes + offline.notes, info
            offline.entities = _entity_dicts(matches)
            return offline
        info["thought_process"] = choice.thought
        chosen = [facts[i] for i in choice.chosen]
        passages: dict[str, PassageHit] = {}
        for r, score in chosen:
            rel = self.graph.relations[r]
            for pid in rel.passage_ids:
                passages.setdefault(pid, PassageHit(pid, "", score)).relations.append(rel.text)
        for hit in offline.passages:  # fill up from the offline ranking
            passages.setdefault(hit.id, hit)
        relations = [RelationHit(self.graph.relations[r].id, self.graph.relations[r].text, s)
                     for r, s in chosen]
        result = Retrieval(question, "llm", list(passages.values())[:top_k],
                           relations=relations, notes=notes, llm=info)
        result.entities = _entity_dicts(matches)
        return result

    def _ordered_candidates(self, qvec: np.ndarray, candidates: list[int],
                            offline: Retrieval) -> list[tuple[int, float]]:
        """Candidate relations in the offline ranking's order, capped for the prompt.

        A relation ranks by the best offline rank of its passages (relations behind the
        passages the offline method put first come first), then by cosine to the question.
        """
        rank_of = {p.id: i for i, p in enumerate(offline.passages)}
        probe_rels = [self.graph.relation_index[r.id] for r in offline.relations]
        pool = list(dict.fromkeys(candidates + probe_rels))
        scores = self.search.score_relations(qvec, pool)
        far = len(rank_of)
        key = {r: (min((rank_of.get(p, far) for p in self.graph.relations[r].passage_ids),
                       default=far), -scores.get(r, 0.0)) for r in pool}
        ordered = sorted(pool, key=key.__getitem__)[: llmrank.CANDIDATE_LIMIT]
        return [(r, scores.get(r, 0.0)) for r in ordered]

    def _evidence(self, probe: bridge.Probe | None) -> list[str]:
        """The relation that led to a passage's best probe, as shown to users."""
        if probe is None:
            return []
        name = self.graph.entity_names[probe.entity]
        return [f"{self.graph.relations[probe.relation].text}  (bridge: {name})"]


def _entity_dicts(matches: list[EntityMatch]) -> list[dict[str, object]]:
    return [{"name": m.name, "matched": m.matched, "how": m.how, "score": round(m.score, 3)}
            for m in matches]
