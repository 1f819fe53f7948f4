import json
from pathlib import Path

import pytest
from conftest import BERNOULLI, CountingEmbedder, need

from hopgraph.graph import KnowledgeGraph
from hopgraph.identity import content_key, entity_id, passage_id, relation_id
from hopgraph.ingest.loaders import source_doc_id
from hopgraph.lexicon.link import EntityLinker

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    return path


def test_ingest_then_reopen_without_reingest(open_graph, embedder: CountingEmbedder,
                                             tmp_path: Path) -> None:
    rag = open_graph()
    summary = rag.add_files([need(BERNOULLI)])
    assert (summary.passages_added, summary.relations_added) == (4, 22)
    assert summary.entities_added == 24
    assert summary.texts_embedded == 4 + 24 + 22
    stats = rag.stats()
    assert (stats["passages"], stats["entities"], stats["relations"]) == (4, 24, 22)
    rag.close()

    reopened = open_graph()
    assert len(reopened.graph.relations) == 22
    assert len(reopened.graph.entity_ids) == 24
    before = embedder.texts
    again = reopened.add_files([BERNOULLI])
    assert again.passages_added == again.entities_added == again.relations_added == 0
    assert again.relations_present == 22 and again.relations_linked == 0
    assert embedder.texts == before  # nothing embedded on re-ingest
    assert reopened.stats()["relations"] == 22


def test_second_file_links_shared_entities_and_passages(open_graph, store_of,
                                                        tmp_path: Path) -> None:
    rag = open_graph()
    first = write_jsonl(tmp_path / "one.jsonl", [
        {"passage": "Leonhard Euler studied under Johann Bernoulli.",
         "triplets": [["Leonhard Euler", "studied under", "Johann Bernoulli"]]},
    ])
    second = write_jsonl(tmp_path / "two.jsonl", [
        {"passage": "leonhard Euler was born in Basel. He studied under Johann Bernoulli.",
         "triplets": [["leonhard Euler", "was born in", "Basel"],
                      ["leonhard euler", "studied under", "johann bernoulli"]]},
    ])
    rag.add_files([first])
    summary = rag.add_files([second])
    assert summary.entities_added == 1  # only Basel is new
    assert summary.entities_present == 2
    assert summary.relations_added == 1 and summary.relations_linked == 1
    rid = relation_id("Leonhard Euler", "studied under", "Johann Bernoulli")
    store = store_of(rag)
    stored = store.get(store.relations, [rid], ["passage_ids"])[0]["passage_ids"]
    assert sorted(stored) == sorted([
        passage_id("Leonhard Euler studied under Johann Bernoulli.", source_doc_id(first)),
        passage_id("leonhard Euler was born in Basel. He studied under Johann Bernoulli.",
                   source_doc_id(second)),
    ])
    euler = rag.graph.entity_index[entity_id("Leonhard Euler")]
    assert rag.graph.entity_names[euler] == "Leonhard Euler"  # first surface form kept
    assert len(rag.graph.relations_of([euler])) == 2
    # the in-memory graph and a fresh load agree
    rag.close()
    fresh = open_graph()
    index = fresh.graph.relation_index[rid]
    assert sorted(fresh.graph.relations[index].passage_ids) == sorted(stored)


def test_unicode_entities_are_distinct_and_findable(open_graph, tmp_path: Path) -> None:
    rag = open_graph()
    path = write_jsonl(tmp_path / "u.jsonl", [
        {"passage": "Kurt Gödel proved incompleteness.",
         "triplets": [["Gödel", "proved", "incompleteness theorems"]]},
        {"passage": "Godel is also a town name in this made-up text.",
         "triplets": [["Godel", "is", "a town"]]},
        {"passage": "C++ was designed by Bjarne Stroustrup.",
         "triplets": [["C++", "was designed by", "Bjarne Stroustrup"]]},
        {"passage": "C was designed by Dennis Ritchie.",
         "triplets": [["C", "was designed by", "Dennis Ritchie"]]},
        {"passage": "爱因斯坦提出了相对论。", "triplets": [["爱因斯坦", "提出了", "相对论"]]},
    ])
    summary = rag.add_files([path])
    assert summary.entities_added == 10
    names = set(rag.graph.entity_names)
    assert {"Gödel", "Godel", "C++", "C", "爱因斯坦"} <= names
    linker = EntityLinker(rag.graph.entity_names)  # as a retriever over the graph has it
    linked = {m.name for m in linker.link("What did Gödel prove?")}
    assert "Gödel" in linked and "Godel" not in linked
    assert "C++" in {m.name for m in linker.link("Who designed C++?")}
    assert "爱因斯坦" in {m.name for m in linker.link("爱因斯坦提出了什么?")}
    top = rag.retrieve("Who designed C++?", top_k=1).passages[0]
    assert "Stroustrup" in top.text


