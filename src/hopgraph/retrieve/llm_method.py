"""The `llm` method: the reference method with an LLM (docs/llm.md, "The `llm` method").

The LLM names the question's entities; expansion gives candidate relations; they are shown to
the LLM in the offline ranking's order with short numeric ids; the passages of the relations
it chooses come first, filled up from the offline ranking. Any LLM failure falls back to the
offline ranking and says so in `notes` and `llm["fallback"]`.
"""

from __future__ import annotations

import numpy as np

from hopgraph.records import PassageHit, RelationHit, Retrieval
from hopgraph.retrieve import llm_steps, rank
from hopgraph.retrieve.context import Clock, Context, entity_dicts, query_entities
from hopgraph.retrieve.default import bridge_ranking
from hopgraph.retrieve.query import Query
from hopgraph.retrieve.seed import seed_relations


def run_llm(ctx: Context, query: Query, qvec: np.ndarray, clock: Clock) -> Retrieval:
    """LLM entities → expansion → LLM rerank → passages, with the offline ranking as fallback."""
    question, top_k, given = query.question, query.top_k, query.given_entities
    llm = ctx.llm
    assert llm is not None, "the pipeline checks for an LLM before dispatching here"
    notes: list[str] = []
    info: dict[str, object] = {"model": llm.settings.model, "fallback": None}
    names = given
    if not given:
        with clock.stage("llm_entities"):
            try:
                names = llm_steps.query_entities(llm, question)
            except llm_steps.Fallback as exc:
                notes.append(f"{exc}; entities linked from the question instead")
    info["entities"] = names
    with clock.stage("link_entities"):
        matches = query_entities(ctx, question, names, notes)
    candidates = seed_relations(ctx, qvec, matches, query.degree, clock, extra_names=names)
    offline = bridge_ranking(ctx, question, qvec, matches, max(top_k, rank.POOL), clock)
    with clock.stage("rank"):
        facts = _ordered_candidates(ctx, qvec, candidates.tolist(), offline)
    with clock.stage("llm_rerank"):
        try:
            choice = llm_steps.choose_relations(
                llm, question, [ctx.graph.relations[r].text for r, _ in facts])
        except llm_steps.Fallback as exc:
            choice = None
            info["fallback"] = str(exc)
            notes.append(f"LLM rerank fell back to the offline ranking: {exc}")
    info["usage"] = llm.usage.as_dict()
    if choice is None:
        offline.passages = offline.passages[:top_k]
        offline.method, offline.notes, offline.llm = "llm", notes + offline.notes, info
        offline.entities = entity_dicts(matches, ctx.graph)
        return offline
    info["thought_process"] = choice.thought
    chosen = [facts[i] for i in choice.chosen]
    passages: dict[str, PassageHit] = {}
    for r, score in chosen:
        rel = ctx.graph.relations[r]
        for pid in rel.passage_ids:
            hit = passages.setdefault(pid, PassageHit(pid, "", score))
            hit.relations.append(rel.text)
            hit.via.append(rel.id)
    for hit in offline.passages:  # fill up from the offline ranking
        passages.setdefault(hit.id, hit)
    relations = [RelationHit(ctx.graph.relations[r].id, ctx.graph.relations[r].text, s)
                 for r, s in chosen]
    result = Retrieval(question, "llm", list(passages.values())[:top_k],
                       relations=relations, notes=notes, llm=info)
    result.entities = entity_dicts(matches, ctx.graph)
    return result


def _ordered_candidates(ctx: Context, qvec: np.ndarray, candidates: list[int],
                        offline: Retrieval) -> list[tuple[int, float]]:
    """Candidate relations in the offline ranking's order, capped for the prompt.

    A relation ranks by the best offline rank of its passages (relations behind the passages
    the offline method put first come first), then by cosine to the question.
    """
    graph = ctx.graph
    rank_of = {p.id: i for i, p in enumerate(offline.passages)}
    probe_rels = [graph.relation_index[r.id] for r in offline.relations]
    pool = list(dict.fromkeys(candidates + probe_rels))
    scores = ctx.search.score_relations(qvec, pool)
    far = len(rank_of)
    key = {r: (min((rank_of.get(p, far) for p in graph.passages_of(r)),
                   default=far), -scores.get(r, 0.0)) for r in pool}
    ordered = sorted(pool, key=key.__getitem__)[: llm_steps.CANDIDATE_LIMIT]
    return [(r, scores.get(r, 0.0)) for r in ordered]
