"""The offline extractor: mentions, the title rule, predicates, and text it cannot read
(no capitals, other scripts, bullets, tables, endless sentences) never being an error."""

from __future__ import annotations

from hopgraph.ingest.offline_extractor import (
    MAX_PREDICATE_WORDS,
    Rules,
    document_title,
    extract,
    extract_corpus,
    mentions,
)
from hopgraph.records import Triplet


def names(sentence: str) -> list[str]:
    return [m.text for m in mentions(sentence.split(), Rules())]


def test_mentions_keep_inner_connectors_dates_numbers_and_acronyms() -> None:
    assert names("The University of Copenhagen hired Jan Philip Solovej .") == [
        "University of Copenhagen", "Jan Philip Solovej"]
    assert names("It opened on 12 May 1850 with 300 km of track .") == [
        "12 May 1850", "300 km"]
    assert names("The NASA mission reached Mars .") == ["NASA", "Mars"]
    assert names("He met the Duke of Wellington and Napoleon .") == [
        "Duke of Wellington", "Napoleon"]
    assert names("In 1905 , Einstein wrote four papers .") == ["1905", "Einstein"]


def test_a_sentence_opening_with_a_pronoun_or_the_noun_is_about_the_title() -> None:
    text = ("Inception is a 2010 film directed by Christopher Nolan. It stars Leonardo "
            "DiCaprio. The film grossed $836 million worldwide.")
    triplets = extract("Inception", text)
    assert Triplet("Inception", "stars", "Leonardo DiCaprio") in triplets
    assert Triplet("Inception", "film directed by", "Christopher Nolan") in triplets
    assert Triplet("2010", "film directed by", "Christopher Nolan") in triplets  # a pair
    objects = {t.object for t in triplets if t.subject == "Inception"}
    assert {"Christopher Nolan", "Leonardo DiCaprio", "2010"} <= objects
    assert all(len(t.predicate.split()) <= MAX_PREDICATE_WORDS for t in triplets)


def test_a_surname_is_the_full_name_of_the_same_passage() -> None:
    text = "Leonhard Euler studied under Johann Bernoulli. Euler later moved to Berlin."
    triplets = extract(None, text, Rules(surnames=True))
    assert Triplet("Leonhard Euler", "later moved to", "Berlin") in triplets
    default = extract(None, text)  # off by default (measured: see the README's ablation)
    assert Triplet("Euler", "later moved to", "Berlin") in default


def test_rules_can_be_turned_off_one_by_one() -> None:
    text = "Inception is a film by Christopher Nolan. It stars Leonardo DiCaprio."
    full = extract("Inception", text)
    assert extract("Inception", text, Rules(title=False, pairs=False)) == []
    assert len(extract("Inception", text, Rules(title=False))) < len(full)
    assert len(extract("Inception", text, Rules(pairs=False))) < len(full)


def test_text_it_cannot_read_gives_passages_and_no_error() -> None:
    cases = [
        "只有中文的文本，没有大写字母。这是第二句。",  # no letter case at all
        "Die Universität Wien wurde 1365 von Rudolf IV. gegründet. Sie ist sehr alt.",
        "Tokyo (東京) is the capital of Japan; 東京都 has 14 million people.",
        "- first bullet\n- second bullet with Paris\n* third",
        "| name | city |\n|---|---|\n| Ada | London |\n| Alan | Wilmslow |",
        "all lower case words only and no names at all",
        " ".join(["Word"] * 5000) + ".",  # one endless sentence of capitalized words
        "",
        "!!! ??? ... ---",
    ]
    for text in cases:
        triplets = extract("Some Title", text)
        assert all(t.subject and t.predicate and t.object for t in triplets)
    report, stats = extract_corpus([{"title": "", "text": "只有中文。"},
                                    {"title": "T", "text": ""}], "corpus.json")
    assert len(report.records) == 1 and report.rows_skipped == 1
    assert stats.without_triplets == 1


def test_deterministic() -> None:
    text = "Marie Curie was born in Warsaw. She won the Nobel Prize in Physics in 1903."
    assert extract("Marie Curie", text) == extract("Marie Curie", text)


def test_a_disambiguated_title_names_the_entity_other_passages_mention() -> None:
    triplets = extract("David Smith (director)", "He directed Rolling Thunder in 1977.")
    assert Triplet("David Smith", "directed", "Rolling Thunder") in triplets


def test_document_titles() -> None:
    assert document_title("notes/a.md", "intro\n# Marie Curie\ntext") == "Marie Curie"
    assert document_title("notes/b.txt", "Ada Lovelace\n\nShe wrote notes.") == "Ada Lovelace"
    assert document_title("notes/c.txt", "This is a sentence. And more.") == "c"
