"""The company benchmark's dev set (benchmarks/business/dev: Ashby Vale Packaging) read from
its place: the set is well formed, its PDFs print as a company prints reports, and a slice of
six documents and eleven questions goes through the defaults. `benchmarks/business.py` runs
the whole set; its figures are in benchmarks/RESULTS.md ("Company documents").
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hopgraph import GraphRAG
from hopgraph.budget import budget_recall, found, load_gold, normalise, sentences
from hopgraph.embed import LocalEmbedder
from hopgraph.ingest.reading import read_documents
from hopgraph.retrieve import bridge

DEV = Path(__file__).resolve().parents[1] / "benchmarks" / "business" / "dev"
DEV_B = DEV.parent / "dev_b"  # the second company tuned on (Tolland & Reeve)
# Two more, written by helpers who had not read the code: a cold-chain haulier and a
# housing association.
# And two written the same way later (a bus operator, a software company), measured first
# as folders the code had never seen.
TUNED_IDS = ["dev", "dev_b", "dev_c", "dev_d", "dev_e", "dev_f"]
TUNED = [DEV.parent / name for name in TUNED_IDS]
SLICE = ["incident_IR-2322.txt", "kx4_sealers.md", "account_bramleys_fresh_kitchen.txt",
         "supply_agreement_MSA-2024-002.pdf", "staff_profiles.md", "approved_suppliers.md"]


def questions(folder: Path = DEV) -> list[dict]:
    return json.loads((folder / "questions.json").read_text(encoding="utf-8"))


def source(title: str, folder: Path = DEV) -> str:
    """A document's text as written: a PDF's is the text of its source's blocks."""
    if not title.endswith(".pdf"):
        return (folder / title).read_text(encoding="utf-8")
    blocks = json.loads((folder / f"{title}.json").read_text(encoding="utf-8"))["blocks"]
    return "\n".join(block.get(key, "") if key != "lines" else "\n".join(block[key])
                     for block in blocks for key in block if key != "page_break")


def build(folder: Path, names: list[str] | None = None) -> Path:
    """The set's documents (or those named) in `folder`, PDFs printed from their sources."""
    from hopgraph.shape import write_report_pdf

    folder.mkdir(parents=True)
    for path in sorted(DEV.iterdir()):
        name = path.name.removesuffix(".json")
        if path.name == "questions.json" or (names is not None and name not in names):
            continue
        if path.name.endswith(".pdf.json"):
            write_report_pdf(folder / name, json.loads(path.read_text(encoding="utf-8")))
        else:
            shutil.copyfile(path, folder / name)
    return folder


@pytest.mark.parametrize("folder", TUNED, ids=TUNED_IDS)
def test_the_questions_need_two_or_three_documents_and_quote_them(folder: Path) -> None:
    items = questions(folder)
    assert len(items) >= 40
    texts: dict[str, str] = {}
    for item in items:
        titles = {p["title"] for p in item["paragraphs"]}
        assert 2 <= len(titles) <= 3, item["question"]
        for paragraph in item["paragraphs"]:
            gold = paragraph["paragraph_text"]
            assert 1 <= len(sentences(gold)) <= 3, gold
            text = texts.setdefault(paragraph["title"], " ".join(
                source(paragraph["title"], folder).split()))
            assert " ".join(gold.split()) in text, (paragraph["title"], gold)


@pytest.mark.parametrize("folder", TUNED, ids=TUNED_IDS)
def test_the_documents_are_a_company_folder(folder: Path) -> None:
    kinds = [p.name.removesuffix(".json").rsplit(".", 1)[-1] for p in folder.iterdir()
             if p.name not in ("questions.json", "README.md")]
    assert len(kinds) >= 25 and kinds.count("pdf") >= 4
    assert kinds.count("md") >= 5 and kinds.count("txt") >= 5


def test_a_report_pdf_has_pages_a_running_header_and_a_numbered_footer(tmp_path: Path
                                                                       ) -> None:
    pytest.importorskip("fpdf")
    pypdf = pytest.importorskip("pypdf")
    folder = build(tmp_path / "docs", ["supply_agreement_MSA-2024-002.pdf"])
    header = json.loads((DEV / "supply_agreement_MSA-2024-002.pdf.json").read_text(
        encoding="utf-8"))["header"]
    pages = [page.extract_text() for page in
             pypdf.PdfReader(folder / "supply_agreement_MSA-2024-002.pdf").pages]
    assert len(pages) >= 2
    for number, text in enumerate(pages, start=1):
        lines = text.splitlines()
        assert lines[0] == header
        assert lines[-1] == f"Confidential - page {number} of {len(pages)}"


def test_every_gold_paragraph_survives_reading(tmp_path: Path) -> None:
    pytest.importorskip("fpdf")
    folder = build(tmp_path / "docs")
    texts = {Path(doc.path).name: normalise(doc.text) for doc in read_documents([folder])}
    for item in questions():
        for paragraph in item["paragraphs"]:
            assert found(texts[paragraph["title"]], paragraph["paragraph_text"]), paragraph


@pytest.mark.slow
def test_a_slice_through_the_defaults(tmp_path: Path, local_embedder: LocalEmbedder,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("fpdf")
    folder = build(tmp_path / "docs", SLICE)
    picked = [item for item in questions()
              if {p["title"] for p in item["paragraphs"]} <= set(SLICE)]
    assert len(picked) >= 8
    (tmp_path / "q.json").write_text(json.dumps(picked), encoding="utf-8")
    gold = load_gold(tmp_path / "q.json")
    with GraphRAG(uri=str(tmp_path / "b.db"), graph="biz", embedder=local_embedder) as rag:
        summary = rag.add_files([folder])
        assert summary.extractor == "offline" and summary.documents_added == len(SLICE)
        recall = {}
        for method in ("naive", "default"):
            texts = [[p.text for p in rag.retrieve(q.text, method=method, top_k=64).passages]
                     for q in gold]
            recall[method] = sum(budget_recall(t, q.gold, 400)
                                 for t, q in zip(texts, gold, strict=True)) / len(gold)
        # A question naming two entities gets a third bridge, and so does one naming a code
        # (a record); one naming one name alone does not.
        for question, named, third in (
                ("Who at Bramley's Fresh Kitchen reported incident IR-2322?", 2, 1),
                ("Who reported incident IR-2322?", 1, 1),
                ("Who is the quality contact at Bramley's Fresh Kitchen?", 1, 0)):
            with monkeypatch.context() as patch:
                patch.setattr(bridge, "CHAIN", 0)  # the bridges are then the re-queried ones
                shipped = rag.retrieve(question)
                patch.setattr(bridge, "MAX_BRIDGES", 2)
                two_at_most = rag.retrieve(question)
            assert len(shipped.entities) == named, question
            assert len(two_at_most.bridges) == 2, question
            assert len(shipped.bridges) == 2 + third, question
    print(f"dev slice, recall at 400 words: {recall}")
    # The floor measured before issue 35's changes (RESULTS.md): better is welcome, worse not.
    assert recall["default"] >= recall["naive"], recall
