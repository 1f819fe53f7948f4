from hopgraph.records import (
    IngestSummary,
    LoadReport,
    PassageHit,
    Problem,
    RelationHit,
    Retrieval,
    comparison_json,
)


def test_summary_includes_load_reports_before_its_own_problems() -> None:
    first, second = LoadReport("a.json"), LoadReport("b.json")
    first.skip_row("a.json:line 2", "invalid JSON")
    second.skip_triplet("b.json:[0] triplet 1", "expected 3 parts, got 2")
    summary = IngestSummary(problems=[Problem("c.json:[3]", "passage over 65535 bytes")],
                            rows_skipped=1)
    summary.include([first, second])
    assert (summary.rows_skipped, summary.triplets_skipped) == (2, 1)
    assert summary.as_dict()["problems"] == [
        "a.json:line 2: invalid JSON", "b.json:[0] triplet 1: expected 3 parts, got 2",
        "c.json:[3]: passage over 65535 bytes"]


def test_one_json_view_for_a_retrieval_and_a_comparison() -> None:
    graph = Retrieval("q?", "default", [PassageHit("p1", "text", 0.123456789, ["r"], ["r1"])],
                      relations=[RelationHit("r1", "A knows B", 0.98765432)],
                      timings_ms={"total": 3.0}, notes=["n"])
    naive = Retrieval("q?", "naive", [PassageHit("p2", "other", 0.5)], timings_ms={"total": 1.0})
    view = graph.as_dict()
    assert view["passages"] == [{"id": "p1", "text": "text", "score": 0.123457,
                                 "relations": ["r"], "via": ["r1"], "doc_id": None}]
    assert view["relations"][0]["score"] == 0.987654
    both = comparison_json(graph, naive)
    assert list(both) == ["question", "method", "graph", "naive", "entities", "relations",
                          "timings_ms", "naive_timings_ms", "notes", "llm", "bridges"]
    assert both["graph"] == view["passages"] and both["naive"][0]["id"] == "p2"
    assert both["naive_timings_ms"] == {"total": 1.0} and both["llm"] is None
