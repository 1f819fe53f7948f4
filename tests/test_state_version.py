"""Graph versions: immutable values, `advance` the one way to the next, retrievers keyed by
them, and a write that works on a graph of its own."""

from __future__ import annotations

from types import MappingProxyType

import pytest
from test_store_ann import records

from hopgraph.graph import KnowledgeGraph
from hopgraph.retrieve import Query
from hopgraph.state import CLOSED, Changes, GraphVersion, advance
from hopgraph.state.version import opened, with_texts
from hopgraph.store.follow import sizes


def graph_of(*names: str) -> KnowledgeGraph:
    graph = KnowledgeGraph()
    for name in names:
        graph.add_entity(name.lower(), name)
    return graph


def test_advance_makes_a_new_version_and_leaves_the_old_one_as_it_was() -> None:
    first = opened((3, CLOSED), graph_of("Anna"), "snapshot", {"doc": "write #2 stopped"})
    first = with_texts(first, {"p1": "one", "p2": "two"})
    after = advance(first, Changes((4, CLOSED), graph_of("Anna", "Otto"), "written",
                                   touched={"p2"}, texts={"p3": "three"}))
    assert dict(first.texts) == {"p1": "one", "p2": "two"}  # the old one is untouched
    assert dict(after.texts) == {"p1": "one", "p3": "three"}  # p2 may have changed
    assert after.at == (4, CLOSED) and after.closed and after.source == "written"
    assert dict(after.unfinished) == {"doc": "write #2 stopped"}  # none given: as before
    assert after.sizes == sizes(after.graph) and first.graph.entity_ids == ["anna"]
    with pytest.raises(AttributeError):
        after.graph = KnowledgeGraph()  # type: ignore[misc]
    assert isinstance(after.texts, MappingProxyType)  # read-only: nothing writes into it
    cleared = advance(after, Changes((5, 2), after.graph, "followed", unfinished={}))
    assert dict(cleared.unfinished) == {} and not cleared.closed


def test_a_version_is_the_same_while_its_graph_and_place_are() -> None:
    graph = graph_of("Anna")
    version = opened((1, CLOSED), graph, "Milvus", {})
    assert version.same(with_texts(version, {"p": "text"}))  # knows more: the same one
    assert not version.same(GraphVersion((2, CLOSED), graph, "followed", {}, {}))
    assert not version.same(GraphVersion((1, CLOSED), graph.copy(), "stopped", {}, {}))
    assert not version.same(None)


def test_what_was_handed_out_keeps_its_version_through_a_write(open_graph, parts_of) -> None:
    """A retriever built on a version keeps that version's graph whole while a write makes
    the next one (the write copies the graph); the next retriever is of the new version."""
    parts = parts_of(open_graph(graph="versions"))
    parts.add(records(10))
    before = parts.state.version
    entities, relations = len(before.graph.entity_ids), len(before.graph.relations)
    retriever = parts.retriever
    assert retriever.graph is before.graph and parts.retriever is retriever  # kept
    parts.add(records(20)[10:])
    after = parts.state.version
    assert after is not before and after.at[0] == before.at[0] + 1 and after.closed
    assert (len(before.graph.entity_ids), len(before.graph.relations)) == (
        entities, relations)  # never changed
    assert len(after.graph.relations) > relations and after.source == "written"
    assert retriever.graph is before.graph
    found = retriever.retrieve(Query("Where was Person 15 born?", top_k=5)).passages
    assert found and all(p.id in before.graph.passage_index for p in found)
    fresh = parts.retriever
    assert fresh is not retriever and fresh.graph is after.graph


def test_a_write_takes_the_graph_nothing_was_built_on(open_graph, parts_of) -> None:
    """With no retriever of the current version (a bulk load), the write changes that
    version's graph itself rather than a copy, and its result is the next version."""
    parts = parts_of(open_graph(graph="lent"))
    parts.add(records(10))
    graph = parts.state.version.graph
    parts.add(records(20)[10:])
    assert parts.state.version.graph is graph and parts.state.version.source == "written"


def test_a_failed_write_leaves_a_version_of_what_it_changed(open_graph, parts_of,
                                                            monkeypatch) -> None:
    """A write that fails after changing rows: the next version holds the write's graph at
    the same place in the log, names the documents unfinished, and the write after it
    completes them."""
    from hopgraph.ingest import writer

    parts = parts_of(open_graph(graph="stopped"))
    parts.add(records(10))
    _ = parts.retriever  # so the write copies
    before = parts.state.version
    original = writer.Ingestor._store_relations

    def fail(self, *args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(writer.Ingestor, "_store_relations", fail)
    with pytest.raises(RuntimeError, match="disk full"):
        parts.add(records(20)[10:])
    stopped = parts.state.version
    assert stopped.source == "stopped" and stopped.at == before.at
    assert stopped.graph is not before.graph and "doc1" in stopped.unfinished
    monkeypatch.setattr(writer.Ingestor, "_store_relations", original)
    parts.add(records(20)[10:])
    assert parts.state.version.source == "written" and "doc1" not in (
        parts.state.version.unfinished)
