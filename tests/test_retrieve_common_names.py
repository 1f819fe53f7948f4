"""A name the folder holds all over (`bridge.common_names`: a company's own name) is left out
of the relation question, and its own relations are no candidates of their own; a small
folder has no common names, whatever their share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hopgraph import GraphRAG, Query
from hopgraph.retrieve import bridge

COMPANY = "Harrowgate Cold Chain"
QUESTION = f"Who founded the firm that repaired the compressor under WO-0413 for {COMPANY}?"
SITES = ["Leeds", "Hull", "Doncaster", "Wakefield", "York", "Selby", "Goole", "Ripon",
         "Thirsk", "Malton", "Whitby", "Beverley"]


def folder(root: Path, sites: int) -> Path:
    """The company's depot pages (one for each of `sites`), a work order and a repairer's
    profile."""
    docs = root / f"docs_{sites}"
    docs.mkdir()
    for number, town in enumerate(SITES[:sites]):
        (docs / f"site_{number}.md").write_text(
            f"# {town} depot\n\n{COMPANY} runs the {town} depot. The {town} depot manager "
            f"reports to {COMPANY}.\n", encoding="utf-8")
    (docs / "work_order.md").write_text(
        f"# Work order WO-0413\n\nWork order WO-0413 was raised by {COMPANY}. Pryce & Lomax "
        "repaired the compressor under WO-0413.\n", encoding="utf-8")
    (docs / "repairer.md").write_text(
        "# Pryce & Lomax\n\nPryce & Lomax is based in Rotherham. Pryce & Lomax was founded "
        "by Edith Pryce.\n", encoding="utf-8")
    return docs


@pytest.fixture
def open_folder(open_graph: Callable[..., GraphRAG], tmp_path: Path
                ) -> Callable[[int], GraphRAG]:
    def _open(sites: int) -> GraphRAG:
        rag = open_graph(f"common{sites}")
        rag.add_files([folder(tmp_path, sites)])
        rag.wait_indexed()
        return rag
    return _open


def probe_relations(rag: GraphRAG) -> list[str]:
    return [r.text for r in rag.retrieve(Query(QUESTION, "default", 3)).relations]


def test_a_common_names_relations_are_no_probes(open_folder: Callable[[int], GraphRAG],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    rag = open_folder(len(SITES))  # the company in 13 of 14 passages: common
    found = probe_relations(rag)
    assert "Pryce & Lomax repaired the compressor under WO-0413" in found
    assert not [text for text in found if COMPANY in text]
    # Without the rule, the company's relations to its depots are probes.
    monkeypatch.setattr(bridge, "common_names", lambda shares, passages: [False] * len(shares))
    assert [text for text in probe_relations(rag) if COMPANY in text]


def test_a_small_folder_has_no_common_names(open_folder: Callable[[int], GraphRAG],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    rag = open_folder(3)  # the company in 4 of 5 passages: too few passages to be common
    found = probe_relations(rag)
    assert [text for text in found if COMPANY in text]
    monkeypatch.setattr(bridge, "common_names", lambda shares, passages: [False] * len(shares))
    assert probe_relations(rag) == found
