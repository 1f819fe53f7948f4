from hopgraph.lexicon.lexical import LocalBM25, tokens


def test_tokens_fold_case_and_drop_stopwords() -> None:
    assert tokens("The Journal of Mathematical Physics!") == ["journal", "mathematical", "physics"]
    assert tokens("Gödel's C++") == ["godel", "s", "c"]


def test_a_name_typed_without_its_accents_finds_the_passage_that_writes_them() -> None:
    texts = ["Akinoshū Kenji is a former sumo wrestler from Hiroshima",
             "Kenji Imada played the role in the film",
             "The Tekezé River rises in the Ethiopian Highlands"]
    index = LocalBM25(["a", "b", "c"], texts)
    assert index.search("Akinoshu Kenji's birthplace", 3)[0].id == "a"
    assert index.search("the Tekeze River", 3)[0].id == "c"
    assert tokens("Tekezé Straße, Zürich") == ["tekeze", "strasse", "zurich"]


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


def _texts(rng, count: int, start: int = 0) -> list[tuple[str, str]]:
    words = ["alpha", "beta", "gamma", "delta", "river", "Stroustrup", "Bernoulli", "Basel",
             "engine", "notes", "wrote", "zeta", "omega", "kappa", "lambda", "mu"]
    return [(f"p{start + i:04d}", " ".join(rng.choice(words, size=int(rng.integers(1, 12)))))
            for i in range(count)]


def test_an_updated_index_scores_as_one_built_afresh() -> None:
    import numpy as np

    from hopgraph.lexicon.lexical import carried_bm25, passage_bm25

    rng = np.random.default_rng(5)
    passages = dict(_texts(rng, 60))
    index = passage_bm25(list(passages.items()))
    queries = ["alpha river", "Stroustrup wrote notes", "omega omega mu", "Basel engine zeta",
               "nothing here", "lambda"]
    for step in range(40):  # adds, text changes and removals, through every merge rule
        removed = [pid for pid in passages if rng.random() < 0.05]
        changed = [pid for pid in passages if pid not in removed and rng.random() < 0.03]
        for pid in removed:
            del passages[pid]
        added = dict(_texts(rng, int(rng.integers(0, 6)), start=1000 + step * 10))
        for pid, text in zip(changed, _texts(rng, len(changed), 5000), strict=True):
            added[pid] = text[1]
        passages.update(added)
        index = carried_bm25(index, list(passages), set(changed),
                             lambda ids: {pid: passages[pid] for pid in ids})
        fresh = passage_bm25(list(passages.items()))
        assert sorted(index.ids) == sorted(passages)
        for query in queries:
            got = [(h.id, h.score) for h in index.search(query, 7)]
            assert got == [(h.id, h.score) for h in fresh.search(query, 7)], (step, query)


def test_ties_go_to_the_smaller_id_and_an_unchanged_index_is_kept() -> None:
    index = LocalBM25(["b", "a", "c"], ["river words", "river words", "other"])
    assert [h.id for h in index.search("river", 3)] == ["a", "b"]
    assert index.updated([], []) is index
    assert [h.id for h in index.updated(["a"], [("d", "river words")]).search("river", 3)] \
        == ["b", "d"]
    assert [h.id for h in index.search("river", 3)] == ["a", "b"]  # the old one unchanged


def test_terms_no_passage_has_any_more_are_dropped() -> None:
    from hopgraph.lexicon.lexical import passage_bm25

    index = passage_bm25([("a", "river"), ("b", "river basel")])
    for step in range(300):  # a passage whose text changes every time
        index = index.updated(["b"], [("b", f"river word{step} other{step}")])
    assert len(index.vocab) < 40
    assert [h.id for h in index.search("word299", 2)] == ["b"]
    assert index.search("word5", 2) == [] and index.search("basel", 2) == []
    fresh = passage_bm25([("a", "river"), ("b", "river word299 other299")])
    assert [(h.id, h.score) for h in index.search("river word299", 2)] \
        == [(h.id, h.score) for h in fresh.search("river word299", 2)]


