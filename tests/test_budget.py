"""Recall at a budget of words, corpora shaped as files, and `hopgraph eval --documents`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from hopgraph.budget import budget_recall, budget_text, found, normalise
from hopgraph.ingest.reading import read_documents
from hopgraph.shape import wrap, write_corpus

GOLD = "Maria Lind joined Brightwater in 2019. She lives in Helsinki. She leads sales."


def test_a_paragraph_is_found_when_half_its_sentences_are_in_the_budget() -> None:
    assert found(normalise(GOLD), GOLD)
    two = normalise("Intro. She lives in Helsinki. Maria Lind joined Brightwater in 2019.")
    assert found(two, GOLD)  # 2 of 3 sentences, in any order
    one = normalise("She lives in Helsinki, they say.")
    assert not found(one, GOLD)  # 1 of 3
    assert not found(normalise("She lives in Helsinkix."), "She lives in Helsinki.")  # words


def test_a_word_with_an_inner_capital_is_one_word() -> None:
    gold = "The rPET tray went to McDonald Foods. It holds 5 mL."
    assert found(normalise("Intro: the rPET tray went to McDonald Foods. It holds 5 mL."), gold)


def test_the_budget_cuts_the_text_in_rank_order() -> None:
    filler = " ".join(["word"] * 300)
    assert budget_recall([filler, GOLD], [GOLD], 200) == 0.0
    assert budget_recall([filler, GOLD], [GOLD], 400) == 1.0
    assert budget_recall([GOLD, filler], [GOLD, "Tomas Berg designed the probe."], 400) == 0.5
    assert budget_text(["a b c", "d e"], 4) == "a b c d"


def test_case_breaks_and_folding_are_no_difference_but_hyphenation_is() -> None:
    gold = "The Café Müller opened in Zürich. It serves coffee."
    assert found(normalise("THE CAFE MULLER\nopened in ZURICH. It serves\ncoffee."), gold)
    broken = "The manu- facturer is in Trondheim. It ships parts."
    assert not found(normalise(broken), "The manufacturer is in Trondheim. It ships parts, "
                     "and more. They are good.")


def test_wrap_hyphenates_long_words_at_the_line_end() -> None:
    text = "aaaa " * 5 + "manufacturing plant in Trondheim"
    lines = wrap(text, width=30)
    assert lines[:2] == ["aaaa aaaa aaaa aaaa aaaa manu-", "facturing plant in Trondheim"]
    assert all(len(line) <= 30 for line in lines)
    assert wrap("short words only here", width=10) == ["short", "words only", "here"]


def test_a_corpus_becomes_markdown_text_and_pdf_files(tmp_path: Path) -> None:
    pytest.importorskip("fpdf", reason="fpdf2 is missing: pip install -e '.[dev]'")
    items = [{"title": f"Place {i}",
              "text": f"Place {i} is a town in Ålesund county near Šibenik. " * 6}
             for i in range(20)]
    files = write_corpus(items, tmp_path, "demo")
    assert [f.name for f in files] == ["demo-0000.md", "demo-0001.txt", "demo-0002.pdf"]
    assert files[0].read_text(encoding="utf-8").startswith("## Place 0\n\nPlace 0 is a town")
    assert files[1].read_text(encoding="utf-8").startswith("Place 8\nPlace 8 is a town")
    import pypdf

    raw = pypdf.PdfReader(files[2]).pages[0].extract_text()
    assert "Place 16" in raw and "\n" in raw  # wrapped
    assert "Ålesund" in raw and "Sibenik" in raw and "Š" not in raw  # Latin-1 kept, the rest folded
    (pdf,) = read_documents([files[2]])
    # The bold title is a heading by its type: the PDF is read as Markdown.
    assert pdf.kind == "md"
    assert pdf.text.startswith("# Place 16\n\nPlace 16 is a town in Ålesund county near Sibenik.")


def test_eval_documents_scores_a_folder_at_budgets(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "people.md").write_text(
        "# People\n\n## Maria Lind\n\nMaria Lind designed the Kestrel Probe in Bergen.\n\n"
        "## Tomas Berg\n\nTomas Berg sells boats in Oslo.\n", encoding="utf-8")
    (docs / "probe.txt").write_text(
        "Kestrel Probe\nThe Kestrel Probe measures salinity with a sensor from Halvard "
        "Optics.\n", encoding="utf-8")
    questions = [{"question": "Who designed the probe that measures salinity?", "answer": "x",
                  "paragraphs": [
                      {"title": "Maria Lind", "is_supporting": True,
                       "paragraph_text": "Maria Lind designed the Kestrel Probe in Bergen."},
                      {"title": "Kestrel Probe", "is_supporting": True, "paragraph_text":
                       "The Kestrel Probe measures salinity with a sensor from Halvard "
                       "Optics."}]}]
    (tmp_path / "q.json").write_text(json.dumps(questions), encoding="utf-8")
    out = tmp_path / "out.json"
    done = run_cli("eval", "--documents", str(docs), "--questions", str(tmp_path / "q.json"),
                   "--budgets", "10,400", "--quiet", "--json", str(out),
                   env={"HOPGRAPH_LLM_MODEL": ""})
    assert done.code == 0, done.stderr
    assert "| method | 10 words | 400 words | p50 ms |" in done.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["chunks"] == 3
    assert report["budgets"]["naive"]["words@400"] == 1.0  # everything fits in 400 words
    assert report["budgets"]["default"]["words@10"] <= 0.5  # 10 words hold one at most
    bad = run_cli("eval", "--questions", str(tmp_path / "q.json"))
    assert bad.code == 2 and "--documents DIR" in bad.stderr
