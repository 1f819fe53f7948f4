"""A question that asks for a person ("Who ...", "Whose approval ...", "by name") gets the
passage that states the holder of a post named in its best passages right after the passage
naming the post (a policy names the Finance Director, the staff profile names Claire
Whitworth), and the passage that states the post of a person they name likewise."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from test_retrieve_bridge import make_graph

from hopgraph import GraphRAG
from hopgraph.retrieve import posts
from hopgraph.retrieve.posts import holders_after


@pytest.mark.parametrize(("question", "asks"), [
    ("Who decides whether the insurers are told?", True),
    ("Whose approval did the repair need?", True),
    ("The drivers should have been referred. To whom?", True),
    ("Who, by name, signs the bus off?", True),
    ("Which firm repaired bus 304?", False),
    ("What did the whole fleet cost?", False),  # "whole" is no "who"
    ("Which bus passed its test, and whose depot keeps it?", True),
    # "whose" after a noun says which thing is meant; it asks for no person
    ("What does the firm pay the organisation whose lead auditor was Deborah Quayle?", False),
    ("How many people work at the plant whose coater caused the fogging?", False),
])
def test_a_question_asks_for_a_person(question: str, asks: bool) -> None:
    assert posts.asks_for_person(question) is asks


def test_the_holder_of_a_post_a_best_passage_names_follows_it() -> None:
    graph = make_graph([
        ("Claire Whitworth", "is", "Finance Director", ["profile-cw"]),
        ("Accident repairs", "must be approved by", "Finance Director", ["policy"]),
        ("Lee Haworth", "is", "Workshop Foreman", ["profile-lh"]),
        ("Depot Manager", "is", "Keldholme", ["depots"]),  # no person holds it
        ("Gareth Pryor", "is", "Depot Manager", ["profile-gp"]),
        ("Tom Barraclough", "is", "Depot Manager", ["profile-tb"]),  # two hold it: none
        ("Workshop Foreman", "signs off", "DEF-25-0412", ["late"]),
    ])
    ranked = [("incident", 0.9), ("policy", 0.8), ("depots", 0.7), ("other", 0.6),
              ("profile-cw", 0.2)]
    found = holders_after(graph, ranked)
    assert [(pid, score) for pid, score, _, _ in found] == [
        ("profile-cw", pytest.approx(0.8 - posts.HOLDER_STEP))]
    (_, _, post, relation), = found
    assert graph.entity_names[post] == "Finance Director"
    assert graph.relation_texts[relation] == "Claire Whitworth is Finance Director"
    # a holder's passage ranked above the passage naming the post stays where it is
    assert holders_after(graph, [("profile-cw", 0.9), ("policy", 0.8)]) == []
    # only the best passages are read: the foreman is named below them
    late = [(f"p{k}", 1.0 - k / 10) for k in range(posts.POST_PASSAGES)] + [("late", 0.1)]
    assert holders_after(graph, late) == []


def test_the_post_of_a_person_a_best_passage_names_follows_it() -> None:
    graph = make_graph([
        ("Daniel Okafor", "is", "Chief Technology Officer", ["profile-do"]),
        ("Daniel Okafor", "accepted the risk until", "4.13.0", ["minutes"]),
        ("Kasia Nowak", "owner", "PIR-2025-04", ["pir"]),  # holds no post
        ("Tom Ashby", "is", "Support Team Lead", ["profile-ta"]),
        ("Tom Ashby", "is", "Keller Polymers", ["odd"]),  # no post: not his
    ])
    found = holders_after(graph, [("pir", 0.9), ("minutes", 0.8), ("other", 0.5)])
    assert [(pid, graph.entity_names[post], graph.relation_texts[holds])
            for pid, _, post, holds in found] == [
        ("profile-do", "Chief Technology Officer",
         "Daniel Okafor is Chief Technology Officer")]
    holders = posts.Holders(graph)
    assert holders.post_of(graph.entity_index["Tom Ashby"]) == (
        graph.entity_index["Support Team Lead"],
        graph.relation_index["Tom Ashby|is|Support Team Lead"])
    assert holders.post_of(graph.entity_index["Kasia Nowak"]) is None
    assert holders.post_of(graph.entity_index["Support Team Lead"]) is None


POLICY = """ALDERMOOR TRAVEL LTD - INCIDENT REPORTING POLICY HS-POL-07

6. REPAIRS
6.1 Repairs are booked by the workshop that looks after the vehicle.
6.2 Accident repairs costing more than £2,500 (excluding VAT) must be approved by the
Finance Director before work starts.
"""

PROFILES = """# Staff profiles

## Claire Whitworth — Finance Director

Claire joined Aldermoor in 2016 from a regional accountancy practice and runs finance,
payroll and purchasing.

## Lee Haworth — Workshop Foreman, Thornsby

Lee runs the Thornsby workshop and its inspection programme.

## Anita Sowerby — Workshop Foreman, Keldholme

Anita runs the Keldholme workshop.

## Paul Greaves — Driver Trainer

Paul trains new drivers and gives refresher training.

## Helen Okafor — Depot Manager, Keldholme

Helen manages the Keldholme depot and its drivers.
"""

FARES = """# Fares 2025

Single fares start at £1.80 and day tickets cost £5.20 on every route. Accident claims
from passengers are handled by our insurers, not by the depot.
"""


@pytest.mark.slow
def test_a_who_question_gets_the_holder_after_the_policy_naming_the_post(
        open_graph: Callable[..., GraphRAG], tmp_path: Path) -> None:
    (tmp_path / "policy_HS-POL-07.txt").write_text(POLICY, encoding="utf-8")
    (tmp_path / "staff_profiles.md").write_text(PROFILES, encoding="utf-8")
    (tmp_path / "fares.md").write_text(FARES, encoding="utf-8")
    rag = open_graph("posts")
    rag.add_files([tmp_path])
    question = ("Whose approval does an accident repair costing more than £2,500 need "
                "before work starts, and who holds that role?")
    found = rag.retrieve(question, method="default", top_k=8).passages
    texts = [p.text for p in found]
    policy = next(k for k, text in enumerate(texts) if "6.2 Accident repairs" in text)
    holder = next(k for k, text in enumerate(texts) if "Claire joined" in text)
    assert holder <= policy + 1, texts
    if holder == policy + 1:  # brought there by the post, and saying so
        assert found[holder].relations == [
            "Claire Whitworth is Finance Director  (holder of Finance Director)"]
    # a question that asks for no person gets no holder's passage
    plain = rag.retrieve("What approval does an accident repair costing more than £2,500 "
                         "need before work starts?", method="default", top_k=8).passages
    assert not any("holder of" in r for p in plain for r in p.relations)
