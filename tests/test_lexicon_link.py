from hopgraph.lexicon.link import EntityLinker, match_key

NAMES = ["Leonhard Euler", "Euler", "Johann Bernoulli", "The Bernoulli theorem", "Basel",
         "C++", "Gödel", "爱因斯坦", "the", "University of Copenhagen"]


def linked(question: str) -> dict[str, str]:
    return {m.name: m.how for m in EntityLinker(NAMES).link(question)}


def test_match_key_drops_articles_and_possessives() -> None:
    assert match_key("The Bernoulli theorem") == "bernoulli theorem"
    assert match_key("Euler's") == "euler"
    assert match_key("C++") == "c++"


def test_exact_case_insensitive_and_possessive() -> None:
    assert linked("What contribution did the son of Euler's teacher make?") == {"Euler": "exact"}
    assert linked("who taught LEONHARD EULER?") == {"Leonhard Euler": "exact"}


def test_longest_match_wins() -> None:
    found = linked("Where was Leonhard Euler born?")
    assert "Leonhard Euler" in found and "Euler" not in found


def test_fuzzy_spelling_and_stopwords() -> None:
    assert linked("Who taught Johan Bernoulli?").get("Johann Bernoulli") == "fuzzy"
    assert "the" not in linked("What is the answer?")


def test_unicode_and_symbols() -> None:
    assert "Gödel" in linked("What did Gödel prove?")
    assert "C++" in linked("Who designed C++?")
    assert linked("爱因斯坦提出了什么?") == {"爱因斯坦": "substring"}
    assert linked("Who teaches at the university of copenhagen?") == {
        "University of Copenhagen": "exact"
    }


def test_resolve_given_names() -> None:
    linker = EntityLinker(NAMES)
    assert [m.name for m in linker.resolve("euler")] == ["Euler"]
    assert [m.name for m in linker.resolve("Leonard Euler")] == ["Leonhard Euler"]
    assert linker.resolve("Completely Unknown Person") == []


def test_an_extended_linker_links_as_one_built_afresh() -> None:
    names = ["Johann Bernoulli", "Basel", "University of Basel", "the Rhine", "東京"]
    more = ["Daniel Bernoulli", "basel", "Leonhard Euler", "大阪", "Rhine", "and"]
    questions = ["Where did Johann Bernoull teach?", "Did Daniel Bernoulli live in Basel?",
                 "Leonhard Eulers home on the Rhine", "東京と大阪", "Who was Leonard Euler?"]
    for fuzzy_first in (False, True):  # the fuzzy index extended, or built later
        base = EntityLinker(names)
        if fuzzy_first:
            assert base.resolve("Johann Bernouli") != []
        assert base.extends_to(names + more) and not base.extends_to(more + names)
        grown = base.extended(names + more)
        fresh = EntityLinker(names + more)
        assert grown.keys == fresh.keys and grown.by_key == fresh.by_key
        for question in questions:
            assert grown.link(question) == fresh.link(question), question
            assert grown.resolve(question.split()[-1]) == fresh.resolve(question.split()[-1])
        assert base.link("Daniel Bernoulli") != fresh.link("Daniel Bernoulli")  # base kept


def test_a_linker_read_back_from_its_arrays_links_as_the_original() -> None:
    import numpy as np
    import pytest

    names = [*NAMES, "euler", "東京", "Basel"]  # keys shared by two names, unspaced names
    linker = EntityLinker(names)
    keys, grams, arrays = linker.arrays()
    again = EntityLinker.from_arrays(names, keys, grams, arrays)
    assert (again.keys, again.by_key, again.unspaced) == (linker.keys, linker.by_key,
                                                          linker.unspaced)
    for question in ["Who taught Johan Bernoulli in Basel?", "爱因斯坦と東京", "Leonard Euler"]:
        assert again.link(question) == linker.link(question)
        assert again.resolve(question) == linker.resolve(question)
    keys, grams, arrays = linker.arrays(with_fuzzy=False)
    assert grams is None
    lazy = EntityLinker.from_arrays(names, keys, None, arrays)  # its trigram index made later
    assert lazy.resolve("Johan Bernoulli") == linker.resolve("Johan Bernoulli")
    with pytest.raises(ValueError):
        EntityLinker.from_arrays(names[:3], keys, None, arrays)
    with pytest.raises(ValueError):
        EntityLinker.from_arrays(names, keys, None,
                                 {**arrays, "key_indptr": np.array([0, 1], dtype=np.int64)})


def test_numbers_and_dates_alone_are_never_question_entities() -> None:
    linker = EntityLinker(["2025", "May 2025", "7", "92 per cent", "£1,980", "Line 3", "Q2"])
    for question in ["What changed in 2025?", "Who called in May 2025?", "Is it 7?",
                     "Why 92 per cent?", "Does it cost £1,980?", "What did Q2 bring?"]:
        assert linker.link(question) == [], question
    assert [m.name for m in linker.link("What runs on Line 3?")] == ["Line 3"]
    linker = EntityLinker(["Tuesday", "Wednesday 25th", "4.12.3", "12.05.2025"])
    for question in ["What broke on Tuesday?", "Who called on Wednesday 25th?",
                     "What happened on 12.05.2025?"]:
        assert linker.link(question) == [], question
    # a version of three numbers or more is an identifier, not an amount
    assert [m.name for m in linker.link("Who approved release 4.12.3?")] == ["4.12.3"]


def test_a_number_after_the_noun_it_numbers_names_that_thing() -> None:
    linker = EntityLinker(["402", "209", "210", "12", "4", "92", "31", "Coach 402"])
    assert [m.name for m in linker.link("What seats has bus 402?")] == ["402"]
    assert {m.name for m in linker.link("Which buses replace spares 209 and 210?")} == {
        "209", "210"}
    assert [m.name for m in linker.link("Who runs service 12, and from where?")] == ["12"]
    # a name with the number in it, and the number the registers key the coach by
    assert {m.name for m in linker.link("Where did coach 402 lose its wheels?")} == {
        "Coach 402", "402"}
    # after a preposition, a verb's past or a value's word, or in a time, it is a value
    for question in ["What broke on 4 March?", "Who carried 92 per cent of it?",
                     "How many homes at 31 March?", "What left at 12:40?", "Is it 4.12?",
                     "Who wrote in May 12?", "What rose 12 per cent in 2025?"]:
        assert linker.link(question) == [], question


def test_codes_match_exactly_and_never_fuzzily() -> None:
    linker = EntityLinker(["IR-2322", "CA-2025-021", "KX-4", "KX-4 Pro", "Orrin & Tate"])
    assert [m.name for m in linker.link("Who owns incident IR-2322?")] == ["IR-2322"]
    assert linker.link("Who owns incident IR-2332?") == []  # another incident, not a typo
    assert linker.link("Which action is CA-2025-024?") == []
    assert [m.name for m in linker.link("How fast is the KX-4 Pro?")] == ["KX-4 Pro"]
    assert [m.name for m in linker.link("How fast is the KX-4?")] == ["KX-4"]
    assert linker.resolve("ir-2322")[0].name == "IR-2322" and linker.resolve("IR-2323") == []
    assert [m.how for m in linker.link("Who runs Orin & Tate?")] == ["fuzzy"]
