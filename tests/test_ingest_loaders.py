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
        {"passage": "A is B.", "triplets": [["A", "is", "B"]], "doc_id": "doc-1",
         "id": "row-1", "metadata": {"lang": "en"}},
        {"passage": "No triplets here."},
        {"passage": "Numbered.", "doc_id": 12},
    ]
    for path in (write(tmp_path, "a.json", json.dumps(rows)),
                 write(tmp_path, "a.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")):
        report = load_file(path)
        # A row's own "doc_id", else the file's (given by itself: its name).
        assert [r.doc_id for r in report.records] == ["doc-1", path.name, "12"]
        assert report.records[0].metadata == {"lang": "en", "id": "row-1"}
        assert report.records[1].triplets == []


def test_a_files_document_is_its_name_however_typed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    write(tmp_path, "d.json", json.dumps([{"passage": "A."}]))
    assert load_file("./sub/../d.json").records[0].doc_id == "d.json"
    assert load_file(tmp_path / "d.json").records[0].doc_id == "d.json"
    assert load_file(tmp_path / "d.json", "rows/d.json").records[0].doc_id == "rows/d.json"
    bad = write(tmp_path, "bad.json", json.dumps([{"passage": "A.", "doc_id": ""},
                                                  {"passage": "B.", "doc_id": ["x"]},
                                                  {"passage": "C."}]))
    report = load_file(bad)
    assert [p.what for p in report.problems] == [
        '"doc_id" must be a non-empty string (or an integer)'] * 2
    assert [r.text for r in report.records] == ["C."]


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


@pytest.mark.slow
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
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")  # a PNG's head
    with pytest.raises(InputError, match="cannot read"):
        load_file(binary)


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    rows = [{"passage": f"P{i} is here.", "triplets": [[f"P{i}", "is", "here"]]}
            for i in range(2)]
    as_json = tmp_path / "bom.json"
    as_json.write_bytes(b"\xef\xbb\xbf" + json.dumps(rows).encode())
    as_jsonl = tmp_path / "bom.jsonl"
    as_jsonl.write_bytes(b"\xef\xbb\xbf" + "\n".join(json.dumps(r) for r in rows).encode())
    utf16 = tmp_path / "utf16.json"  # what Windows editors save as "Unicode"
    utf16.write_bytes(json.dumps(rows).encode("utf-16"))
    utf16be = tmp_path / "utf16be.jsonl"
    utf16be.write_bytes(b"\xfe\xff" + "\r\n".join(json.dumps(r) for r in rows).encode(
        "utf-16-be"))
    for path in (as_json, as_jsonl, utf16, utf16be):
        report = load_file(path)
        assert [r.text for r in report.records] == ["P0 is here.", "P1 is here."]
        assert report.problems == []


def test_rows_the_store_would_refuse_are_skipped_with_their_place(tmp_path: Path) -> None:
    """Caught before any write: a huge integer or a lone surrogate in metadata, text or a
    triplet skips that row (named, with the field), and the good rows are kept."""
    path = tmp_path / "bad.jsonl"
    lines = [
        '{"passage": "Good.", "triplets": [["A", "is", "B"]]}',
        '{"passage": "Big.", "triplets": [], "metadata": {"n": 18446744073709551616}}',
        '{"passage": "Lone \\ud800 surrogate.", "triplets": []}',
        '{"passage": "Fine.", "triplets": [["C", "is \\udfff", "D"]]}',
        '{"passage": "Nan.", "triplets": [], "metadata": {"x": NaN}}',
        '{"passage": "Also good.", "triplets": [], "metadata": {"n": 9223372036854775807}}',
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    report = load_file(path)
    assert [r.text for r in report.records] == ["Good.", "Also good."]
    assert [(p.where.rsplit(":", 1)[1], p.what.split(" ")[0]) for p in report.problems] == [
        ("line 2", "metadata.n"), ("line 3", "row.passage"), ("line 4", "row.triplets[0][1]"),
        ("line 5", "metadata.x")]
    assert "outside the 64-bit range" in report.problems[0].what
    assert "unpaired surrogate" in report.problems[1].what


def test_python_records_get_the_same_checks() -> None:
    from hopgraph.ingest.loaders import check_record
    from hopgraph.records import LoadReport, PassageRecord, Triplet

    report = LoadReport(path="items")
    assert check_record(PassageRecord("ok", [Triplet("A", "is", "B")]), "item 0", report)
    assert not check_record(PassageRecord("ok", [], metadata={"tags": {"a", "b"}}), "item 1",
                            report)
    assert not check_record(PassageRecord("x\ud800", []), "item 2", report)
    assert [(p.where, p.what.split(" ")[0]) for p in report.problems] == [
        ("item 1", "metadata.tags"), ("item 2", "record.passage")]
