"""A retriever built from the last one (its BM25 index and entity linker carried over and
brought up to date) returns exactly what one built afresh returns, on both search backends,
after adds, text changes and deletes."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from conftest import MUSIQUE, need

from hopgraph import GraphRAG
from hopgraph.identity import content_key
from hopgraph.ingest.loaders import load_file
from hopgraph.lexicon import lexical, link
from hopgraph.retrieve import OFFLINE_METHODS
from hopgraph.store import sidecar

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each

QUESTIONS = 6


@pytest.fixture(scope="module")
def musique() -> tuple[list[str], list[list[Any]]]:
    """The first dev questions, and their paragraphs (with triplets) in three documents."""
    questions = json.loads(need(MUSIQUE / "questions_dev.json").read_text(encoding="utf-8"))
    keys = [{content_key(f"{p['title']}\n{p['paragraph_text']}") for p in q["paragraphs"]}
            for q in questions[:QUESTIONS]]
    records = load_file(MUSIQUE / "openie_gpt-3.5-turbo-1106.json").records
    docs: list[list[Any]] = [[], [], []]
    for number, wanted in enumerate(keys):
        docs[number % 3].extend(replace(r, doc_id=f"doc{number % 3}") for r in records
                                if content_key(r.text) in wanted)
    return [q["question"] for q in questions[:QUESTIONS]], docs


def results(rag: GraphRAG, questions: list[str]) -> list[dict[str, Any]]:
    out = []
    for method in OFFLINE_METHODS:
        for question in questions:
            got = rag.retrieve(question, top_k=10, method=method).as_dict()
            got.pop("timings_ms", None)
            out.append(got)
    return out


@pytest.mark.parametrize("memory_limit", [None, 0], ids=["mirror", "milvus"])
def test_carried_retrievers_equal_fresh_ones(open_graph, store_of, musique, memory_limit,
                                             monkeypatch) -> None:
    questions, (first, second, third) = musique
    built = {"bm25": 0, "linker": 0}
    real_bm25, real_linker = lexical.LocalBM25.__init__, link.EntityLinker.__init__

    def counted_bm25(self, *args: Any) -> None:
        built["bm25"] += 1
        real_bm25(self, *args)

    def counted_linker(self, *args: Any) -> None:
        built["linker"] += 1
        real_linker(self, *args)

    monkeypatch.setattr(lexical.LocalBM25, "__init__", counted_bm25)
    monkeypatch.setattr(link.EntityLinker, "__init__", counted_linker)
    rag = open_graph("carried", memory_limit=memory_limit)
    rag.add(first)
    lexicon_file = sidecar.lexicon_path(store_of(rag).snapshot_path())
    results(rag, questions)  # builds the retriever, its BM25 index and linker
    assert built == {"bm25": 1, "linker": 1}
    changed = [replace(r, text=r.text + " Revised.") if i % 4 == 0 else r
               for i, r in enumerate(first)]
    steps = [lambda: rag.add(second),  # entities added
             lambda: rag.add(changed),  # texts changed, passages replaced
             lambda: rag.add(third),
             lambda: rag.delete("doc1")]  # passages, relations and entities removed
    for number, step in enumerate(steps):
        step()
        before = dict(built)
        carried = results(rag, questions)
        assert built["bm25"] == before["bm25"], number  # carried over, not built again
        lexicon_file.unlink(missing_ok=True)  # nor from the file (lexicon.saved)
        fresh_process = open_graph("carried", memory_limit=memory_limit)
        fresh = results(fresh_process, questions)  # built afresh
        fresh_process.close()
        assert carried == fresh, number
    # Adds extend the linker; the delete that removed entities built it again.
    assert built["linker"] == 1 + len(steps) + 1
