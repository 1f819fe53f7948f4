import pytest

from hopgraph.ingest.triplets import read_triplets, triplet_problem
from hopgraph.records import LoadReport, Triplet


@pytest.mark.parametrize(("item", "problem"), [
    (["Ann", "wrote", "Book"], None),
    (("Ann", "wrote", "Book"), None),
    ({"subject": "Ann", "predicate": "wrote", "object": "Book"}, None),
    (["Ann", "wrote"], "expected 3 parts, got 2"),
    ({"subject": "Ann", "object": "Book"}, "predicate is NoneType, expected a string"),
    (["Ann", " ", "Book"], "predicate is empty"),
    (["Ann", 3, "Book"], "predicate is int, expected a string"),
    ("Ann wrote Book", "expected [subject, predicate, object], got str"),
])
def test_one_check_for_every_shape(item: object, problem: str | None) -> None:
    assert triplet_problem(item) == problem


def test_read_triplets_strips_dedups_after_normalization_and_reports() -> None:
    report = LoadReport("x.json")
    got = read_triplets([[" Ann ", "wrote", "Book"], ["ann", "WROTE", "book"], ["Ann"],
                         {"subject": "Book", "predicate": "cites", "object": "Paper"}],
                        "x.json:[0]", report)
    assert got == [Triplet("Ann", "wrote", "Book"), Triplet("Book", "cites", "Paper")]
    assert report.triplets_skipped == 2 and report.rows_skipped == 0
    assert [str(p) for p in report.problems] == [
        "x.json:[0] triplet 1: duplicate of an earlier triplet",
        "x.json:[0] triplet 2: expected 3 parts, got 1"]
