"""The `seed` method: the reference method (docs/methods.md, "The reference method") with its
LLM rerank replaced by question–relation cosine.

Entity search for the question's entities and relation search for the question give seeds;
expansion to degree d gives candidate relations; the best candidates by cosine give passages.
`seed_relations` (the expansion) is shared with the LLM method.
"""

from __future__ import annotations

import numpy as np

from hopgraph.identity import normalize
from hopgraph.lexicon.link import EntityMatch
from hopgraph.records import PassageHit, RelationHit, Retrieval
from hopgraph.retrieve import rank
from hopgraph.retrieve.context import Clock, Context, link_query
from hopgraph.retrieve.query import Query


def seed_relations(ctx: Context, qvec: np.ndarray, matches: list[EntityMatch], degree: int,
                   clock: Clock, extra_names: list[str] | None = None) -> np.ndarray:
    """Entity and relation search, then expansion around them: candidate relation indices."""
    with clock.stage("search_graph"):
        seed_entities = sorted({m.index for m in matches})
        names = [ctx.graph.entity_names[i] for i in seed_entities] + (extra_names or [])
        # LLM names usually resolve to the entities already listed: embed each name once.
        unique: dict[str, str] = {}
        for name in names:
            unique.setdefault(normalize(name), name)
        names = list(unique.values())
        if names:
            for hits in ctx.search.entities(ctx.embedder.embed(names), rank.ENTITY_TOP_K):
                seed_entities.extend(e for e, score in hits.items()
                                     if score >= rank.ENTITY_MIN_SCORE)
        seeds = list(ctx.search.relations(qvec, rank.RELATION_TOP_K)[0])
    with clock.stage("expand"):
        return ctx.graph.expand(seed_entities, seeds, degree)


def run_seed(ctx: Context, query: Query, qvec: np.ndarray, clock: Clock) -> Retrieval:
    """Passages of the candidate relations closest to the question, best relation first."""
    linked = link_query(ctx, query, clock)
    top_k = query.top_k
    candidates = seed_relations(ctx, qvec, linked.matches, query.degree, clock)
    with clock.stage("rank"):
        scores = ctx.search.score_relations(qvec, candidates.tolist())
        ranked = sorted(scores.items(), key=lambda kv: -kv[1])
        passages: dict[str, PassageHit] = {}
        used: list[RelationHit] = []
        for r, score in ranked:
            if len(passages) >= top_k:
                break
            rel = ctx.graph.relations[r]
            used.append(RelationHit(rel.id, rel.text, score))
            for pid in rel.passage_ids:
                hit = passages.setdefault(pid, PassageHit(pid, "", score))
                hit.relations.append(rel.text)
                hit.via.append(rel.id)
    notes = []
    if len(passages) < top_k:  # too few relations with passages: top up by dense search
        notes.append(f"the graph gave {len(passages)} passages; the rest by dense search")
        floor = min((p.score for p in passages.values()), default=float("inf"))
        for pid, score in ctx.search.passages(qvec, top_k)[0].items():
            if len(passages) < top_k:
                passages.setdefault(pid, PassageHit(pid, "", min(score, floor)))
    chosen = list(passages.values())[:top_k]
    result = Retrieval(query.question, "seed", chosen, relations=used, notes=notes)
    return linked.attached_to(result, ctx.graph)
