import numpy as np
import pytest
from conftest import BERNOULLI, need

from hopgraph.graph import KnowledgeGraph
from hopgraph.graph.reference import MatrixPowers
from hopgraph.identity import entity_id, relation_id, relation_text
from hopgraph.ingest.loaders import load_file


def bernoulli_graph() -> KnowledgeGraph:
    graph = KnowledgeGraph()
    for record in load_file(need(BERNOULLI)).records:
        for t in record.triplets:
            graph.add_relation(relation_id(t.subject, t.predicate, t.object),
                               entity_id(t.subject), entity_id(t.object),
                               relation_text(t.subject, t.predicate, t.object), ["p"])
    return graph


def random_graph(seed: int, n_entities: int = 1500, n_relations: int = 4000) -> KnowledgeGraph:
    rng = np.random.default_rng(seed)
    graph = KnowledgeGraph()
    # A skewed degree distribution, like real graphs: a few hubs, many leaves, some self-loops.
    weights = rng.zipf(2.2, n_entities).astype(float)
    weights /= weights.sum()
    ends = rng.choice(n_entities, size=(n_relations, 2), p=weights)
    loops = rng.random(n_relations) < 0.01
    ends[loops, 1] = ends[loops, 0]
    for r, (s, o) in enumerate(ends.tolist()):
        graph.add_relation(f"r{r}", f"e{s}", f"e{o}", f"e{s} rel e{o}", [])
    return graph


def check_equivalent(graph: KnowledgeGraph, rng: np.random.Generator, trials: int) -> None:
    n_ent, n_rel = len(graph.entity_ids), len(graph.relations)
    reference = MatrixPowers(graph.incidence)
    for _ in range(trials):
        seed_e = rng.choice(n_ent, size=rng.integers(0, 4), replace=False).tolist()
        seed_r = rng.choice(n_rel, size=rng.integers(0, 4), replace=False).tolist()
        for degree in (1, 2):
            walked = graph.expand(seed_e, seed_r, degree)
            powered = reference.expand(seed_e, seed_r, degree)
            assert np.array_equal(walked, powered), (seed_e, seed_r, degree)


def test_expansion_matches_matrix_powers_on_bernoulli() -> None:
    graph = bernoulli_graph()
    check_equivalent(graph, np.random.default_rng(0), trials=40)
    # Euler's only link is through Johann: degree 1 from Euler reaches Johann's relations.
    euler = graph.entity_index[entity_id("Euler")]
    texts = {graph.relations[r].text for r in graph.expand([euler], [], 1)}
    # Euler's one relation reaches the node "Johann Bernoulli's influence", which has no
    # other relation: degree 1 stays within that pair.
    assert texts == {"Johann Bernoulli's influence was profound on Euler"}


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.slow
def test_expansion_matches_matrix_powers_on_random_graph(seed: int) -> None:
    graph = random_graph(seed)
    assert len(graph.relations) == 4000
    check_equivalent(graph, np.random.default_rng(seed), trials=15)


def test_expansion_reaches_neighbours_and_rejects_bad_degree() -> None:
    graph = KnowledgeGraph()
    graph.add_relation("r0", "a", "b", "a-b", [])
    graph.add_relation("r1", "b", "c", "b-c", [])
    graph.add_relation("r2", "c", "d", "c-d", [])
    graph.add_relation("r3", "x", "y", "x-y", [])
    assert graph.expand([], [0], 1).tolist() == [0, 1]
    assert graph.expand([], [0], 2).tolist() == [0, 1, 2]
    # entity a: degree 1 reaches entities {a, b} and so relations r0 and r1
    from_a = graph.expand([graph.entity_index["a"]], [], 1)
    assert from_a.tolist() == [0, 1]
    assert graph.expand([], [], 2).tolist() == []
    with pytest.raises(ValueError, match="degree"):
        graph.expand([], [0], 0)


def test_adding_a_relation_twice_updates_its_passages() -> None:
    graph = KnowledgeGraph()
    first = graph.add_relation("r0", "a", "b", "a-b", ["p1"])
    again = graph.add_relation("r0", "a", "b", "a-b", ["p1", "p2"])
    assert first == again and graph.relations[0].passage_ids == ["p1", "p2"]
    assert graph.incidence.shape == (2, 1)


def test_copy_and_citing_see_replaced_passage_lists() -> None:
    graph = KnowledgeGraph()
    graph.add_relation("r0", "a", "b", "a-b", ["p0"])
    graph.add_relation("r1", "b", "c", "b-c", ["p1"])
    graph.add_relation("r0", "a", "b", "a-b", ["p1", "p2"])  # replaced, not yet folded
    copy = graph.copy()
    graph.add_relation("r1", "b", "c", "b-c", ["p0"])  # the copy keeps its own lists
    assert [r.passage_ids for r in copy.relations] == [["p1", "p2"], ["p1"]]
    assert copy.citing(np.array([copy.passage_index["p1"]])).tolist() == [0, 1]
    assert graph.citing(np.array([graph.passage_index["p0"]])).tolist() == [1]


