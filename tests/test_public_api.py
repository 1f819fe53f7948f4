"""The names users import from `hopgraph`: adding one is a choice, losing one is a break."""

import hopgraph

PUBLIC = [
    "METHODS", "OFFLINE_METHODS", "EmbedderError", "Embedder", "GraphRAG", "HopgraphError",
    "IngestSummary", "InputError", "LLMClient", "LLMError", "LLMSettings", "LoadReport",
    "PassageHit", "PassageRecord", "Problem", "RelationHit", "Retrieval", "Settings",
    "StoreError", "Triplet", "UsageError",
]


def test_all_is_pinned() -> None:
    assert sorted(hopgraph.__all__) == sorted(PUBLIC)
    for name in PUBLIC:
        assert getattr(hopgraph, name) is not None


def test_methods_and_errors_are_what_they_say() -> None:
    assert hopgraph.OFFLINE_METHODS == ("default", "naive", "naive_lexical", "seed")
    assert (*hopgraph.OFFLINE_METHODS, "llm") == hopgraph.METHODS
    for name in ("UsageError", "InputError", "StoreError", "EmbedderError", "LLMError"):
        assert issubclass(getattr(hopgraph, name), hopgraph.HopgraphError)
