"""The names users import from `hopgraph`: adding one is a choice, losing one is a break."""

import hopgraph

PUBLIC = [
    "METHODS", "OFFLINE_METHODS", "Answer", "EmbedderError", "Embedder", "GraphRAG",
    "HopgraphError", "IngestSummary", "InputError", "LLMClient", "LLMError", "LLMSettings",
    "LoadReport", "PassageHit", "PassageRecord", "Problem", "Query", "RelationHit",
    "Retrieval", "Settings", "StoreError", "Triplet", "UsageError", "Where",
]


def test_all_is_pinned() -> None:
    assert sorted(hopgraph.__all__) == sorted(PUBLIC)
    for name in PUBLIC:
        assert getattr(hopgraph, name) is not None


def test_methods_and_errors_are_what_they_say() -> None:
    assert hopgraph.METHODS == ("naive", "naive_lexical", "seed", "default", "llm")
    assert hopgraph.OFFLINE_METHODS == ("naive", "naive_lexical", "seed", "default")
    for name in ("UsageError", "InputError", "StoreError", "EmbedderError", "LLMError"):
        assert issubclass(getattr(hopgraph, name), hopgraph.HopgraphError)
