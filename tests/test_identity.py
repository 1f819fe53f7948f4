from hopgraph.identity import (
    content_key,
    entity_id,
    normalize,
    passage_id,
    relation_id,
    relation_text,
)


def test_normalize_folds_case_width_and_space() -> None:
    assert normalize("  Leonhard\t\nEuler ") == "leonhard euler"
    assert normalize("ＡＢＣ") == "abc"  # NFKC folds full-width forms
    assert normalize("STRASSE") == normalize("straße")  # case folding, not lower()


def test_non_ascii_names_stay_distinct() -> None:
    names = ["Gödel", "Godel", "C++", "C", "爱因斯坦", "爱因", "Ørsted"]
    assert len({entity_id(n) for n in names}) == len(names)
    assert normalize("Gödel") == "gödel"
    assert normalize("C++") == "c++"


def test_ids_follow_normalized_content() -> None:
    assert entity_id("leonhard Euler") == entity_id("Leonhard  EULER")
    assert relation_id("A", "is", "B") == relation_id("a", "IS", " b")
    assert relation_id("A", "is", "B") != relation_id("B", "is", "A")
    assert passage_id("Some text.", "d") == passage_id("some   TEXT.", "d")
    assert content_key("Some text.") == content_key("some   TEXT.")
    assert len({entity_id("x")[0], relation_id("x", "y", "z")[0], passage_id("x", "d")[0]}) == 3


def test_a_passage_id_depends_on_its_document() -> None:
    assert passage_id("Same text.", "a.json") != passage_id("Same text.", "b.json")
    assert passage_id("Same text.", "a.json") != content_key("Same text.")


def test_relation_text_joins_parts_with_single_spaces() -> None:
    assert relation_text("Johann  Bernoulli", "was the father of", "Daniel\nBernoulli") == (
        "Johann Bernoulli was the father of Daniel Bernoulli"
    )