def test_an_index_read_back_from_its_arrays_scores_as_one_built_afresh() -> None:
    import numpy as np

    from hopgraph.lexicon.lexical import carried_bm25, passage_bm25

    rng = np.random.default_rng(7)
    passages = dict(_texts(rng, 80))
    index = passage_bm25(list(passages.items()))
    queries = ["alpha river", "Stroustrup wrote notes", "omega omega mu", "nothing here"]
    for step in range(12):  # several segments, removed rows, terms no passage has any more
        removed = [pid for pid in passages if rng.random() < 0.08]
        for pid in removed:
            del passages[pid]
        passages.update(_texts(rng, int(rng.integers(0, 4)), start=1000 + step * 10))
        index = carried_bm25(index, list(passages), set(),
                             lambda ids: {pid: passages[pid] for pid in ids})
        again = LocalBM25.from_arrays(*index.arrays())
        fresh = passage_bm25(list(passages.items()))
        assert sorted(again.ids) == sorted(passages)
        for query in queries:
            got = [(h.id, h.score) for h in again.search(query, 9)]
            assert got == [(h.id, h.score) for h in fresh.search(query, 9)], (step, query)
        index = again  # and an index read back is brought up to date as any other


def test_arrays_that_do_not_fit_are_refused() -> None:
    import numpy as np
    import pytest

    ids, terms, arrays = LocalBM25(["a", "b"], ["river basel", "river"]).arrays()
    for broken in ({**arrays, "indices": np.array([0, 5, 1], dtype=np.int32)},
                   {**arrays, "lengths": arrays["lengths"][:1]}):
        with pytest.raises(ValueError):
            LocalBM25.from_arrays(ids, terms, broken)
    with pytest.raises(ValueError):
        LocalBM25.from_arrays(["a", "a"], terms, arrays)


def test_probes_searched_together_score_as_searched_alone() -> None:
    """A probe (the question, then a name) goes on from the question's sums: every hit and
    score equals its own search, on an index of several segments and within `allowed`."""
    import numpy as np

    from hopgraph.lexicon.lexical import carried_bm25, passage_bm25

    rng = np.random.default_rng(9)
    passages = dict(_texts(rng, 80))
    index = passage_bm25(list(passages.items()))
    added = dict(_texts(rng, 6, start=500))
    passages.update(added)
    index = carried_bm25(index, list(passages), set(), lambda ids: {p: passages[p] for p in ids})
    assert len(index._segments) == 2
    question = "Which river did Bernoulli cross near Basel?"
    queries = [question, f"{question} Stroustrup", f"{question} omega river",
               "Stroustrup wrote notes", f"{question} Stroustrup kappa", "nothing here"]
    for allowed in (None, frozenset(list(passages)[::3])):
        together = index.search_many(queries, 7, allowed)
        assert together == [index.search(q, 7, allowed) for q in queries]
        assert all(together[:5])


def test_a_names_share_is_its_rarest_words_share_of_the_passages() -> None:
    index = LocalBM25(["a", "b", "c", "d"], [
        "Ashby Vale makes trays at Coalville",
        "Ashby Vale buys flake from Keller Polymers",
        "The Vale of Evesham",
        "Keller Polymers runs a wash plant",
    ])
    assert index.share("Ashby Vale") == 0.5  # "ashby" is in two passages of four
    assert index.share("Keller Polymers") == 0.5
    assert index.share("Coalville") == 0.25
    assert index.share("Ashby Zebra") == 0.0  # a word no passage has
    assert index.share("the") == 0.0  # no indexed word at all
    updated = index.updated(["a"], [("e", "Ashby Vale again")])
    assert updated.share("Ashby Vale") == 0.5
    assert updated.share("Coalville") == 0.0
    assert LocalBM25([], []).share("Ashby Vale") == 0.0
