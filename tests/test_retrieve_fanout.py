"""Bounded graph steps (retrieve/fanout.py): below the cap nothing changes; above it a hub
keeps the relations the question ranks best, then the oldest, deterministically."""

from __future__ import annotations

import numpy as np
import pytest
from test_retrieve_bridge import make_graph
from test_store_ann import records

from hopgraph import Query
from hopgraph.retrieve.fanout import Steps


def hub_graph():
    """'Hub' with 12 relations (one to each of Leaf 0..11), 'Small' with 2."""
    rows = [("Hub", "knows", f"Leaf {i}", [f"p{i}"]) for i in range(12)]
    rows += [("Small", "met", "Leaf 0", ["q0"]), ("Small", "met", "Leaf 1", ["q1"])]
    return make_graph(rows)


def test_below_the_cap_the_steps_are_the_graphs_own() -> None:
    graph = hub_graph()
    asked: list[int] = []
    steps = Steps(graph, lambda n: asked.append(n) or {}, cap=12)
    hub, small = graph.entity_index["Hub"], graph.entity_index["Small"]
    for entities in ([hub], [small], [hub, small]):
        assert np.array_equal(steps.of(entities), graph.relations_of(np.array(entities)))
    assert asked == [] and steps.capped == []  # no wider search, no note
    assert np.array_equal(Steps(graph, dict, cap=0).of([hub]),
                          graph.relations_of(np.array([hub])))  # 0: no cap at all


def test_a_hub_keeps_the_questions_best_relations_then_the_oldest() -> None:
    graph = hub_graph()
    hub, small = graph.entity_index["Hub"], graph.entity_index["Small"]
    hub_rels = graph.relations_of(np.array([hub])).tolist()
    best = {hub_rels[9]: 0.9, 12: 0.8, hub_rels[4]: 0.7}  # 12: one of Small's relations
    asked: list[int] = []

    def question_best(n: int) -> dict[int, float]:
        asked.append(n)
        return best

    steps = Steps(graph, question_best, cap=4)
    chosen = steps.of([hub]).tolist()
    assert chosen == sorted([hub_rels[9], hub_rels[4], hub_rels[0], hub_rels[1]])
    assert steps.of([small]).tolist() == graph.relations_of(np.array([small])).tolist()
    both = steps.of([hub, small]).tolist()
    assert both == sorted(set(chosen) | set(graph.relations_of(np.array([small])).tolist()))
    assert asked == [4] and steps.capped == [hub]  # one wider search per question (cap 4)


@pytest.mark.slow
def test_default_retrieval_is_unchanged_while_no_hub_reaches_the_cap(open_graph,
                                                                      monkeypatch) -> None:
    rag = open_graph(graph="fanout")
    rag.add(records(60))
    degrees = np.asarray(rag.graph.incidence.sum(axis=1)).ravel()
    questions = ["Which city is the employer of Person 42 in?", "Who works for Company 3?",
                 "Where is the company of the person born in Town 5?"]

    def run(cap: str) -> list[tuple]:
        monkeypatch.setenv("HOPGRAPH_FANOUT", cap)  # read when a graph is opened
        reopened = open_graph(graph="fanout", create=False)
        assert reopened.settings.fanout == int(cap)
        found = [reopened.retrieve(q, top_k=5) for q in questions]
        return [([(p.id, p.score) for p in r.passages], r.bridges, r.notes) for r in found]

    uncapped = run("0")
    assert run(str(int(degrees.max()))) == uncapped  # the cap is never passed: identical
    capped = run("2")  # the companies and cities are hubs now
    assert any(any("hub entities" in note for note in notes) for _, _, notes in capped)
    assert all(len(passages) == 5 for passages, _, _ in capped)


def test_with_a_hub_the_questions_best_come_from_the_one_pool_search() -> None:
    graph = hub_graph()
    ranked = {r: 1.0 - r / 100 for r in range(14)}  # best first
    asked: list[int] = []

    def question_best(n: int) -> dict[int, float]:
        asked.append(n)
        return dict(list(ranked.items())[:n])

    steps = Steps(graph, question_best, cap=4)  # 'Hub' (12 relations) is over the cap
    assert steps.best(3) == dict(list(ranked.items())[:3])
    steps.of([graph.entity_index["Hub"]])
    assert asked == [4]  # one search served both
    assert steps.best(6) == dict(list(ranked.items())[:6]) and asked == [4, 6]  # over the pool
    no_hub = Steps(graph, question_best, cap=12)
    assert no_hub.best(3) == dict(list(ranked.items())[:3]) and asked == [4, 6, 3]


@pytest.mark.slow
def test_default_retrieval_is_the_same_with_the_pool_search_shared(open_graph, parts_of,
                                                                    monkeypatch) -> None:
    """With hubs, the question's best relations are taken from the hub pool's search: the
    same retrievals as with a search of their own, one relation search fewer."""
    monkeypatch.setenv("HOPGRAPH_FANOUT", "20")  # the companies are hubs; the pool is 20
    rag = open_graph(graph="pooled")
    rag.add(records(300))  # each company has ~44 relations
    questions = ["Which city is the employer of Person 42 in?", "Who works for Company 3?",
                 "Where is the company of the person born in Town 5?"]
    retriever = parts_of(rag).retriever  # the graph's, with its settings (the pool of 20)
    search = retriever.search
    searches: list[int] = []
    relations = search.relations
    monkeypatch.setattr(search, "relations",
                        lambda qvecs, limit, scope=None: searches.append(limit)
                        or relations(qvecs, limit, scope))

    def run() -> list[tuple]:
        found = [retriever.retrieve(Query(q, top_k=5)) for q in questions]
        return [([(p.id, p.score) for p in r.passages], r.bridges, r.notes) for r in found]

    shared = run()
    assert all(any("hub entities" in note for note in notes) for _, _, notes in shared)
    pooled = len(searches)
    searches.clear()
    monkeypatch.setattr(Steps, "best", lambda self, n: self._best(n))
    assert run() == shared
    assert len(searches) == pooled + len(questions)


@pytest.mark.slow
def test_the_cap_is_read_when_a_graph_opens_never_per_query(open_graph, monkeypatch) -> None:
    """$HOPGRAPH_FANOUT is one of the graph's settings (`Settings.fanout`), resolved when it is
    opened: changing the environment later changes nothing for a graph already open."""
    monkeypatch.delenv("HOPGRAPH_FANOUT", raising=False)
    rag = open_graph(graph="once")
    rag.add(records(60))
    question = "Which city is the employer of Person 42 in?"
    monkeypatch.setenv("HOPGRAPH_FANOUT", "2")
    assert not any("hub entities" in note for note in rag.retrieve(question, top_k=5).notes)
    reopened = open_graph(graph="once", create=False)
    assert any("hub entities" in note for note in reopened.retrieve(question, top_k=5).notes)
