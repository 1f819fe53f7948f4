from hopgraph.retrieve.lexical import LocalBM25, tokens


def test_tokens_fold_case_and_drop_stopwords() -> None:
    assert tokens("The Journal of Mathematical Physics!") == ["journal", "mathematical", "physics"]
    assert tokens("Gödel's C++") == ["gödel", "s", "c"]


def test_bm25_prefers_rare_matching_terms() -> None:
    ids = ["a", "b", "c", "d"]
    texts = [
        "Stroustrup designed the language in Denmark and the US",
        "A language is a system of communication",
        "Languages evolve; language families group them",
        "Cooking pasta takes ten minutes",
    ]
    index = LocalBM25(ids, texts)
    hits = index.search("Who designed the language, Stroustrup?", 3)
    assert hits[0].id == "a"
    assert all(h.score > 0 for h in hits)
    assert "d" not in [h.id for h in hits]
    assert index.search("zebra", 3) == []


def test_bm25_on_no_passages() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert LocalBM25([], []).search("anything", 3) == []
