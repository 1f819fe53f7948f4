"""Documents: replace on re-ingest (only what changed is embedded), --append, delete with
cascade, and the in-memory graph, mirror and BM25 index following every change."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from hopgraph import GraphRAG
from hopgraph.identity import entity_id, passage_id, relation_id
from hopgraph.ingest.loaders import source_doc_id
from hopgraph.retrieve import OFFLINE_METHODS
from hopgraph.store import MilvusStore
from hopgraph.store.check import check

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each

ROWS = [
    {"passage": "Leonhard Euler studied under Johann Bernoulli in Basel.",
     "triplets": [["Leonhard Euler", "studied under", "Johann Bernoulli"],
                  ["Johann Bernoulli", "taught in", "Basel"]]},
    {"passage": "Daniel Bernoulli, son of Johann, formulated the Bernoulli principle.",
     "triplets": [["Daniel Bernoulli", "son of", "Johann Bernoulli"],
                  ["Daniel Bernoulli", "formulated", "Bernoulli principle"]]},
    {"passage": "Jacob Bernoulli discovered the constant e.",
     "triplets": [["Jacob Bernoulli", "discovered", "constant e"]]},
    {"passage": "Euler was born in Basel in 1707.",
     "triplets": [["Leonhard Euler", "born in", "Basel"]],
     "metadata": {"year": 1707}},
]


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def contents(rag: GraphRAG) -> tuple[dict[str, str], set[str], dict[str, list[str]]]:
    """What Milvus holds: passages (id -> document), entity ids, relations -> passages."""
    store = MilvusStore.from_settings(rag.settings, create=False)
    try:
        return ({r["id"]: r["doc_id"] for r in store.scan(store.passages, ["id", "doc_id"])},
                {r["id"] for r in store.scan(store.entities, ["id"])},
                {r["id"]: sorted(r["passage_ids"])
                 for r in store.scan(store.relations, ["id", "passage_ids"])})
    finally:
        store.close()


def in_memory(rag: GraphRAG) -> tuple[dict[str, str], set[str], dict[str, list[str]]]:
    """The same, as the in-memory graph holds it."""
    g = rag.graph
    return ({pid: g.doc_of(i) for i, pid in enumerate(g.passage_ids)}, set(g.entity_ids),
            {rel.id: sorted(rel.passage_ids) for rel in g.relations})


def edited(rows: list[dict]) -> list[dict]:
    """Row 0 reworded (one triplet kept, one new), row 2 removed, row 3 has new triplets only
    (same text), and a new row."""
    out = [dict(r) for r in rows]
    out[0] = {"passage": "Leonhard Euler was a student of Johann Bernoulli.",
              "triplets": [["Leonhard Euler", "studied under", "Johann Bernoulli"],
                           ["Leonhard Euler", "student of", "Johann Bernoulli"]]}
    out[3] = {**rows[3], "triplets": [["Euler", "born in year", "1707"]]}
    del out[2]
    out.append({"passage": "Nicolaus Bernoulli was Jacob's nephew.",
                "triplets": [["Nicolaus Bernoulli", "nephew of", "Jacob Bernoulli"]]})
    return out


def test_replacing_a_file_equals_a_clean_ingest_of_its_new_content(
        open_graph, store_of, embedder, tmp_path: Path) -> None:
    path = write(tmp_path / "bernoullis.jsonl", ROWS)
    rag = open_graph("replace")
    rag.add_files([path])
    assert rag.documents() == {source_doc_id(path): 4}
    write(path, edited(ROWS))
    before = embedder.texts
    summary = rag.add_files([path])
    # Embedded: the reworded and the new passage; the new relations "Euler student of
    # Johann", "Euler born in year 1707", "Nicolaus nephew of Jacob"; the new entities
    # "Euler", "1707", "Nicolaus Bernoulli". Nothing else (Jacob is stored already).
    assert summary.passages_added == 2 and summary.passages_present == 2
    assert summary.texts_embedded == embedder.texts - before == 2 + 3 + 3
    assert (summary.passages_removed, summary.documents_replaced) == (2, 1)
    clean = open_graph("replace_clean")
    clean.add_files([path])
    assert contents(rag) == contents(clean)
    assert in_memory(rag) == contents(rag)
    assert check(store_of(rag)).problems == []
    assert rag.documents() == {source_doc_id(path): 4}
    # Gone: Jacob's passage and its relation; "constant e" lost its only relation. Jacob
    # himself stays: the new row names him.
    assert entity_id("constant e") not in rag.graph.entity_index
    assert entity_id("Jacob Bernoulli") in rag.graph.entity_index
    assert relation_id("Johann Bernoulli", "taught in", "Basel") not in rag.graph.relation_index


def test_an_unchanged_file_embeds_nothing_and_writes_nothing(open_graph, store_of, embedder,
                                                             tmp_path: Path) -> None:
    path = write(tmp_path / "same.jsonl", ROWS)
    rag = open_graph("unchanged")
    rag.add_files([path])
    store = store_of(rag)
    writes, stored = store.writes, contents(rag)
    snapshot = store.snapshot_path().stat().st_mtime_ns
    before = embedder.texts
    summary = rag.add_files([path])
    assert embedder.texts == before and summary.texts_embedded == 0
    assert summary.passages_present == 4 and summary.passages_removed == 0
    assert store_of(rag).writes == writes  # not even the write counter moved (read anew)
    assert store.snapshot_path().stat().st_mtime_ns == snapshot
    assert contents(rag) == stored


def test_append_keeps_the_old_passages(open_graph, store_of, tmp_path: Path) -> None:
    path = write(tmp_path / "log.jsonl", ROWS[:2])
    rag = open_graph("append")
    rag.add_files([path])
    write(path, ROWS[2:])
    summary = rag.add_files([path], append=True)
    assert summary.passages_added == 2 and summary.passages_removed == 0
    assert rag.documents() == {source_doc_id(path): 4}
    rag.add_files([path])  # and a plain re-ingest then replaces it with its two rows
    assert rag.documents() == {source_doc_id(path): 2}
    assert check(store_of(rag)).problems == []


def test_metadata_change_updates_the_row_without_embedding(open_graph, store_of, embedder,
                                                           tmp_path: Path) -> None:
    path = write(tmp_path / "meta.jsonl", ROWS)
    rag = open_graph("meta")
    rag.add_files([path])
    rows = [dict(r) for r in ROWS]
    rows[3] = {**rows[3], "metadata": {"year": 1707, "checked": True},
               "passage": rows[3]["passage"].upper()}
    write(path, rows)
    before = embedder.texts
    summary = rag.add_files([path])
    assert embedder.texts == before and summary.passages_updated == 1
    pid = passage_id(ROWS[3]["passage"], source_doc_id(path))
    store = store_of(rag)
    row = store.get(store.passages, [pid], ["text", "metadata"])[0]
    assert row == {"id": pid, "text": rows[3]["passage"],
                   "metadata": {"year": 1707, "checked": True}}


def test_rows_doc_id_and_the_api_doc_id(open_graph, store_of, tmp_path: Path) -> None:
    path = write(tmp_path / "two_docs.jsonl", [
        {**ROWS[0], "doc_id": "euler"}, {**ROWS[1], "doc_id": "daniel"},
        {**ROWS[2], "doc_id": 7}, ROWS[3]])
    rag = open_graph("docids")
    rag.add_files([path])
    rag.add([ROWS[0]], doc_id="notes")
    rag.add([{"passage": "A loose note.", "triplets": []}])
    docs = rag.documents()
    assert {k: v for k, v in docs.items() if not k.startswith("p")} == {
        "euler": 1, "daniel": 1, "7": 1, source_doc_id(path): 1, "notes": 1}
    assert len(docs) == 6  # the loose note is a document of its own
    # The same text in two documents is two passages: deleting one keeps the other.
    rag.delete(["euler"])
    assert rag.documents()["notes"] == 1
    assert relation_id("Leonhard Euler", "studied under", "Johann Bernoulli") in \
        rag.graph.relation_index
    assert check(store_of(rag)).problems == []


def test_delete_cascades_but_keeps_what_other_documents_share(open_graph, store_of,
                                                              tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", ROWS[:2])
    b = write(tmp_path / "b.jsonl", [ROWS[3], {
        "passage": "Johann Bernoulli taught Euler.",
        "triplets": [["Leonhard Euler", "studied under", "Johann Bernoulli"]]}])
    rag = open_graph("delete")
    rag.add_files([a, b])
    clean = open_graph("delete_clean")
    clean.add_files([b])
    removal = rag.delete(source_doc_id(a))
    assert removal.documents == [source_doc_id(a)] and removal.missing == []
    assert (removal.passages, removal.relations, removal.relations_unlinked) == (2, 3, 1)
    assert contents(rag) == contents(clean)
    assert in_memory(rag) == contents(rag)
    assert check(store_of(rag)).problems == []
    again = rag.delete([source_doc_id(a), "never-stored"])
    assert again.passages == 0 and again.missing == [source_doc_id(a), "never-stored"]
    rag.delete([source_doc_id(b)])
    assert rag.stats()["passages"] == rag.stats()["entities"] == rag.stats()["relations"] == 0
    assert check(store_of(rag)).problems == [] and rag.documents() == {}


@pytest.mark.parametrize("memory_limit", [None, 0])  # the mirror, and every search in Milvus
def test_a_query_right_after_a_delete_never_returns_a_deleted_passage(
        open_graph, tmp_path: Path, memory_limit: int | None) -> None:
    a = write(tmp_path / "a.jsonl", ROWS[:2])
    b = write(tmp_path / "b.jsonl", ROWS[2:])
    rag = open_graph(f"after_delete_{memory_limit}", memory_limit=memory_limit)
    rag.add_files([a, b])
    question = "What did the son of Euler's teacher formulate?"
    first = rag.retrieve(question, top_k=4)
    assert any("Daniel" in p.text for p in first.passages)  # the searcher is built
    rag.delete([source_doc_id(a)])
    gone = {passage_id(r["passage"], source_doc_id(a)) for r in ROWS[:2]}
    for method in OFFLINE_METHODS:
        result = rag.retrieve(question, top_k=4, method=method,
                              entities=["Daniel Bernoulli", "Leonhard Euler"])
        assert result.passages and not gone & {p.id for p in result.passages}
        assert all(p.text for p in result.passages)
    lexical = rag.retrieve("Daniel Bernoulli principle", method="naive_lexical")
    assert not gone & {p.id for p in lexical.passages}


def test_after_changes_the_mirror_equals_one_rebuilt_from_milvus(open_graph, tmp_path: Path
                                                                 ) -> None:
    """The compacted vector files (the fast path) give what vectors read back from Milvus
    give (the simple path), for every method."""
    path = write(tmp_path / "mirror.jsonl", ROWS)
    other = write(tmp_path / "other.jsonl", [{**r, "passage": r["passage"] + " (copy)"}
                                             for r in ROWS[1:]])
    rag = open_graph("mirror")
    rag.add_files([path, other])
    write(path, edited(ROWS))
    rag.add_files([path])
    rag.delete([source_doc_id(other)])
    sizes = {"entities": len(rag.graph.entity_ids), "relations": len(rag.graph.relations),
             "passages": len(rag.graph.passage_ids)}
    assert all(rag.vector_files[k].rows() == n for k, n in sizes.items())
    questions = ["Who was Euler's teacher?", "What did Daniel Bernoulli formulate?",
                 "Who was Nicolaus Bernoulli's uncle?"]
    fast = {(q, m): [(p.id, round(p.score, 5)) for p in rag.retrieve(q, method=m).passages]
            for q in questions for m in OFFLINE_METHODS}
    uri = rag.uri
    rag.close()
    for file in rag.vector_files.values():
        file.discard()
    rebuilt = open_graph("mirror", uri=uri)
    slow = {(q, m): [(p.id, round(p.score, 5)) for p in rebuilt.retrieve(q, method=m).passages]
            for q in questions for m in OFFLINE_METHODS}
    assert fast == slow


def test_a_source_with_skipped_rows_prunes_nothing(open_graph, tmp_path: Path) -> None:
    path = write(tmp_path / "broken.jsonl", ROWS)
    rag = open_graph("held")
    rag.add_files([path])
    path.write_text(json.dumps(ROWS[0]) + "\n{not json\n", encoding="utf-8")
    summary = rag.add_files([path])
    assert summary.passages_removed == 0 and rag.documents() == {source_doc_id(path): 4}
    assert any("not pruned" in p.what and p.where == source_doc_id(path)
               for p in summary.problems)


def test_add_with_a_skipped_item_prunes_nothing(open_graph) -> None:
    rag = open_graph("held_add")
    rag.add(ROWS, doc_id="notes")
    summary = rag.add([ROWS[0], {"passage": ""}], doc_id="notes")
    assert summary.rows_skipped == 1 and summary.passages_removed == 0
    assert rag.documents() == {"notes": 4}
    assert [p.where for p in summary.problems if "not pruned" in p.what] == ["notes"]
    assert rag.add([ROWS[0]], doc_id="notes").passages_removed == 3


def test_docs_and_delete_commands(tmp_path: Path) -> None:
    path = write(tmp_path / "cli.jsonl", ROWS)
    env = {"HOPGRAPH_URI": str(tmp_path / "cli.db"), "HOPGRAPH_GRAPH": "cli"}
    assert run_cli("ingest", "--quiet", str(path), env=env).code == 0
    listed = run_cli("docs", "--json", env=env)
    assert json.loads(listed.stdout) == [{"doc_id": source_doc_id(path), "passages": 4}]
    assert "1 documents, 4 passages" in run_cli("docs", env=env).stdout
    write(path, ROWS[:3])
    appended = run_cli("ingest", "--quiet", "--append", "--json", str(path), env=env)
    assert json.loads(appended.stdout)["passages_removed"] == 0
    replaced = run_cli("ingest", "--quiet", str(path), env=env)
    assert "removed:   1 passages" in replaced.stdout
    refused = run_cli("delete", source_doc_id(path), env=env)  # no terminal to ask on
    assert refused.code == 2 and "--yes" in refused.stderr
    deleted = run_cli("delete", "--yes", "--json", source_doc_id(path), "nope", env=env)
    assert deleted.code == 1 and "not stored: nope" in deleted.stderr
    assert json.loads(deleted.stdout)["passages"] == 3
    assert json.loads(run_cli("docs", "--json", env=env).stdout) == []
    assert run_cli("check", env=env).code == 0


def test_graph_without_equals_a_graph_built_without_those_rows() -> None:
    from hopgraph.graph import KnowledgeGraph

    rng = np.random.default_rng(3)
    full = KnowledgeGraph()
    links = []
    for p in range(40):
        full.add_passage(f"p{p}", f"d{p % 5}")
    for r in range(120):
        s, o = rng.integers(0, 30, size=2)
        pids = sorted({f"p{i}" for i in rng.integers(0, 40, size=3)})
        links.append((f"r{r}", f"e{s}", f"e{o}", pids))
        full.add_relation(f"r{r}", f"e{s}", f"e{o}", f"t{r}", pids)
    drop_r = set(rng.choice(120, size=30, replace=False).tolist())
    drop_p = set(rng.choice(40, size=8, replace=False).tolist())
    kept_links = [lk for i, lk in enumerate(links) if i not in drop_r]
    used = {e for _, s, o, _ in kept_links for e in (s, o)}
    drop_e = [i for i, e in enumerate(full.entity_ids) if e not in used]
    small, masks = full.without(np.array(sorted(drop_r)), np.array(drop_e),
                                np.array(sorted(drop_p)))
    expected = KnowledgeGraph()
    for p in range(40):
        if p not in drop_p:
            expected.add_passage(f"p{p}", f"d{p % 5}")
    for _, s, o, _ in kept_links:
        expected.add_entity(s, s)
        expected.add_entity(o, o)
    for rid, s, o, pids in kept_links:
        kept = [p for p in pids if int(p[1:]) not in drop_p]
        expected.add_relation(rid, s, o, f"t{rid[1:]}", kept)
    def named(g: KnowledgeGraph) -> list[tuple]:
        return [(r.id, g.entity_ids[r.subject], g.entity_ids[r.object], r.text, r.passage_ids)
                for r in g.relations]

    assert named(small) == named(expected)
    assert sorted(small.entity_ids) == sorted(expected.entity_ids)
    assert small.passage_ids == expected.passage_ids
    assert small.documents() == expected.documents()
    assert masks["relations"].sum() == len(small.relation_ids)
    assert (small.incidence.toarray().sum(axis=0) > 0).all()


def test_add_documents_from_raw_text_with_the_offline_extractor(open_graph, tmp_path: Path
                                                                ) -> None:
    folder = tmp_path / "raw"
    folder.mkdir()
    (folder / "curie.md").write_text("# Marie Curie\n\nShe was born in Warsaw. She won the "
                                     "Nobel Prize in Physics.\n", encoding="utf-8")
    rag = open_graph("raw_docs")
    summary = rag.add_documents([folder])  # no LLM: the offline extractor
    assert summary.passages_added == 1 and summary.relations_added >= 2
    assert rag.documents() == {"curie.md": 1}  # its path within the folder given
    assert relation_id("Marie Curie", "she was born in", "Warsaw") in rag.graph.relation_index
    with pytest.raises(Exception, match="needs an LLM"):
        rag.add_documents([folder], extractor="llm")
