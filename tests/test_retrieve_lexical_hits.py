"""The default method brings in the passages BM25 finds and its dense search misses
(`default.with_lexical_hits`): a question naming a work order at a company whose name is on
every letterhead finds the letterheads by cosine and the work order only by its code."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hopgraph import GraphRAG, Query
from hopgraph.retrieve import default

QUESTION = "Which company did work order WO/2025/0413 for Harrowgate Cold Chain?"
SITES = ["Leeds", "Hull", "Doncaster", "Wakefield", "York", "Selby", "Goole", "Ripon"]
TEAMS = ["transport", "warehouse", "night", "day", "chilled", "frozen"]  # 48 letters: more
# than the dense search returns (rank.POOL), so the work order's passage is not among them


def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for number, (town, team) in enumerate((t, m) for t in SITES for m in TEAMS):
        (docs / f"letter_{number}.txt").write_text(
            f"Harrowgate Cold Chain Ltd\nHarrowgate House, {town}\n\nHarrowgate Cold Chain "
            f"runs the {team} team at {town} for Harrowgate Cold Chain customers.\n",
            encoding="utf-8")
    (docs / "excursion.txt").write_text(
        "Excursion log\n\n01:35 Pryce & Lomax engineer on site. Work order WO/2025/0413.\n"
        "02:10 Compressor 2 reset and running.\n", encoding="utf-8")
    return docs


@pytest.fixture
def graph(open_graph: Callable[..., GraphRAG], tmp_path: Path) -> GraphRAG:
    rag = open_graph("lexical")
    rag.add_files([folder(tmp_path)])
    rag.wait_indexed()
    return rag


def top(rag: GraphRAG, k: int) -> list[str]:
    return [p.text for p in rag.retrieve(Query(QUESTION, "default", k)).passages]


def test_a_passage_only_bm25_finds_is_ranked(graph: GraphRAG,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    assert any("WO/2025/0413" in text for text in top(graph, 3))
    # Without the BM25 hits the dense search missed, the letterheads fill the top.
    monkeypatch.setattr(default, "with_lexical_hits", lambda ctx, vectors, dense, lexical: dense)
    assert not any("WO/2025/0413" in text for text in top(graph, 3))
