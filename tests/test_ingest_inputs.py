"""Inputs and their document ids (`ingest.inputs`): one id per file whatever the current
directory or the way its path was typed, ids relative to the folder given (or `root`), clear
errors for two files with one id, and the older ids of the same file retired on a write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hopgraph.errors import InputError
from hopgraph.ingest.inputs import sort_inputs
from hopgraph.store.check import check

TEAM = "Alice Smith leads the Platform team at Acme Corp. Bob Jones reports to Alice Smith.\n"
POLICY = "Policy HR-1 says that Carol Diaz approves every leave request.\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "hr").mkdir(parents=True)
    (docs / "team.md").write_text(TEAM, encoding="utf-8")
    (docs / "hr" / "policy.md").write_text(POLICY, encoding="utf-8")
    return docs


def test_a_file_has_one_id_however_it_is_given(folder: Path, monkeypatch) -> None:
    monkeypatch.chdir(folder.parent)
    by_folder = sort_inputs(["docs"]).ids
    assert sorted(by_folder.values()) == ["hr/policy.md", "team.md"]
    for typed in ("docs/team.md", "./docs//team.md", str(folder / "team.md"),
                  "docs/hr/../team.md"):
        assert list(sort_inputs([typed]).ids.values()) == ["team.md"], typed
    monkeypatch.chdir(folder / "hr")
    assert list(sort_inputs(["../team.md"]).ids.values()) == ["team.md"]
    assert sort_inputs([folder]).ids == {str(folder / "hr" / "policy.md"): "hr/policy.md",
                                         str(folder / "team.md"): "team.md"}


def test_root_keeps_folders_in_ids_and_refuses_files_outside(folder: Path) -> None:
    given = sort_inputs([folder / "hr" / "policy.md"], root=folder)
    assert list(given.ids.values()) == ["hr/policy.md"]
    assert sorted(sort_inputs([folder], root=folder.parent).ids.values()) == [
        "docs/hr/policy.md", "docs/team.md"]
    with pytest.raises(InputError, match="outside the root") as caught:
        sort_inputs([folder / "team.md"], root=folder / "hr")
    assert "team.md" in str(caught.value)
    with pytest.raises(InputError, match="not a folder"):
        sort_inputs([folder], root=folder / "team.md")


def test_two_files_with_one_id_are_refused_by_name(folder: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "team.md").write_text("Another team.\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"two files would be one document 'team\.md'") as caught:
        sort_inputs([folder, other])
    assert str(folder / "team.md") in str(caught.value)
    assert str(other / "team.md") in str(caught.value) and "--root" in str(caught.value)
    both = sort_inputs([folder, other], root=tmp_path).ids.values()
    assert sorted(both) == ["docs/hr/policy.md", "docs/team.md", "other/team.md"]


def test_a_file_given_twice_is_read_once_under_its_first_id(folder: Path) -> None:
    found = sort_inputs([folder, folder / "hr" / "policy.md", folder])
    assert len(found.documents) == 2
    assert sorted(found.ids.values()) == ["hr/policy.md", "team.md"]


def test_a_folder_of_nothing_readable_names_what_it_holds(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(b"\x89PNG\r\n")
    (tmp_path / "b.png").write_bytes(b"\x89PNG\r\n")
    (tmp_path / "c.xyz").write_text("?", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        sort_inputs([tmp_path])
    said = str(caught.value)
    assert "3 files of other types (.png, .xyz)" in said
    assert "JSON/JSONL rows or .txt, .text, .md, .markdown, .pdf, .docx" in said


def test_the_older_ids_of_a_file_are_its_aliases(folder: Path, monkeypatch) -> None:
    monkeypatch.chdir(folder.parent)
    aliases = sort_inputs(["docs"]).aliases
    assert aliases["docs/team.md"] == "team.md"
    assert aliases[str(folder / "team.md")] == "team.md"
    assert aliases[os.path.join("docs", "hr", "policy.md")] == "hr/policy.md"


@pytest.mark.slow
def test_ingesting_again_typed_another_way_stores_one_document(open_graph, folder: Path,
                                                              monkeypatch) -> None:
    rag = open_graph("one_id")
    monkeypatch.chdir(folder.parent)
    first = rag.add_files(["docs"])
    assert (first.documents_added, first.documents_replaced, first.documents_unchanged) \
        == (2, 0, 0)
    again = rag.add_files([str(folder / "team.md")])  # absolute this time
    assert (again.documents_added, again.documents_replaced, again.documents_unchanged) \
        == (0, 0, 1)
    assert again.passages_added == 0 and again.texts_embedded == 0
    assert rag.documents() == {"team.md": 1, "hr/policy.md": 1}
    (folder / "team.md").write_text(TEAM + "\nDana Lee joined the Platform team in May.\n",
                                    encoding="utf-8")
    changed = rag.add_files(["docs"])
    assert (changed.documents_added, changed.documents_replaced,
            changed.documents_unchanged) == (0, 1, 1)
    found = rag.retrieve("Who leads the Platform team?", method="naive", top_k=5).passages
    assert len({p.text for p in found}) == len(found)  # no passage twice


@pytest.mark.slow
def test_documents_stored_under_older_ids_are_retired(open_graph, store_of, folder: Path,
                                                      monkeypatch) -> None:
    """A graph written before ids were relative holds `docs/team.md` (the path as typed) and
    the absolute path of the same file: ingesting the folder again keeps one of each."""
    rag = open_graph("older_ids")
    monkeypatch.chdir(folder.parent)
    rag.add([{"passage": TEAM, "triplets": [["Alice Smith", "leads", "Platform team"]]}],
            doc_id="docs/team.md")
    rag.add([{"passage": TEAM, "triplets": [["Bob Jones", "reports to", "Alice Smith"]]}],
            doc_id=str(folder / "team.md"))
    rag.add([{"passage": "Unrelated notes.", "triplets": []}], doc_id="docs/notes.md")
    summary = rag.add_files(["docs"])
    assert summary.documents_retired == 2 and summary.documents_added == 2
    assert rag.documents() == {"team.md": 1, "hr/policy.md": 1, "docs/notes.md": 1}
    assert check(store_of(rag)).problems == []
    appended = rag.add_files([folder / "team.md"], append=True)
    assert appended.documents_retired == 0
