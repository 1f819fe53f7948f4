"""`hopgraph export`: JSONL that ingests back to the same graph, and GraphML."""

from __future__ import annotations

import io
from pathlib import Path

import networkx as nx
import pytest

from hopgraph import GraphRAG
from hopgraph.export import export_graphml, export_jsonl
from hopgraph.store import MilvusStore

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each


def contents(store: MilvusStore) -> tuple[set, set, dict]:
    passages = {r["id"] for r in store.scan(store.passages, ["id"])}
    entities = {r["id"] for r in store.scan(store.entities, ["id"])}
    relations = {r["id"]: sorted(r["passage_ids"])
                 for r in store.scan(store.relations, ["id", "passage_ids"])}
    return passages, entities, relations


def test_jsonl_round_trip_gives_the_same_graph(open_graph, store_of, tmp_path: Path) -> None:
    """Tricky surface forms too: case variants of one entity, inner spaces, shared relations."""
    source = open_graph("export_src")
    source.add([
        {"passage": "Leonhard Euler studied under Johann Bernoulli.", "doc_id": "doc-1",
         "metadata": {"year": 1720},
         "triplets": [["Leonhard Euler", "studied under", "Johann Bernoulli"],
                      ["leonhard  euler", "was  born in", "Basel"]]},
        {"passage": "Basel is a city. Euler was born in Basel.",
         "triplets": [["LEONHARD EULER", "was born in", "Basel"], ["Basel", "is", "a city"]]},
        {"passage": "A passage without triplets.", "triplets": []},
    ])
    out = io.StringIO()
    report = export_jsonl(store_of(source), out)
    assert report.skipped == [] and report.passages == 3
    path = tmp_path / "graph.jsonl"
    path.write_text(out.getvalue(), encoding="utf-8")
    copy = open_graph("export_copy")
    copy.add_files([path])
    copied = store_of(copy)
    assert contents(copied) == contents(store_of(source))
    docs = {r["doc_id"] for r in copied.scan(copied.passages, ["doc_id"])}
    assert "doc-1" in docs


def test_graphml_opens_with_entities_relations_and_passages(bernoulli: GraphRAG, store_of,
                                                            tmp_path: Path) -> None:
    path = tmp_path / "g.graphml"
    report = export_graphml(store_of(bernoulli), path, passages=True)
    graph = nx.read_graphml(path)
    kinds = nx.get_node_attributes(graph, "kind")
    assert sum(k == "entity" for k in kinds.values()) == report.entities == 24
    assert sum(k == "passage" for k in kinds.values()) == report.passages == 4
    relation_edges = [d for _, _, d in graph.edges(data=True) if d["label"] != "in passage"]
    assert len(relation_edges) == report.relations == 22
    assert all(d["passage_ids"] for d in relation_edges)


def test_export_command(tmp_path: Path) -> None:
    from conftest import BERNOULLI, need, run_cli

    env = {"HOPGRAPH_URI": str(tmp_path / "a.db"), "HOPGRAPH_GRAPH": "a"}
    assert run_cli("ingest", str(need(BERNOULLI)), "--quiet", env=env).code == 0
    done = run_cli("export", env=env)
    assert done.code == 0 and len(done.stdout.splitlines()) == 4
    assert "exported 24 entities, 22 relations, 4 passages" in done.stderr
    out = tmp_path / "g.graphml"
    assert run_cli("export", "--format", "graphml", "--out", str(out), env=env).code == 0
    assert nx.read_graphml(out).number_of_nodes() == 24
