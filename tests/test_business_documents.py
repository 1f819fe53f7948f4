"""A company's own documents (memos, profiles, product pages, a press release, PDFs) through
the defaults: what the offline extractor makes of text that is not Wikipedia, and whether
the graph still beats naive retrieval on two-document questions.

The documents are in tests/data/business/; the two PDFs are printed at test time from
tests/data/business_pdf/ (wrapped at 60 characters, so names and words break across lines).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hopgraph import GraphRAG
from hopgraph.budget import budget_recall, load_gold

DATA = Path(__file__).resolve().parent / "data"
GENERIC = ["Leadership", "Products", "Offices", "Staff profiles", "Staff", "Contacts",
           "Press release", "Attendees", "Decisions", "Next steps", "Design", "Overview",
           "Specifications", "Customers", "Service", "Suppliers", "Supplier agreements 2025",
           "Frequently asked questions", "About Brightwater Instruments"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("fpdf", reason="fpdf2 is missing: pip install -e '.[dev]'")
    from hopgraph.shape import write_pdf

    target = tmp_path_factory.mktemp("business") / "docs"
    shutil.copytree(DATA / "business", target)
    for source in sorted((DATA / "business_pdf").glob("*.json")):
        items = json.loads(source.read_text(encoding="utf-8"))
        write_pdf(target / f"{source.stem}.pdf", items, width=60)
    return target


@pytest.fixture(scope="module")
def rag(folder: Path, tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("business-graph")
    with GraphRAG(uri=str(tmp / "b.db"), graph="biz") as graph:
        summary = graph.add_files([folder])  # the defaults: no options, no LLM
        assert summary.extractor == "offline" and summary.passages_added >= 20
        yield graph


def names(rag: GraphRAG) -> set[str]:
    return set(rag.graph.entity_names)


def edges(rag: GraphRAG) -> set[tuple[str, str, str]]:
    graph = rag.graph
    return {(graph.entity_names[r.subject], r.text, graph.entity_names[r.object])
            for r in graph.relations}


@pytest.mark.slow
def test_headings_are_context_not_entities(rag: GraphRAG) -> None:
    assert not names(rag) & set(GENERIC)
    passages = [p.text for p in rag.retrieve("Where does Maria Lind live?", method="naive",
                                             top_k=3).passages]
    assert any(p.startswith("Staff profiles › Maria Lind\n") for p in passages)


@pytest.mark.slow
def test_no_name_is_glued_across_a_line_break(rag: GraphRAG) -> None:
    assert not [name for name in names(rag) if "\n" in name]
    assert not {"Maria Lind Jonas Aalto", "Jonas Aalto Sofie Brandt"} & names(rag)
    wanted = {"Maria Lind", "Jonas Aalto", "Sofie Brandt", "Tomas Ekdahl", "Ingrid Solberg",
              "Halvard Optics", "Norrcell", "Kiel Precision", "Aurora Fisheries", "Umeå",
              "Petrel Buoy", "Kestrel Probe", "Tern Logger", "Lars Moen"}
    assert wanted <= names(rag), wanted - names(rag)


@pytest.mark.slow
def test_pronouns_and_the_sentences_go_to_who_they_are_about(rag: GraphRAG) -> None:
    found = edges(rag)
    assert any(s == "Maria Lind" and o == "Helsinki" for s, _, o in found)
    assert any(s == "Tomas Ekdahl" and o == "Stavanger" for s, _, o in found)
    assert any(s == "Jonas Aalto" and o == "Tampere" for s, _, o in found)
    assert any(s == "Kestrel Probe" and "designed by" in t and o == "Tomas Ekdahl"
               for s, t, o in found)
    # not the heading's, the title's or the company's
    assert not any(o == "Helsinki" and s in ("Staff profiles", "Brightwater Instruments")
                   for s, _, o in found)
    assert not any(s == "Brightwater Instruments" and "designed by" in t for s, t, _ in found)


@pytest.mark.slow
def test_the_graph_beats_naive_retrieval_on_two_document_questions(rag: GraphRAG) -> None:
    questions = load_gold(DATA / "business_questions.json")
    assert len(questions) >= 20
    recall = {}
    for method in ("naive", "default"):
        total = 0.0
        for question in questions:
            texts = [p.text for p in rag.retrieve(question.text, method=method,
                                                  top_k=20).passages]
            total += budget_recall(texts, question.gold, 200)
        recall[method] = total / len(questions)
    print(f"business documents, recall at 200 words: {recall}")
    assert recall["default"] >= recall["naive"], recall


def test_every_gold_paragraph_is_in_its_document(folder: Path) -> None:
    from hopgraph.budget import found, normalise
    from hopgraph.ingest.reading import read_documents

    texts = {Path(doc.path).name: normalise(doc.text) for doc in read_documents([folder])}
    for question in json.loads((DATA / "business_questions.json").read_text("utf-8")):
        for paragraph in question["paragraphs"]:
            assert found(texts[paragraph["title"]], paragraph["paragraph_text"]), paragraph
