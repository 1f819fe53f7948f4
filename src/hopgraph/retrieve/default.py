"""The `default` method: graph-guided re-query through bridge entities.

The question names its first entity but not the next ones; the graph proposes who the unnamed
"bridge" entities are (`bridge.BridgeFinder`), and each becomes a probe "question + bridge
name" that searches the passages again. docs/methods.md ("How the default method works")
explains each step and its constants. This module does the searching; `bridge` holds the choices.
"""

from __future__ import annotations

import numpy as np

from hopgraph.lexicon.link import EntityMatch
from hopgraph.records import Hit, PassageHit, RelationHit, Retrieval
from hopgraph.retrieve import bridge, fanout, posts, rank
from hopgraph.retrieve.context import Clock, Context, link_query
from hopgraph.retrieve.query import Query
from hopgraph.retrieve.sentences import with_sentences


def run_default(ctx: Context, query: Query, qvec: np.ndarray, clock: Clock) -> Retrieval:
    """The query's entities linked, then `bridge_ranking`."""
    linked = link_query(ctx, query, clock)
    result = bridge_ranking(ctx, query.question, qvec, linked.matches, query.top_k, clock)
    return linked.attached_to(result, ctx.graph)


def bridge_ranking(ctx: Context, question: str, qvec: np.ndarray, matches: list[EntityMatch],
                   top_k: int, clock: Clock) -> Retrieval:
    """The `top_k` passages by max-merged question and bridge-probe searches (the `llm`
    method's offline ranking too)."""
    graph = ctx.graph
    linked = {m.index for m in matches}
    with clock.stage("search_graph"):
        shares = ctx.search.name_shares([m.name for m in matches]) if matches else []
        common = [m for m, is_common in zip(
            matches, bridge.common_names(shares, len(graph.passage_ids)), strict=True)
            if is_common]
        rvec = _relation_vector(ctx, question, qvec, [m.matched for m in common])
        steps = fanout.Steps(graph, lambda n: ctx.search.relations(rvec, n)[0], ctx.fanout)
        scores = bridge.without_other_codes(graph, steps.best(bridge.RELATION_POOL), linked)
        # the relations of the names the question names are candidates too, but not those
        # of a common name: a company's own name has relations all over the folder, and
        # they crowd out those of the fact asked about
        uncommon = linked - {m.index for m in common}
        own = [r for r in steps.of(sorted(uncommon)).tolist() if r not in scores]
        scores.update(ctx.search.score_relations(rvec, own))
    with clock.stage("bridges"):
        finder = bridge.BridgeFinder(graph, question, linked,
                                     bridge.own_names([m.index for m in matches], shares))
        proposals = finder.bridges(scores, max(bridge.MAX_BRIDGES, bridge.BRIDGE_SHORTLIST))
        onward = _onward(ctx, rvec, scores, steps,
                         [(p.entity, p.relation) for p in proposals])
        probes = finder.by_path(proposals, onward, bridge.bridge_count(
            len(linked), rank.has_identifier(question)))
        if probes:
            probes += _chain(ctx, rvec, finder, probes, scores, steps)
    with clock.stage("embed_probes"):
        vectors = np.vstack([qvec, ctx.embedder.embed([p.text for p in probes])])
    pool = max(top_k, rank.POOL)
    with clock.stage("search_passages"):
        dense = ctx.search.passages(vectors, pool)
    with clock.stage("search_lexical"):
        lexical = ctx.search.lexical([question] + [p.text for p in probes], pool)
        dense = with_lexical_hits(ctx, vectors, dense, lexical)
    with clock.stage("rank"):
        weights = rank.search_weights(question, len(probes))
        per_search = [rank.with_lexical(d, lx, w)
                      for d, lx, w in zip(dense, lexical, weights, strict=True)]
    with clock.stage("sentences"):
        per_search = with_sentences(ctx.search, ctx.embedder, ctx.sentences, vectors, dense,
                                    per_search)
    with clock.stage("rank"):
        merged = bridge.merge_searches(
            per_search[0], list(zip(probes, per_search[1:], strict=True)),
            {p.entity: graph.passages_of_entity(p.entity) for p in probes},
        )
        best = sorted(merged.items(), key=lambda kv: -kv[1].score)[:top_k]
        passages = [PassageHit(pid, "", s.score, _evidence(ctx, s.probe),
                               [graph.relation_ids[s.probe.relation]] if s.probe else [])
                    for pid, s in best]
        if posts.asks_for_person(question):
            passages = _with_holders(ctx, passages, top_k)
    relations = [RelationHit(graph.relation_ids[p.relation], graph.relation_texts[p.relation],
                             p.confidence) for p in probes]
    bridges = [{"id": graph.entity_ids[p.entity], "name": graph.entity_names[p.entity],
                "relation": graph.relation_ids[p.relation],
                "confidence": round(p.confidence, 6)} for p in probes]
    notes = [] if probes else ["no bridge entity found; dense + lexical ranking only"]
    if steps.capped:
        notes.append(f"{len(steps.capped)} hub entities followed through {steps.cap} of "
                     "their relations (HOPGRAPH_FANOUT)")
    return Retrieval(question, "default", passages, relations=relations, notes=notes,
                     bridges=bridges)


