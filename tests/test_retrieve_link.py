from hopgraph.retrieve.link import EntityLinker, match_key

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