def test_columns_round_trip_with_updated_passages() -> None:
    """`arrays()` folds updated passage lists into one CSR; `from_arrays` rebuilds an equal
    graph (relations, passages per entity, incidence)."""
    graph = random_graph(4, n_entities=200, n_relations=500)
    for r in range(0, 500, 7):
        graph.add_relation(f"r{r}", "", "", "", [f"p{r}", f"q{r % 13}"])
    graph.add_relation("r-new", "e1", "e2", "e1 new e2", ["p-new"])
    cols = graph.arrays()
    copy = KnowledgeGraph.from_arrays(
        graph.entity_ids, graph.entity_names, graph.relation_ids, graph.relation_texts,
        cols["subject"], cols["object"], graph.passage_ids, cols["passage_indptr"],
        cols["passage_index"])
    assert list(copy.relations) == list(graph.relations)
    assert copy.relations[7].passage_ids == ["p7", "q7"]
    assert copy.relations[-1].passage_ids == ["p-new"]
    assert all(copy.passages_of_entity(e) == graph.passages_of_entity(e)
               for e in range(len(graph.entity_ids)))
    assert (copy.incidence != graph.incidence).nnz == 0


@pytest.mark.parametrize("damage", ["duplicate id", "subject out of range", "short offsets"])
def test_inconsistent_columns_are_rejected(damage: str) -> None:
    graph = random_graph(5, n_entities=20, n_relations=30)
    cols = graph.arrays()
    ids = list(graph.relation_ids)
    if damage == "duplicate id":
        ids[1] = ids[0]
    elif damage == "subject out of range":
        cols["subject"][3] = 99
    else:
        cols["passage_indptr"] = cols["passage_indptr"][:-1]
    with pytest.raises(ValueError):
        KnowledgeGraph.from_arrays(graph.entity_ids, graph.entity_names, ids,
                                   graph.relation_texts, cols["subject"], cols["object"],
                                   graph.passage_ids, cols["passage_indptr"],
                                   cols["passage_index"])


def test_max_degree_follows_the_graph_as_it_grows() -> None:
    graph = KnowledgeGraph()
    assert graph.max_degree == 0
    graph.add_relation("r1", "a", "b", "a knows b", [])
    graph.add_relation("r2", "a", "c", "a knows c", [])
    assert graph.max_degree == 2
    graph.add_relation("r3", "a", "d", "a knows d", [])
    graph.add_relation("r4", "e", "e", "e is e", [])  # a self-loop counts once
    assert graph.max_degree == 3
    assert graph.copy().max_degree == 3


def test_threads_that_first_use_a_graph_together_all_expand_it() -> None:
    """A server's queries share one graph, and its matrices are built by the first query
    that needs them: a thread that finds them half built must not fail. Threads walk the
    same fresh graphs in turn with a tiny switch interval, so that some arrive while another
    builds; correct code passes whatever the interleaving."""
    import sys
    import threading

    graphs = [random_graph(seed, n_entities=60, n_relations=120) for seed in range(300)]
    errors: list[BaseException] = []

    def walk() -> None:
        try:
            for graph in graphs:
                graph.expand([0, 1], [2], 1)
                _ = graph.max_degree
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=walk) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[0]


def test_folding_a_shared_graph_while_others_read_it_changes_no_answer() -> None:
    """A server's follower takes in a graph with replaced passage lists (another process
    changed a relation's passages); a filtered query folds them into the CSR
    (`passage_csr`) while other queries read passages. No reader may see a half-folded
    graph, no two folds may trip over each other, and the graph reads the same after."""
    import random
    import sys
    import threading

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    failures: list[str] = []
    try:
        for trial in range(6):
            rng = random.Random(trial)
            graph = KnowledgeGraph()
            for r in range(2000):
                passages = [f"p{rng.randrange(1500)}" for _ in range(rng.randint(1, 3))]
                graph.add_relation(f"r{r}", f"e{rng.randrange(300)}", f"e{rng.randrange(300)}",
                                   "t", passages)
            graph.passage_csr()
            for r in rng.sample(range(2000), 150):  # replaced, not yet folded
                graph.set_passages(r, [f"p{rng.randrange(1500)}"
                                       for _ in range(rng.randint(1, 6))])
            want = [graph.passages_of(r) for r in range(2000)]
            start = threading.Barrier(6)

            def fold(graph: KnowledgeGraph = graph, start: threading.Barrier = start) -> None:
                start.wait()
                try:
                    graph.passage_csr()
                except Exception as exc:  # reported below, in the test's thread
                    failures.append(repr(exc))

            def read(graph: KnowledgeGraph = graph, start: threading.Barrier = start,
                     want: list[list[str]] = want) -> None:
                start.wait()
                try:
                    for _ in range(2):
                        failures.extend(f"relation {r} read {graph.passages_of(r)}"
                                        for r in range(0, 2000, 5)
                                        if graph.passages_of(r) != want[r])
                except Exception as exc:  # reported below, in the test's thread
                    failures.append(repr(exc))

            threads = [threading.Thread(target=fold) for _ in range(3)] + [
                threading.Thread(target=read) for _ in range(3)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            failures.extend(f"relation {r} after the folds" for r in range(2000)
                            if graph.passages_of(r) != want[r])
    finally:
        sys.setswitchinterval(interval)
    assert not failures, (len(failures), failures[:3])
