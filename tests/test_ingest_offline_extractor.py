"""The offline extractor: mentions, the title rule, predicates, and text it cannot read
(no capitals, other scripts, bullets, tables, endless sentences) never being an error."""

from __future__ import annotations

import pytest

from hopgraph.ingest.offline_extractor import (
    MAX_PREDICATE_WORDS,
    Rules,
    Vocabulary,
    extract,
    mentions,
    vocabulary_of,
)
from hopgraph.ingest.offline_records import document_title, extract_corpus
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
    assert names("In 1905 , Einstein wrote four papers .") == ["Einstein"]  # a year alone
    assert [m.text for m in mentions(["In", "1905", ",", "Einstein", "wrote"], Rules(
        lone_numbers=True))] == ["1905", "Einstein"]


def test_a_sentence_opening_with_a_pronoun_or_the_noun_is_about_the_title() -> None:
    text = ("Inception is a 2010 film directed by Christopher Nolan. It stars Leonardo "
            "DiCaprio. The film grossed $836 million worldwide.")
    triplets = extract("Inception", text)
    assert Triplet("Inception", "stars", "Leonardo DiCaprio") in triplets
    assert Triplet("Inception", "2010 film directed by", "Christopher Nolan") in triplets
    objects = {t.object for t in triplets if t.subject == "Inception"}
    assert {"Christopher Nolan", "Leonardo DiCaprio", "836 million"} <= objects
    assert "2010" not in objects  # a year alone is a value, not a name (Rules.lone_numbers)
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


@pytest.mark.slow
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


def as_tuples(triplets: list[Triplet]) -> set[tuple[str, str, str]]:
    return {(t.subject, t.predicate, t.object) for t in triplets}


def test_a_sentence_about_its_own_subject_is_not_the_titles() -> None:
    found = as_tuples(extract("Brightwater Instruments", "The Heron Sled was designed by Ada "
                              "Quill. It was built in Bergen."))
    assert ("Heron Sled", "was designed by", "Ada Quill") in found
    assert ("Brightwater Instruments", "mentions", "Ada Quill") in found  # linked, no claim
    assert ("Brightwater Instruments", "was designed by", "Ada Quill") not in found
    assert ("Brightwater Instruments", "it was built in", "Bergen") in found  # the title's
    off = as_tuples(extract("Brightwater Instruments", "The Heron Sled was designed by Ada "
                            "Quill.", Rules(own_subject=False)))
    assert ("Brightwater Instruments", "was designed by", "Ada Quill") in off


def test_without_a_title_a_pronoun_is_the_last_named_subject() -> None:
    found = as_tuples(extract(None, "Maria Lind joined in 2019. She lives in Helsinki. "
                              "Tomas Berg is the engineer. He designed the Kestrel Probe."))
    assert ("Maria Lind", "lives in", "Helsinki") in found
    assert ("Tomas Berg", "designed the", "Kestrel Probe") in found
    assert not any(o == "Helsinki" and s != "Maria Lind" for s, _, o in found)
    none = as_tuples(extract(None, "She lives in Helsinki.", Rules(topic=True)))
    assert none == set()  # no one to attach it to: nothing made up


def test_after_a_blank_line_the_noun_is_a_new_thing_a_pronoun_still_the_subject() -> None:
    found = as_tuples(extract(None, "Dunmore Recycling was added in May 2025.\n\nThe heating "
                              "plates HP-310 and HP-410 are not interchangeable."))
    assert not any(s == "Dunmore Recycling" and o.startswith("HP-") for s, _, o in found)
    assert ("Keller Polymers", "also makes", "PR-60") in as_tuples(extract(
        None, "Keller Polymers supplies RB-118 flake.\n\nIt also makes PR-60 granulate."))
    assert ("Keller Polymers", "company also makes", "PR-60") in as_tuples(extract(
        None, "Keller Polymers supplies RB-118 flake. The company also makes PR-60 granulate."))


def test_a_capitalized_common_word_opening_a_sentence_is_not_a_name() -> None:
    text = "Staff meet Ingrid Solberg on Fridays. Our staff includes Tomas Berg."
    found = as_tuples(extract(None, text))
    assert not any("Staff" in (s, o) for s, _, o in found)
    kept = as_tuples(extract(None, text, Rules(common_words=False)))
    assert any(s == "Staff" for s, _, _ in kept)
    # the texts ingested together decide: written capitalized inside a sentence, it names
    named = Vocabulary(lower=frozenset(), named=frozenset({"Staff"}))
    assert any(s == "Staff" for s, _, _ in as_tuples(extract(None, text, vocabulary=named)))
    assert vocabulary_of(["Ask the Staff Council. Products ship."]).named == {"Staff", "Council"}


def test_no_name_spans_a_line_break() -> None:
    text = "Contacts for the launch:\nAnna Berg\nThomas Lind\nKaren Holm"
    found = {m for t in extract(None, text) for m in (t.subject, t.object)}
    assert "Anna Berg Thomas Lind" not in found
    tokens = ["Anna", "Berg", "Thomas", "Lind"]
    assert [m.text for m in mentions(tokens, Rules(), ["", " ", "\n", " "])] == [
        "Anna Berg", "Thomas Lind"]


def test_a_list_items_marker_does_not_hide_its_opening_word() -> None:
    text = "Our staff and our products are listed here.\n- Staff meet Ingrid Solberg weekly.\n" \
           "1. Products ship from Bergen."
    found = as_tuples(extract(None, text))
    assert not any({"Staff", "Products"} & {s, o} for s, _, o in found)
    lettered = "Our staff and our products are listed here.\n(a) Staff meet Ingrid Solberg " \
        "weekly.\nb) Products ship from Bergen.\n(iv) Staff visit Tomas Berg."
    found = as_tuples(extract(None, lettered))
    assert not any({"Staff", "Products"} & {s, o} for s, _, o in found)
