"""The bridge policy on small hand-made graphs: no model, no Milvus."""

from __future__ import annotations

import numpy as np
import pytest

from hopgraph.graph import KnowledgeGraph
from hopgraph.retrieve import attributes, bridge
from hopgraph.retrieve.bridge import BridgeFinder, Probe, Scored, can_bridge, merge_searches
from hopgraph.retrieve.posts import Holders


def arrays(scores: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
    """Relation scores as the parallel arrays `chain_candidates` takes."""
    return (np.fromiter(scores, dtype=np.int64, count=len(scores)),
            np.fromiter(scores.values(), dtype=np.float64, count=len(scores)))


def make_graph(relations: list[tuple[str, str, str, list[str]]]) -> KnowledgeGraph:
    """(subject, predicate, object, passage ids) → a graph whose entity ids are their names."""
    graph = KnowledgeGraph()
    for s, p, o, passages in relations:
        for name in (s, o):
            graph.add_entity(name, name)
        graph.add_relation(f"{s}|{p}|{o}", s, o, f"{s} {p} {o}", passages)
    return graph


def idx(graph: KnowledgeGraph, name: str) -> int:
    return graph.entity_index[name]


def rel(graph: KnowledgeGraph, s: str, p: str, o: str) -> int:
    return graph.relation_index[f"{s}|{p}|{o}"]


@pytest.mark.parametrize(("name", "expected"), [
    ("Johann Bernoulli", True), ("ÉCOLE Polytechnique", True), ("4 May 1912", False),
    ("1999", False), ("Marvel 2099", True), ("fluid dynamics", False), ("", False),
    ("'s-Hertogenbosch", False), ("March 3, 1870", False),
    # a day or a month named alone is a date; a release's version is an identifier
    ("Tuesday", False), ("July", False), ("Wednesday 25th", False), ("Tue, 14 Oct", False),
    ("Theresa May", True), ("4.12.3", True), ("12.05.2025", False), ("3.5", False),
])
def test_only_proper_noun_like_names_bridge(name: str, expected: bool) -> None:
    assert can_bridge(name) is expected


def test_named_entities_are_not_bridges() -> None:
    graph = make_graph([("Leonhard Euler", "studied under", "Johann Bernoulli", ["p1"])])
    finder = BridgeFinder(graph, "Who taught Leonhard Euler?", linked=set())
    assert finder.is_named(idx(graph, "Leonhard Euler"))  # fuzzy: in the question's text
    assert not finder.is_named(idx(graph, "Johann Bernoulli"))
    probes = finder.bridges({rel(graph, "Leonhard Euler", "studied under", "Johann Bernoulli"):
                             0.6})
    assert [graph.entity_names[p.entity] for p in probes] == ["Johann Bernoulli"]
    assert probes[0].text == "Who taught Leonhard Euler? Johann Bernoulli"
    assert probes[0].confidence == pytest.approx(0.6)


def test_a_rare_anchor_beats_a_hub_with_a_closer_relation() -> None:
    # "Euro" is a hub (in many passages); "Tiny Town" is in one. Both are linked in the question.
    hub = [("Euro", "is currency of", f"Country {i}", [f"h{i}"]) for i in range(20)]
    graph = make_graph([*hub, ("Tiny Town", "is twinned with", "Far Village", ["t1"])])
    linked = {idx(graph, "Euro"), idx(graph, "Tiny Town")}
    finder = BridgeFinder(graph, "Where is the twin of Tiny Town that uses the Euro?", linked)
    scores = {rel(graph, "Euro", "is currency of", "Country 3"): 0.70,
              rel(graph, "Tiny Town", "is twinned with", "Far Village"): 0.50}
    probes = finder.bridges(scores, limit=2)
    names = [graph.entity_names[p.entity] for p in probes]
    assert names == ["Far Village", "Country 3"]
    # The bonus is ANCHOR_BONUS / passages of the anchor: 1 passage for Tiny Town, 20 for Euro.
    assert probes[0].confidence == pytest.approx(0.50 + bridge.ANCHOR_BONUS / 1)
    assert probes[1].confidence == pytest.approx(0.70 + bridge.ANCHOR_BONUS / 20)


def test_a_bridge_keeps_its_best_relation() -> None:
    graph = make_graph([("Ada", "met", "Bob Smith", ["p1"]), ("Ada", "married", "Bob Smith",
                                                               ["p2"])])
    finder = BridgeFinder(graph, "Whom did she marry?", linked=set())
    met, married = rel(graph, "Ada", "met", "Bob Smith"), rel(graph, "Ada", "married",
                                                               "Bob Smith")
    probes = finder.bridges({met: 0.3, married: 0.8})
    bob = next(p for p in probes if graph.entity_names[p.entity] == "Bob Smith")
    assert bob.relation == married and bob.confidence == pytest.approx(0.8)


def test_chain_ranks_third_hop_entities_by_path_score() -> None:
    graph = make_graph([
        ("Leonhard Euler", "studied under", "Johann Bernoulli", ["p1"]),
        ("Daniel Bernoulli", "was the son of", "Johann Bernoulli", ["p2"]),
        ("Johann Bernoulli", "was born in", "Basel", ["p3"]),
        ("Daniel Bernoulli", "contributed to", "Fluid Dynamics", ["p2"]),
    ])
    first = Probe(idx(graph, "Johann Bernoulli"), "q Johann Bernoulli", 0.9,
                  rel(graph, "Leonhard Euler", "studied under", "Johann Bernoulli"))
    finder = BridgeFinder(graph, "What did the son of Euler's teacher contribute?",
                          linked={idx(graph, "Leonhard Euler")})
    around = {rel(graph, "Daniel Bernoulli", "was the son of", "Johann Bernoulli"): 0.40,
              rel(graph, "Johann Bernoulli", "was born in", "Basel"): 0.45}
    candidates = finder.chain_candidates(first, *arrays(around), taken={first.entity},
                                         inner={first.entity})
    assert [graph.entity_names[e] for e, _, _ in candidates] == ["Basel", "Daniel Bernoulli"]
    # Basel's link is closer, but Daniel's onward relation matches the question far better.
    onward = {idx(graph, "Basel"): 0.0, idx(graph, "Daniel Bernoulli"): 0.6}
    chained = finder.chain(first, candidates, onward, limit=1)
    assert [graph.entity_names[p.entity] for p in chained] == ["Daniel Bernoulli"]
    assert chained[0].confidence == first.confidence  # only as sure as its bridge


def test_bridges_are_chosen_by_the_path_through_them() -> None:
    # "the flake whose lot caused IR-2330": the code's supplier relation shares no word with
    # the question, while the report that merely names the code does; the supplier's own
    # facts (its contract for the flake) match the question, the report has none.
    graph = make_graph([
        ("IR-2330", "supplier", "Keller Polymers", ["p1"]),
        ("Annual Review", "mentions", "IR-2330", ["p2"]),
        ("Keller Polymers", "supplies flake under", "MSA-2023-014", ["p3"]),
    ])
    code = idx(graph, "IR-2330")
    finder = BridgeFinder(graph, "Under which contract is the flake of IR-2330 bought?",
                          linked={code})
    proposals = finder.bridges({rel(graph, "IR-2330", "supplier", "Keller Polymers"): 0.40,
                                rel(graph, "Annual Review", "mentions", "IR-2330"): 0.50},
                               limit=bridge.BRIDGE_SHORTLIST)
    assert [graph.entity_names[p.entity] for p in proposals] == ["Annual Review",
                                                                 "Keller Polymers"]
    onward = {idx(graph, "Keller Polymers"): 0.70, idx(graph, "Annual Review"): 0.0}
    chosen = finder.by_path(proposals, onward, limit=1)
    assert [graph.entity_names[p.entity] for p in chosen] == ["Keller Polymers"]
    assert chosen[0].confidence == proposals[1].confidence  # the path only chooses
    # Without onward facts the order of the proposals stands.
    assert finder.by_path(proposals, {}, limit=2) == proposals


def test_a_who_question_prefers_a_person_as_its_bridge() -> None:
    graph = make_graph([
        ("HS-2025-014", "job ref", "JB-41377", ["p1"]),
        ("HS-2025-014", "permit issued by", "Sanjay Mistry", ["p1"]),
    ])
    job = Probe(idx(graph, "JB-41377"), "q JB-41377", 0.70,
                rel(graph, "HS-2025-014", "job ref", "JB-41377"))
    person = Probe(idx(graph, "Sanjay Mistry"), "q Sanjay Mistry", 0.65,
                   rel(graph, "HS-2025-014", "permit issued by", "Sanjay Mistry"))
    linked = {idx(graph, "HS-2025-014")}
    who = BridgeFinder(graph, "Who issued the permit for the job of HS-2025-014, and where "
                       "did he work before?", linked)
    assert who.by_path([job, person], {}, limit=1) == [person]
    assert who.by_path([job, person], {}, limit=1)[0].confidence == 0.65  # it only chooses
    which = BridgeFinder(graph, "Which job was HS-2025-014 part of, and who issued its "
                         "permit?", linked)
    assert which.by_path([job, person], {}, limit=1) == [job]
    # asking only who, the question goes through something else (an association, a job)
    only = BridgeFinder(graph, "Who issued the permit for the job of HS-2025-014?", linked)
    assert only.by_path([job, person], {}, limit=1) == [job]


@pytest.mark.parametrize(("question", "on"), [
    ("Who was the site representative at the audit in NCS-25-0614, and in which part of the "
     "armed forces had he served?", "in which part of the armed forces had he served?"),
    ("Who signed the agreement for Harrowgate, and where did that person work before "
     "joining, and when?", "where did that person work before joining, and when?"),
    ("Whose approval did the offer in CMP-2025-0318 need, and who holds that post?", None),
    ("Who issued the permit for HS-2025-014?", None),
    ("Which job was HS-2025-014 part of, and who issued its permit?", None),
    ("Who issued the permit, and ?", None),
])
def test_what_a_who_question_asks_on(question: str, on: str | None) -> None:
    assert bridge.asked_on(question) == on


def test_a_person_bridge_of_a_who_question_is_probed_with_what_it_asks_on() -> None:
    graph = make_graph([
        ("NCS-25-0614", "site representative", "Tom Barraclough", ["p1"]),
        ("NCS-25-0614", "site", "DEP-DON-03", ["p1"]),
    ])
    question = ("Who was the site representative at the audit in NCS-25-0614, and in which "
                "part of the armed forces had he served?")
    finder = BridgeFinder(graph, question, {idx(graph, "NCS-25-0614")})
    person = finder.probe(idx(graph, "Tom Barraclough"), 0.6, 0)
    assert person.text == "Tom Barraclough in which part of the armed forces had he served?"
    assert person.confidence == 0.6
    # a bridge that is no person is probed with the whole question, as is every bridge of
    # a question that does not ask who and then on
    assert finder.probe(idx(graph, "DEP-DON-03"), 0.6, 1).text == f"{question} DEP-DON-03"
    plain = BridgeFinder(graph, "Who was the site representative at the audit in "
                         "NCS-25-0614?", {idx(graph, "NCS-25-0614")})
    assert plain.probe(idx(graph, "Tom Barraclough"), 0.6, 0).text == (
        "Who was the site representative at the audit in NCS-25-0614? Tom Barraclough")


def test_a_post_held_by_one_person_has_that_holder() -> None:
    graph = make_graph([
        ("Colin Mabbott", "is", "Engineering Manager", ["p1"]),
        ("Colin Mabbott", "owner", "NCR-030", ["p2"]),
        ("Tom Barraclough", "is", "Depot Manager", ["p3"]),
        ("Gareth Pryor", "is", "Depot Manager", ["p4"]),
        ("Hull depot", "is", "Site Manager", ["p5"]),
        ("Colin Mabbott", "is", "Keller Polymers", ["p6"]),
    ])
    holders = Holders(graph)
    assert holders.of(idx(graph, "Engineering Manager")) == (
        idx(graph, "Colin Mabbott"), rel(graph, "Colin Mabbott", "is", "Engineering Manager"))
    assert holders.of(idx(graph, "Depot Manager")) is None  # two holders: none
    assert holders.of(idx(graph, "Site Manager")) is None  # "Hull depot" is no person
    assert holders.of(idx(graph, "Keller Polymers")) is None  # no post
    assert holders.of(idx(graph, "Colin Mabbott")) is None


def test_a_question_naming_a_post_proposes_its_holder() -> None:
    graph = make_graph([
        ("Colin Mabbott", "is", "Engineering Manager", ["p1"]),
        ("Engineering Manager", "has a plan for", "Hull", ["p2"]),
    ])
    question = "What BRCGS grade did the depot where the Engineering Manager works get?"
    finder = BridgeFinder(graph, question, {idx(graph, "Engineering Manager")})
    holder = rel(graph, "Colin Mabbott", "is", "Engineering Manager")
    plan = rel(graph, "Engineering Manager", "has a plan for", "Hull")
    proposals = finder.bridges({plan: 0.6, holder: 0.4}, limit=2)
    anchor = bridge.ANCHOR_BONUS / 2  # the post is in two passages
    assert [(graph.entity_names[p.entity], p.confidence) for p in proposals] == [
        ("Colin Mabbott", pytest.approx(0.4 + anchor + bridge.HOLDER_BONUS)),
        ("Hull", pytest.approx(0.6 + anchor))]
    # a post reached as a bridge is re-queried with its holder's name too
    assert finder.probe(idx(graph, "Engineering Manager"), 0.5, plan).text == (
        f"{question} Engineering Manager Colin Mabbott")
    assert finder.probe(idx(graph, "Hull"), 0.5, plan).text == f"{question} Hull"


def test_merge_keeps_each_passages_best_score_with_offset_and_boost() -> None:
    sure = Probe(entity=1, text="q A", confidence=0.9, relation=0)
    unsure = Probe(entity=2, text="q B", confidence=0.6, relation=1)
    merged = merge_searches(
        {"p1": 0.50, "p2": 0.40},
        [(sure, {"p2": 0.45, "p3": 0.30}), (unsure, {"p1": 0.70, "p4": 0.80})],
        {1: {"p3"}, 2: set()},
    )
    assert merged["p1"] == Scored(0.50, None)  # 0.70 - 0.3 offset < 0.50 from the question
    assert merged["p2"] == Scored(0.45, sure)
    assert merged["p3"].score == pytest.approx(0.30 + bridge.BRIDGE_BOOST)  # bridge's own
    assert merged["p4"].score == pytest.approx(0.80 - bridge.CONFIDENCE_SLOPE * 0.3)
    assert merged["p4"].probe is unsure
    assert merge_searches({"p1": 0.5}, [], {}) == {"p1": Scored(0.5, None)}


def _loop_bridges(finder: BridgeFinder, scores: dict[int, float], limit: int) -> list[Probe]:
    """The bridge choice written as the plain loop over relations (the reference)."""
    graph, best, bonus = finder.graph, {}, {}
    for r, score in scores.items():
        s, o = int(graph.subjects[r]), int(graph.objects[r])
        for b, anchor in ((s, o), (o, s)):
            if not finder.usable(b):
                continue
            total = score
            if attributes.asked_for(graph, [r], attributes.asked_words(finder.question))[0]:
                total += bridge.ATTRIBUTE_BONUS
            if anchor in finder.linked:
                bonus.setdefault(anchor, bridge.ANCHOR_BONUS / max(
                    1, len(graph.passages_of_entity(anchor))))
                total += bonus[anchor]
                if Holders(graph).of(anchor) == (b, r):
                    total += bridge.HOLDER_BONUS
            if b not in best or total > best[b][0]:
                best[b] = (total, r)
    ranked = sorted(best.items(), key=lambda kv: -kv[1][0])[:limit]
    return [finder.probe(e, conf, r) for e, (conf, r) in ranked]


def _loop_chain(finder: BridgeFinder, first: Probe, scores: dict[int, float], taken: set[int],
                inner: set[int]) -> list[tuple[int, float, int]]:
    graph, best = finder.graph, {}
    for r, score in scores.items():
        if r == first.relation:
            continue
        s, o = int(graph.subjects[r]), int(graph.objects[r])
        other = s if o in inner else o
        if other in inner or other in taken or not finder.usable(other):
            continue
        if other not in best or score > best[other][0]:
            best[other] = (score, r)
    ranked = sorted(best.items(), key=lambda kv: -kv[1][0])[:bridge.CHAIN_SHORTLIST]
    return [(e, score, r) for e, (score, r) in ranked]


# some attributes the question below asks for, some it does not, some no attribute
PREDICATES = ["owner", "contract manager", "manager", "supplier", "is owner of", "p5", "made"]


@pytest.mark.parametrize("seed", range(6))
def test_vectorized_choices_equal_the_plain_loops(seed: int) -> None:
    """Random hub-heavy graphs, scores drawn from few values (many exact ties): the vectorized
    bridge and chain choices are exactly the loops', order and ties included."""
    rng = np.random.default_rng(seed)
    names = [f"Name{i}" if i % 4 else f"name{i}" for i in range(60)]  # some not usable
    weights = 1.0 / np.arange(1, 61)
    triples = []
    for i in range(400):
        s, o = rng.choice(60, size=2, p=weights / weights.sum())
        triples.append((names[s], PREDICATES[i % len(PREDICATES)], names[o],
                        [f"d{rng.integers(0, 80)}"]))
    # posts and their holders (`posts`): one held by one person, one by two
    triples += [("Ann Lee", "is", "Quality Manager", ["d1"]), ("Bo Tan", "is", "Site Director",
                ["d2"]), ("Cy Day", "is", "Site Director", ["d3"]), ("Ann Lee", "owner", "Name3",
                ["d4"]), ("Name5", "owner", "Quality Manager", ["d5"])]
    graph = make_graph(triples)
    posts = [idx(graph, "Quality Manager"), idx(graph, "Site Director")]
    for _ in range(20):
        rels = rng.choice(len(graph.relations), size=int(rng.integers(1, 200)), replace=False)
        scores = {int(r): float(rng.choice([0.1, 0.25, 0.5, 0.75])) for r in rels}
        scores.update({rel(graph, "Ann Lee", "is", "Quality Manager"): 0.3,
                       rel(graph, "Bo Tan", "is", "Site Director"): 0.3})
        linked = {int(e) for e in rng.choice(len(graph.entity_ids), size=3)} | set(posts)
        finder = BridgeFinder(graph, "Which owner or contract manager is it?", linked)
        limit = int(rng.integers(1, 6))
        assert finder.bridges(scores, limit) == _loop_bridges(finder, scores, limit)
        first = finder.probe(int(rng.integers(0, len(graph.entity_ids))), 1.0, int(rels[0]))
        inner, taken = {first.entity}, {int(rng.integers(0, len(graph.entity_ids)))}
        assert finder.chain_candidates(first, *arrays(scores), taken, inner) == _loop_chain(
            finder, first, scores, taken, inner)


@pytest.mark.parametrize(("name", "family"), [
    ("IR-2341", "IR"), ("CA-2025-029", "CA"), ("sw-K4P-0453", "SW"), ("Keller Polymers", None),
    ("2025-029", None), ("KX-4", "KX"),
])
def test_an_identifiers_family_is_its_leading_letters(name: str, family: str | None) -> None:
    assert bridge.code_family(name) == family


def test_relations_about_another_code_of_a_named_family_are_left_out() -> None:
    graph = make_graph([("IR-2341", "supplier", "Brackley Coatings", ["p1"]),
                        ("IR-2322", "supplier", "Orrin & Tate", ["p2"]),
                        ("CA-2025-021", "from incident", "IR-2322", ["p3"]),
                        ("CA-2025-029", "from incident", "IR-2341", ["p4"]),
                        ("Orrin & Tate", "based in", "Redditch", ["p5"])])
    scores = {r: 0.5 for r in range(len(graph.relations))}
    kept = bridge.without_other_codes(graph, scores, {idx(graph, "IR-2341")})
    assert {graph.relations[r].text for r in kept} == {
        "IR-2341 supplier Brackley Coatings", "CA-2025-029 from incident IR-2341",
        "Orrin & Tate based in Redditch"}  # CA is not a family the question names
    # a question naming both incidents, or no code, keeps every relation
    both = {idx(graph, "IR-2341"), idx(graph, "IR-2322")}
    assert bridge.without_other_codes(graph, scores, both) == scores
    assert bridge.without_other_codes(graph, scores, {idx(graph, "Orrin & Tate")}) == scores


def test_names_found_all_over_the_passages_are_left_out_of_the_relation_question() -> None:
    question = "Under which contract does Ashby Vale buy the flake whose lot caused IR-2330?"
    kept = bridge.without_common_names(question, ["Ashby Vale"])
    assert kept == "Under which contract does buy the flake whose lot caused IR-2330?"
    # With no common name, or too few words left, the question is kept whole.
    assert bridge.without_common_names(question, []) == question
    assert bridge.without_common_names("Who owns Ashby Vale?", ["Ashby Vale"]) == (
        "Who owns Ashby Vale?")
    # The matched text, case aside; the longer of two overlapping names first.
    assert bridge.without_common_names(
        "Where is ashby vale's Coalville site, and who runs it?",
        ["Ashby Vale", "ashby vale's Coalville"],
    ) == "Where is site, and who runs it?"


def test_a_common_name_is_in_a_share_of_the_passages_and_in_enough_of_them() -> None:
    share, least = bridge.COMMON_SHARE, bridge.MIN_COMMON_PASSAGES
    big = 4 * least  # passages enough for the share to decide
    assert bridge.common_names([share, share - 0.01, 0.9, 0.0], int(big / share)) == [
        True, False, True, False]
    # A small folder names its subject in every other passage: nothing is common there.
    assert bridge.common_names([0.5, 1.0], least - 1) == [False, False]
    assert bridge.common_names([1.0], least) == [True]


def test_a_question_naming_two_entities_gets_a_third_bridge() -> None:
    assert [bridge.bridge_count(n) for n in range(5)] == [2, 2, 3, 3, 3]


def test_a_question_naming_a_code_gets_a_third_bridge() -> None:
    # The code counts as one name more: a record's header relates it to many things.
    assert [bridge.bridge_count(n, identifier=True) for n in range(4)] == [2, 3, 3, 3]


def test_longer_names_of_the_folders_own_name_are_no_bridges() -> None:
    graph = make_graph([
        ("Harrowgate", "runs", "Harrowgate Cold Chain", ["p1"]),
        ("Harrowgate", "head office", "Harrowgate House", ["p2"]),
        ("Harrowgate", "employs", "Priya Nair", ["p3"]),
        ("Wellington", "home of", "Wellington Regional Stadium", ["p4"]),
    ])
    question = "Who at Harrowgate decided on lot 24B-117, near Wellington?"
    company, town = idx(graph, "Harrowgate"), idx(graph, "Wellington")
    assert bridge.own_names([company, town], [0.21, 0.01]) == {company}
    finder = BridgeFinder(graph, question, {company, town}, {company})
    scores = {rel(graph, "Harrowgate", "runs", "Harrowgate Cold Chain"): 0.7,
              rel(graph, "Harrowgate", "head office", "Harrowgate House"): 0.6,
              rel(graph, "Harrowgate", "employs", "Priya Nair"): 0.4,
              rel(graph, "Wellington", "home of", "Wellington Regional Stadium"): 0.3}
    chosen = sorted(graph.entity_names[p.entity] for p in finder.bridges(scores, 3))
    assert chosen == ["Priya Nair", "Wellington Regional Stadium"]
    # Without the share, every longer name bridges as before.
    plain = BridgeFinder(graph, question, {company, town})
    assert {graph.entity_names[p.entity] for p in plain.bridges(scores, 3)} >= {
        "Harrowgate Cold Chain", "Harrowgate House"}


def test_a_relation_whose_attribute_the_question_asks_for_gets_the_bonus() -> None:
    graph = make_graph([("IR-2330", "reported by", "Coalville", ["p1"]),
                        ("IR-2330", "supplier", "Keller Polymers", ["p1"])])
    question = "What score did the supplier of the material in incident IR-2330 get?"
    finder = BridgeFinder(graph, question, {idx(graph, "IR-2330")})
    probes = finder.bridges({rel(graph, "IR-2330", "reported by", "Coalville"): 0.61,
                             rel(graph, "IR-2330", "supplier", "Keller Polymers"): 0.57}, 2)
    assert [graph.entity_names[p.entity] for p in probes] == ["Keller Polymers", "Coalville"]
    assert probes[0].confidence == pytest.approx(0.57 + bridge.ATTRIBUTE_BONUS
                                                 + bridge.ANCHOR_BONUS)


@pytest.mark.parametrize(("predicate", "words"), [
    ("supplier", ("supplier",)), ("contract manager", ("contract", "manager")),
    ("owner, quality manager", ("owner",)),  # the role after the comma aside
    ("(mobility scooters on the landings) responsible", ("responsible",)),  # a row's description
    ("published by", ()), ("is a river of", ()), ("q2 2025", ()),  # function words, numbers
    ("killed", ()), ("located", ()),  # a verb's past: what the subject did
    ("total cost of the whole works", ()),  # more than MAX_ATTRIBUTE_WORDS words
])
def test_an_attribute_is_a_predicate_of_words_alone(predicate: str,
                                                    words: tuple[str, ...]) -> None:
    graph = make_graph([("A1", predicate, "Keller Polymers", ["p1"])])
    assert attributes.attribute(graph, 0) == words


def test_words_that_describe_the_name_after_them_are_not_asked_for() -> None:
    asked = attributes.asked_words("Which actresses split the Hong Kong duo Twins, and who "
                                   "was their manager?")
    assert "manager" in asked and "actresses" in asked
    assert "duo" not in asked  # "duo Twins": Twins is named, no duo is asked for
    assert attributes.asked_words("\u0006 ?") == frozenset()  # a question of no word at all