def test_python_dicts_and_bad_rows(open_graph, store_of) -> None:
    rag = open_graph()
    summary = rag.add([
        {"passage": "Alpha is near Beta.", "triplets": [["Alpha", "is near", "Beta"]],
         "doc_id": "doc-a", "id": 7, "metadata": {"source": "unit"}},
    ])
    assert summary.passages_added == 1
    store = store_of(rag)
    row = store.get(store.passages, [passage_id("Alpha is near Beta.", "doc-a")],
                    ["doc_id", "metadata"])[0]
    assert row["doc_id"] == "doc-a" and row["metadata"] == {"source": "unit", "id": 7}


def test_bad_python_items_are_skipped_and_reported(open_graph) -> None:
    rag = open_graph()
    summary = rag.add([
        {"passage": "", "triplets": []},
        {"triplets": [["A", "is", "B"]]},
        {"passage": "Good one.", "triplets": [["A", "is"], ["A", "is", "B"]]},
    ])
    assert summary.passages_added == 1 and summary.relations_added == 1
    assert summary.rows_skipped == 2 and summary.triplets_skipped == 1
    assert [p.where for p in summary.problems][:2] == ["item 0", "item 1"]


def test_oversized_rows_are_skipped_not_fatal(open_graph) -> None:
    rag = open_graph()
    summary = rag.add([
        {"passage": "x" * 70000, "triplets": []},
        {"passage": "Fine.", "triplets": [["A" * 3000, "is", "long"], ["A", "is", "B"]]},
    ])
    assert summary.rows_skipped == 1 and summary.triplets_skipped == 1
    assert summary.passages_added == 1 and summary.relations_added == 1


def test_many_graphs_in_one_database(open_graph, tmp_path: Path) -> None:
    one = open_graph("one")
    two = open_graph("two")
    one.add([{"passage": "A is B.", "triplets": [["A", "is", "B"]]}])
    assert one.stats()["passages"] == 1
    assert two.stats()["passages"] == 0
    assert two.drop() is True
    assert one.stats()["passages"] == 1


def test_after_drop_reads_say_the_graph_is_gone_and_the_next_write_makes_it_again(
        open_graph) -> None:
    from hopgraph.errors import StoreError

    rag = open_graph("remade")
    rag.add([{"doc_id": "a", "passage": "Ada Lovelace worked with Charles Babbage.",
              "triplets": [["Ada Lovelace", "worked with", "Charles Babbage"]]}])
    assert rag.drop() is True
    for read in (rag.stats, lambda: rag.retrieve("Who worked with Babbage?")):
        with pytest.raises(StoreError, match="does not exist"):
            read()
    rag.add([{"doc_id": "b", "passage": "Charles Babbage designed the Analytical Engine.",
              "triplets": [["Charles Babbage", "designed", "Analytical Engine"]]}])
    assert rag.documents() == {"b": 1}
    assert rag.stats()["passages"] == 1 and rag.stats()["entities"] == 2
    hits = rag.retrieve("Who designed the Analytical Engine?").passages
    assert [hit.doc_id for hit in hits] == ["b"]
    rag.close()
    again = open_graph("remade")
    assert again.documents() == {"b": 1}


def test_a_graph_that_lost_its_meta_row_can_still_be_dropped(open_graph, store_of) -> None:
    rag = open_graph("metaless")
    rag.add([{"doc_id": "a", "passage": "A is B.", "triplets": [["A", "is", "B"]]}])
    rag.close()
    store = store_of(rag)  # as `hopgraph drop` opens it: no meta row read yet
    store.delete(store.meta_collection, ["graph"])  # the meta row's id
    assert store.drop() is True
    assert not store.exists()


