from hopgraph.records import (
    Answer,
    IngestSummary,
    LoadReport,
    PassageHit,
    Problem,
    RelationHit,
    Retrieval,
    comparison_json,
    passage_source,
    source_line,
    with_sources,
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
                                 "relations": ["r"], "via": ["r1"], "doc_id": None,
                                 "source": None}]
    assert view["relations"][0]["score"] == 0.987654
    both = comparison_json(graph, naive)
    assert list(both) == ["question", "method", "graph", "naive", "entities", "relations",
                          "timings_ms", "naive_timings_ms", "notes", "llm", "bridges"]
    assert both["graph"] == view["passages"] and both["naive"][0]["id"] == "p2"
    assert both["naive_timings_ms"] == {"total": 1.0} and both["llm"] is None


def test_a_source_is_built_from_flat_metadata_and_falls_back_to_the_document() -> None:
    stored = {"source": "report.pdf", "file": "report.pdf", "type": "pdf", "page": 3,
              "headings": ["Safety", "Battery"], "section": "Safety › Battery", "start": 10,
              "end": 90, "chunk": 4}
    source = passage_source(stored, "report.pdf")
    assert source == {"file": "report.pdf", "page": 3, "headings": ["Safety", "Battery"],
                      "start": 10, "end": 90}
    assert source_line(source) == "report.pdf · p. 3 · Safety › Battery"
    # Stored before sources: the document id, and what issue 35 kept (section, page).
    assert passage_source({}, "old.json") == {"file": "old.json", "page": None,
                                              "headings": [], "start": None, "end": None}
    earlier = passage_source({"source": "a.pdf", "section": "A › B", "page": 2}, "a.pdf")
    assert (earlier["headings"], earlier["page"]) == (["A", "B"], 2)
    assert passage_source({"page": True, "start": "7"}, None)["page"] is None
    assert source_line({"file": "deck.pptx", "page": 2, "headings": []}) == "deck.pptx · slide 2"
    assert source_line({"file": "book.xlsx", "page": "Q3", "headings": []}) == "book.xlsx · Q3"
    assert PassageHit("p", "t", 1.0, doc_id="d").source_line == "d"


def test_sources_are_read_once_for_every_result_and_citations_name_them() -> None:
    graph = Retrieval("q?", "default", [PassageHit("p1", "a", 0.9, doc_id="r.pdf"),
                                        PassageHit("p2", "b", 0.5, doc_id="old")],
                      timings_ms={"total": 3.0})
    naive = Retrieval("q?", "naive", [PassageHit("p1", "a", 0.8, doc_id="r.pdf")])
    asked: list[list[str]] = []

    def metadata_of(ids: list[str]) -> dict[str, dict]:
        asked.append(ids)
        return {"p1": {"file": "r.pdf", "page": 3, "headings": ["Safety"]}}

    with_sources([graph, naive], metadata_of)
    assert asked == [["p1", "p2"]]
    assert graph.passages[0].source == naive.passages[0].source == {
        "file": "r.pdf", "page": 3, "headings": ["Safety"], "start": None, "end": None}
    assert graph.passages[1].source["file"] == "old"
    assert "fetch_sources" in graph.timings_ms and graph.timings_ms["total"] >= 3.0
    answer = Answer("q?", "Charged cold [1], says a note [2][7].", graph)
    assert answer.citations == ["[1] r.pdf · p. 3 · Safety", "[2] old"]
