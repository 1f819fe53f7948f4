import pytest
from conftest import QUESTION

from hopgraph import GraphRAG, Query
from hopgraph.errors import UsageError
from hopgraph.retrieve import OFFLINE_METHODS
from hopgraph.retrieve.search import MilvusSearcher

EULER = "Leonhard Euler (1707"
DANIEL = "Daniel Bernoulli (1700"


def starts(result) -> list[str]:
    return [next((k for k in (EULER, DANIEL) if p.text.startswith(k)), p.text[:30])
            for p in result.passages]


@pytest.mark.slow
def test_bernoulli_graph_top2_is_euler_and_daniel_without_llm_or_entities(
        bernoulli: GraphRAG) -> None:
    graph = bernoulli.retrieve(QUESTION, top_k=2)
    naive = bernoulli.naive(QUESTION, top_k=2)
    assert sorted(starts(graph)) == sorted([DANIEL, EULER])
    assert not any(p.text.startswith(DANIEL) for p in naive.passages)
    assert any(p.text.startswith(EULER) for p in naive.passages)
    # it explains itself: entities found, relations that led there, timings
    assert [e["name"] for e in graph.entities] == ["Euler"]
    daniel = next(p for p in graph.passages if p.text.startswith(DANIEL))
    assert any("Daniel Bernoulli" in r for r in daniel.relations)
    assert graph.timings_ms["total"] > 0 and "embed_question" in graph.timings_ms
    assert graph.passages[0].score >= graph.passages[1].score


@pytest.mark.parametrize("method", OFFLINE_METHODS)
def test_every_method_runs_on_bernoulli(bernoulli: GraphRAG, method: str) -> None:
    result = bernoulli.retrieve(QUESTION, top_k=3, method=method)
    assert result.method == method
    assert 1 <= len(result.passages) <= 3
    assert all(p.text for p in result.passages)
    assert len({p.id for p in result.passages}) == len(result.passages)
    scores = [p.score for p in result.passages]
    assert scores == sorted(scores, reverse=True)


def test_given_entities_and_degree(bernoulli: GraphRAG, parts_of) -> None:
    given = bernoulli.retrieve(QUESTION, top_k=2, entities=["euler"], method="seed")
    assert [e["name"] for e in given.entities] == ["Euler"]
    unknown = bernoulli.retrieve(QUESTION, top_k=2, entities=["Zzyzx Qwerty"], method="seed")
    assert "entity 'Zzyzx Qwerty' is not in the graph" in unknown.notes
    assert [e["name"] for e in unknown.entities] == ["Euler"]  # linked from the question
    narrow = bernoulli.retrieve(QUESTION, top_k=4, degree=1, method="seed")
    wide = bernoulli.retrieve(QUESTION, top_k=4, degree=2, method="seed")
    assert len(wide.passages) == 4
    assert len(wide.relations) >= len(narrow.relations)
    qvec = bernoulli.embedder.embed([QUESTION])
    seeds = list(parts_of(bernoulli).retriever.search.relations(qvec, 3)[0])
    one = set(bernoulli.graph.expand([], seeds, 1).tolist())
    two = set(bernoulli.graph.expand([], seeds, 2).tolist())
    assert set(seeds) <= one < two


def test_bad_arguments_are_clear_errors(bernoulli: GraphRAG) -> None:
    with pytest.raises(ValueError, match="unknown method"):
        bernoulli.retrieve(QUESTION, method="magic")
    with pytest.raises(ValueError, match="empty"):
        bernoulli.retrieve("   ")
    with pytest.raises(ValueError, match="top_k"):
        bernoulli.retrieve(QUESTION, top_k=0)


def test_a_query_value_and_options_give_the_same_retrieval(bernoulli: GraphRAG) -> None:
    query = Query(QUESTION, method="seed", top_k=3, entities=["Euler"])
    by_value = bernoulli.retrieve(query)
    by_options = bernoulli.retrieve(QUESTION, method="seed", top_k=3, entities=["Euler"])
    assert [p.id for p in by_value.passages] == [p.id for p in by_options.passages]
    changed = bernoulli.retrieve(query, top_k=1)  # options change a given query
    assert [p.id for p in changed.passages] == [by_value.passages[0].id]
    graph, naive = bernoulli.compare(query)
    assert (graph.method, naive.method) == ("seed", "naive")
    assert [p.id for p in naive.passages] == [
        p.id for p in bernoulli.naive(QUESTION, top_k=3).passages]
    assert all(p.doc_id for p in graph.passages + naive.passages)  # each with its document


def test_options_are_given_by_name_only(bernoulli: GraphRAG, parts_of) -> None:
    ids = [p.id for p in bernoulli.retrieve(Query(QUESTION, method="seed", top_k=3)).passages]
    by_name = bernoulli.retrieve(question=QUESTION, top_k=3, method="seed")
    retriever = parts_of(bernoulli).retriever
    on_the_retriever = retriever.retrieve(QUESTION, top_k=3, method="seed")
    for result in (by_name, on_the_retriever):
        assert [p.id for p in result.passages] == ids
    assert retriever.compare(QUESTION, top_k=3)[1].method == "naive"
    for call in (bernoulli.retrieve, bernoulli.compare, bernoulli.ask):  # the order before
        with pytest.raises(TypeError, match="positional"):  # `Query` (top_k, degree...) is gone
            call(QUESTION, 3, 1, None, "seed")  # type: ignore[call-arg]
    for bad, what in ((lambda: bernoulli.retrieve(QUESTION, question="x"), "given twice"),
                      (lambda: bernoulli.retrieve(QUESTION, depth=2), "unknown query option"),
                      (lambda: bernoulli.retrieve(), "no question"),
                      (lambda: retriever.retrieve(42), "must be text")):
        with pytest.raises(UsageError, match=what):
            bad()


def test_default_method_through_milvus_search(bernoulli: GraphRAG, parts_of) -> None:
    rag = bernoulli
    saved = rag.memory_limit
    rag.memory_limit = 0  # every search in Milvus: a new retriever
    try:
        assert isinstance(parts_of(rag).retriever.search, MilvusSearcher)  # as its settings say
        result = rag.retrieve(QUESTION, top_k=2)
        assert sorted(starts(result)) == sorted([DANIEL, EULER])
    finally:
        rag.memory_limit = saved


def test_retriever_sees_passages_added_later(bernoulli: GraphRAG) -> None:
    before = bernoulli.retrieve("Who discovered the Zorblax comet?", top_k=1)
    assert "Zorblax" not in before.passages[0].text
    bernoulli.add([{"passage": "The Zorblax comet was discovered by Ada Quill in 1901.",
                    "triplets": [["Zorblax comet", "was discovered by", "Ada Quill"]]}])
    after = bernoulli.retrieve("Who discovered the Zorblax comet?", top_k=1)
    assert "Zorblax" in after.passages[0].text