def test_opening_with_another_embedder_is_an_error(open_graph, tmp_path: Path) -> None:
    from hopgraph.errors import StoreError

    rag = open_graph()
    rag.add([{"passage": "A is B.", "triplets": [["A", "is", "B"]]}])
    rag.close()

    class Other(CountingEmbedder):
        name = "openai:text-embedding-3-small"

    other = Other(rag.embedder.inner)
    other.name = "openai:text-embedding-3-small"
    with pytest.raises(StoreError, match="built with embedder local:all-MiniLM-L6-v2"):
        open_graph(embedder=other)


def test_query_on_missing_graph_is_an_error(open_graph) -> None:
    from hopgraph.errors import StoreError

    with pytest.raises(StoreError, match="does not exist"):
        open_graph("absent", create=False)
    with pytest.raises(StoreError, match="invalid"):
        open_graph("bad-name!")


def test_chunked_ingest_counts_and_stores_what_one_chunk_does(open_graph, store_of) -> None:
    from hopgraph.ingest import Ingestor
    from hopgraph.ingest.loaders import load_file

    records = load_file(need(BERNOULLI)).records
    records = records + records[:1]  # a passage repeated in a later chunk
    results = []
    for size in (1000, 1):  # one chunk; then every record a chunk of its own
        rag = open_graph(f"chunks{size}")  # a new graph: its store and an empty graph
        store, graph = store_of(rag), KnowledgeGraph()
        summary = Ingestor(store, graph, rag.embedder, chunk_passages=size).ingest(records)
        store.flush()
        stored = {row["id"]: sorted(row["passage_ids"]) for row in
                  store.scan(store.relations, ["id", "passage_ids"])}
        results.append((summary.passages_added, summary.passages_present,
                        summary.entities_added, summary.entities_present,
                        summary.relations_added, summary.relations_present,
                        summary.relations_linked, summary.texts_embedded, stored,
                        {r.id: sorted(r.passage_ids) for r in graph.relations}))
    assert results[0] == results[1]
    assert results[0][:8] == (4, 0, 24, 0, 22, 0, 0, 50)
    assert results[0][8] == results[0][9]  # the in-memory graph matches Milvus


def test_a_relation_found_again_in_a_later_chunk_links_both_passages(open_graph,
                                                                      store_of) -> None:
    from hopgraph.ingest import Ingestor
    from hopgraph.records import PassageRecord, Triplet

    fact = Triplet("Basel", "lies on", "Rhine")
    records = [PassageRecord("Basel lies on the Rhine.", [fact]),
               PassageRecord("The Rhine flows through Basel.", [fact])]
    rag = open_graph()  # a new graph: its store and an empty graph
    store, graph = store_of(rag), KnowledgeGraph()
    summary = Ingestor(store, graph, rag.embedder, chunk_passages=1).ingest(records)
    assert (summary.relations_added, summary.relations_present, summary.relations_linked) == (
        1, 0, 0)
    rid = relation_id("Basel", "lies on", "Rhine")
    stored = store.get(store.relations, [rid], ["passage_ids"])[0]["passage_ids"]
    expected = sorted(passage_id(r.text, content_key(r.text)) for r in records)
    assert sorted(stored) == expected
    assert sorted(graph.relations[graph.relation_index[rid]].passage_ids) == expected


def test_add_streams_a_generator_chunk_by_chunk(open_graph, monkeypatch) -> None:
    """Items are read as a stream: the first chunk is stored before the generator is done,
    and a bad item in the middle is reported while the rest are kept."""
    from hopgraph.ingest import writer

    monkeypatch.setattr(writer, "CHUNK_PASSAGES", 2)
    rag = open_graph()
    seen_before_last: list[int] = []

    def items():
        for i in range(5):
            if i == 2:
                yield {"passage": "", "triplets": []}
            if i == 4:
                seen_before_last.append(len(rag.graph.relations))
            yield {"passage": f"Node{i} links Node{i + 1}.",
                   "triplets": [[f"Node{i}", "links", f"Node{i + 1}"]]}

    summary = rag.add(items())
    assert seen_before_last and seen_before_last[0] >= 2  # earlier chunks already stored
    assert summary.passages_added == 5 and summary.relations_added == 5
    assert summary.rows_skipped == 1 and summary.problems[0].where == "item 2"
