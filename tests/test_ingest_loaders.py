import json
from pathlib import Path

import pytest
from conftest import BERNOULLI, MUSIQUE, need

from hopgraph.ingest.loaders import InputError, load_file


def write(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


def test_bernoulli_file() -> None:
    report = load_file(need(BERNOULLI))
    assert len(report.records) == 4
    assert all(r.triplets for r in report.records)
    assert report.problems == []


def test_list_and_jsonl_with_ids_and_metadata(tmp_path: Path) -> None:
    rows = [
        {"passage": "A is B.", "triplets": [["A", "is", "B"]], "id": "doc-1",
         "metadata": {"lang": "en"}},
        {"passage": "No triplets here."},
    ]
    for path in (write(tmp_path, "a.json", json.dumps(rows)),
                 write(tmp_path, "a.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")):
        report = load_file(path)
        assert [r.doc_id for r in report.records] == ["doc-1", None]
        assert report.records[0].metadata == {"lang": "en"}
        assert report.records[1].triplets == []


def test_malformed_rows_and_triplets_are_skipped_with_place(tmp_path: Path) -> None:
    lines = [
        json.dumps({"passage": "Good.", "triplets": [["A", "is", "B"], ["A", "is"],
                                                     ["A", "", "B"], ["A", 3, "B"],
                                                     ["a", "IS", "b"]]}),
        "{not json",
        json.dumps({"passage": ""}),
        json.dumps(["not", "an", "object"]),
        json.dumps({"passage": "Bad metadata.", "metadata": [1]}),
        json.dumps({"passage": "Also good.", "triplets": [["C", "is", "D"]]}),
    ]
    report = load_file(write(tmp_path, "mixed.jsonl", "\n".join(lines)))
    assert [r.text for r in report.records] == ["Good.", "Also good."]
    assert report.rows_skipped == 4
    assert report.triplets_skipped == 4  # short, empty, non-string, duplicate
    places = [p.where for p in report.problems]
    assert any(w.endswith("mixed.jsonl:line 2") for w in places)
    assert any(w.endswith("mixed.jsonl:line 1 triplet 1") for w in places)
    assert any("duplicate" in p.what for p in report.problems)
    assert any(w.endswith("line 5") and "metadata" in p.what
               for w, p in zip(places, report.problems, strict=True))


def test_openie_format(tmp_path: Path) -> None:
    doc = {"docs": [
        {"title": "T1", "text": "Body one.", "extracted_triples": [["T1", "has", "body"],
                                                                    ["x"]]},
        {"title": "T2", "text": "Body two.", "extracted_triples": [[None, "is", "y"]]},
    ]}
    report = load_file(write(tmp_path, "openie.json", json.dumps(doc)))
    assert [r.text for r in report.records] == ["T1\nBody one.", "T2\nBody two."]
    assert report.records[0].metadata == {"title": "T1"}
    assert report.triplets_skipped == 2
    assert "docs[1] triplet 0" in report.problems[-1].where


def test_real_openie_file_counts_malformed_triples() -> None:
    report = load_file(need(MUSIQUE / "openie_gpt-3.5-turbo-1106.json"))
    assert len(report.records) == 1890
    assert report.triplets_skipped > 0
    assert sum(len(r.triplets) for r in report.records) > 15000


@pytest.mark.parametrize("content, message", [
    ("", "empty"),
    ("   \n", "empty"),
    ('{"something": 1}', "unrecognized"),
    ("not json at all\nnor this", "neither JSON nor JSONL"),
    ('[{"passage": ""}]', "no valid passage"),
])
def test_unusable_files_are_clear_errors(tmp_path: Path, content: str, message: str) -> None:
    path = write(tmp_path, "bad.json", content)
    with pytest.raises(InputError, match=message) as err:
        load_file(path)
    assert "bad.json" in str(err.value)


def test_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_file(tmp_path / "nope.json")
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(InputError, match="cannot read"):
        load_file(binary)