def _with_holders(ctx: Context, passages: list[PassageHit], top_k: int) -> list[PassageHit]:
    """The passages with those that name the holders of the posts the best of them name,
    each right after the passage naming its post (`posts.holders_after`), the `top_k` best
    kept."""
    graph = ctx.graph
    found = posts.holders_after(graph, [(p.id, p.score) for p in passages])
    if not found:
        return passages
    lifted = {pid: PassageHit(pid, "", score, [
        f"{graph.relation_texts[held]}  (holder of {graph.entity_names[post]})"],
        [graph.relation_ids[held]]) for pid, score, post, held in found}
    kept = [p for p in passages if p.id not in lifted]
    return sorted(kept + list(lifted.values()), key=lambda p: -p.score)[:top_k]


def with_lexical_hits(ctx: Context, vectors: np.ndarray, dense: list[dict[str, float]],
                      lexical: list[list[Hit]]) -> list[dict[str, float]]:
    """Each search's dense scores, with the cosine of each of its BM25 hits that its dense
    search did not return (their vectors read once for all the searches).

    A company's folder defeats dense search where BM25 does best: a question naming
    "WO/2025/0413" at a company whose name is in a fifth of the passages finds the company's
    letterheads by cosine, and the one passage with the work order only by BM25. Scoring
    just the dense hits, BM25 could never bring that passage in.
    """
    missing = [sorted({h.id for h in hits} - set(found))
               for found, hits in zip(dense, lexical, strict=True)]
    wanted = sorted({pid for ids in missing for pid in ids})
    if not wanted:
        return dense
    scored = ctx.search.score_passages(vectors, wanted)
    return [{**found, **{pid: scores[pid] for pid in ids if pid in scores}}
            for found, ids, scores in zip(dense, missing, scored, strict=True)]


def _relation_vector(ctx: Context, question: str, qvec: np.ndarray, common: list[str]
                     ) -> np.ndarray:
    """The vector the relations are scored by: the question's, or, when it names names
    found all over the passages (`common`, as matched in the question), that of the
    question without them (`bridge.without_common_names`; one more embedding only then)."""
    kept = bridge.without_common_names(question, common)
    return qvec if kept == question else ctx.embedder.embed([kept])


def _chain(ctx: Context, qvec: np.ndarray, finder: bridge.BridgeFinder,
           probes: list[bridge.Probe], scores: dict[int, float], steps: fanout.Steps
           ) -> list[bridge.Probe]:
    """Third-hop probes: neighbours of the best bridge, ranked by path score.

    Array work throughout: a hub bridge brings thousands of relations (`steps` caps them).
    """
    first = probes[0]
    around = steps.of([first.entity])
    inner = [first.entity]
    if len(around) == 1 and int(around[0]) == first.relation:  # a dead end: go on from the
        inner = _and_inner(ctx, first.entity)  # names inside its name
        around = steps.of(inner)
    around_scores = _scores_of(ctx, qvec, scores, around)
    candidates = finder.chain_candidates(first, around, around_scores,
                                         {p.entity for p in probes}, set(inner))
    onward = _onward(ctx, qvec, scores, steps, [(e, r) for e, _, r in candidates])
    return finder.chain(first, candidates, onward)


def _onward(ctx: Context, qvec: np.ndarray, scores: dict[int, float], steps: fanout.Steps,
            reached: list[tuple[int, int]]) -> dict[int, float]:
    """For each (entity, relation that reached it): the best question score among the
    entity's other relations (0 when it has none)."""
    onward_rels = [steps.of([e]) for e, _ in reached]
    onward_rels = [rels[rels != r] for rels, (_, r) in zip(onward_rels, reached, strict=True)]
    union = np.unique(np.concatenate(onward_rels)) if onward_rels else np.zeros(0, np.int64)
    union_scores = _scores_of(ctx, qvec, scores, union)
    return {e: float(union_scores[np.searchsorted(union, rels)].max()) if len(rels) else 0.0
            for (e, _), rels in zip(reached, onward_rels, strict=True)}


def _scores_of(ctx: Context, qvec: np.ndarray, scores: dict[int, float],
               relations: np.ndarray) -> np.ndarray:
    """Question scores of `relations` (an array), computing and caching the missing ones."""
    listed = relations.tolist()
    missing = [r for r in listed if r not in scores]
    scores.update(ctx.search.score_relations(qvec, missing))
    return np.array([scores.get(r, 0.0) for r in listed], dtype=np.float64)


def _and_inner(ctx: Context, entity: int) -> list[int]:
    """An entity and the entities named inside its name.

    Extracted names vary: "Johann Bernoulli's influence" is its own node, with one relation,
    while the facts are on "Johann Bernoulli". Walking on from both lets a third hop start
    from a bridge that was found under a longer name. Used only for dead ends: for a bridge
    with relations of its own, inner names are usually other things ("Mississippi" inside
    "Mississippi River").
    """
    inner = {m.index for m in ctx.linker.link(ctx.graph.entity_names[entity], whole=False)}
    return sorted(inner | {entity})


def _evidence(ctx: Context, probe: bridge.Probe | None) -> list[str]:
    """The relation that led to a passage's best probe, as shown to users."""
    if probe is None:
        return []
    name = ctx.graph.entity_names[probe.entity]
    return [f"{ctx.graph.relations[probe.relation].text}  (bridge: {name})"]
