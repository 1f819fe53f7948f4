"""benchmarks/entity_audit.py's classes on a hand-made folder: labels, fragments and
headings are junk; a code or place a document lists facts under is not a label, and a
company's name without its legal form is not a fragment."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "entity_audit.py"

REGISTER = """# Corrective actions

Owner: Priya Raman
Reported by: Tom Hessel

CA-2025-021: Orrin & Tate Engineering adds annealing to every plate.
Gateshead: 14 engineers and the helpdesk.

The plates come from Orrin & Tate Engineering Ltd of Redditch; CA-2025-021 closes in May.
Gateshead lies south of the Tyne. Miller's Wharf takes the rest from Keller Polymers Ltd.
"""


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("entity_audit", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["entity_audit"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_classes_of_a_small_register(tmp_path: Path) -> None:
    audit = load_script()
    (tmp_path / "register.md").write_text(REGISTER, encoding="utf-8")
    corpus = audit.read_corpus(tmp_path)
    classes = {name: audit.classify(name, corpus) for name in (
        "Owner", "Reported by", "Owner: Priya Raman", "CA-2025-021", "Gateshead",
        "Keller Polymers", "Miller", "Corrective actions", "Priya Raman")}
    assert classes == {
        "Owner": "label", "Reported by": "label", "Owner: Priya Raman": "label",
        "CA-2025-021": "kept", "Gateshead": "kept",  # keys, but named in the text too
        "Keller Polymers": "kept",  # "Ltd" after it is no more of the name
        "Miller": "fragment", "Corrective actions": "heading", "Priya Raman": "kept"}


def test_a_period_or_a_length_is_a_value_and_a_count_of_people_is_generic(
        tmp_path: Path) -> None:
    audit = load_script()
    (tmp_path / "register.md").write_text(REGISTER, encoding="utf-8")
    corpus = audit.read_corpus(tmp_path)
    assert [audit.classify(name, corpus) for name in (
        "36 months", "24 hours", "7 days", "124 miles", "40 metres", "2 years")] == [
        "date or number"] * 6
    assert audit.classify("14 engineers", corpus) == "generic"  # a count of a common word
    assert [audit.classify(name, corpus) for name in (
        "6 to 8 October 2025", "14–16 May", "01:00–04:00")] == ["date or number"] * 3


def test_a_row_of_a_table_laid_out_with_spaces_is_no_heading(tmp_path: Path) -> None:
    # In capitals and short, but aligned with the rows around it: its cells are values.
    audit = load_script()
    (tmp_path / "log.txt").write_text(
        "Temperature log\n\nTimestamp          Probe A   Alarm   Door\n"
        "23/04/2025 00:00     -14.6   HIGH    SHUT\n"
        "23/04/2025 00:30     -14.1   HIGH    SHUT\n", encoding="utf-8")
    corpus = audit.read_corpus(tmp_path)
    assert audit.classify("23/04/2025 00:30", corpus) == "date or number"
    assert audit.classify("Temperature log", corpus) == "heading"


def test_a_name_glued_across_a_spaced_dash_is_glued(tmp_path: Path) -> None:
    audit = load_script()
    (tmp_path / "notes.txt").write_text(
        "Call back 15:40 - Aldgate confirm the part.\n"
        "Rejected load LD-250311-07 - Normanton 11/03.\nSaint-Denis is a town.\n",
        encoding="utf-8")
    corpus = audit.read_corpus(tmp_path)
    assert audit.classify("15:40-Aldgate", corpus) == "glued"
    assert audit.classify("LD-250311-07-Normanton", corpus) == "glued"
    assert audit.classify("LD-250311-07", corpus) == "kept"
    assert audit.classify("Saint-Denis", corpus) == "kept"
    (tmp_path / "complaint.txt").write_text(
        "Complainant: Mrs Patricia Doyle (tenant since 2016)\n", encoding="utf-8")
    corpus = audit.read_corpus(tmp_path)
    assert audit.classify("Patricia Doyle", corpus) == "kept"  # "Mrs" is no more of her name


def test_a_list_items_key_is_no_fragment_of_the_items_first_word(tmp_path: Path) -> None:
    audit = load_script()
    (tmp_path / "survey.txt").write_text(
        "Recommendations\n\nR3 Replace all bathroom extract fans at Heron Court.\n"
        "We replace fans. The K4 Pro ships; we sell the K4 Pro.\n", encoding="utf-8")
    corpus = audit.read_corpus(tmp_path)
    assert audit.classify("R3", corpus) == "kept"  # "Replace" opens the item
    assert audit.classify("K4", corpus) == "fragment"  # of "K4 Pro"


def test_the_report_shows_the_counts_with_no_names_when_asked_for_none() -> None:
    audit = load_script()
    classes = {kind: [] for kind in audit.CLASSES}
    classes["generic"], classes["kept"] = ["Board", "Present"], ["Keller Polymers"]
    result = audit.Audit(classes, relations=4, junk_relations=1, not_on_a_line=["Ashby"])
    text = audit.report(result, 0)
    assert "junk (every class but dates and numbers alone and kept): 2 (66.7%)" in text
    assert "generic (2): \n" in text and "Board" not in text and "Ashby" not in text
    assert "'Board'" in audit.report(result, 1)
