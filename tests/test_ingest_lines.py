"""What one line of a document is: wrapped or not, a heading or not, a list item."""

from __future__ import annotations

from itertools import pairwise

import pytest

from hopgraph.ingest.lines import heading_line, strong_heading, width_of, wrapped
from hopgraph.shape import wrap

PROSE = ("Bramley's Fresh Kitchen reported fogging on salad packs sealed with LF-40 Pro. The "
         "film turned white with droplets within an hour in the chiller instead of staying "
         "clear. Twenty-two reels from one order were involved. There was no food safety risk.")


@pytest.mark.parametrize("columns", [44, 60, 72, 78])
def test_every_line_of_a_wrapped_paragraph_goes_on(columns: int) -> None:
    lines = wrap(PROSE, columns)
    width = width_of(lines)
    assert all(wrapped(line, following, width) for line, following in pairwise(lines))
    assert not wrapped("Regards,", "Jess Carver", width)


@pytest.mark.parametrize(("line", "following"), [
    ("Thanks,", "Priya"),  # short lines written on purpose
    ("Priya Castell", "Procurement Lead"),
    ("Reported by: Jess Carver, Bramley's Fresh Kitchen, Evesham, Worcestershire",
     "Logged by: Daniel Ferreira"),
    ("IR-2319  minor  closed  DP-150 cartons with a wrong batch code, Skipton",
     "IR-2322  major  open  Leaking CL-90 bowls, cracked HP-410 plate, Evesham"),  # rows
    ("The supplier completes our questionnaire and sends its certificates, fully",
     "3.2 Three trial lots are delivered and tested at Coalville."),  # the next clause
    ("The supplier completes our questionnaire and sends its certificates, fully",
     "- a migration test certificate"),  # a list item
])
def test_lines_written_apart_are_not_joined(line: str, following: str) -> None:
    assert not wrapped(line, following, 74)


def test_a_long_line_going_on_in_lower_case_is_wrapped() -> None:
    assert wrapped("The Quality Manager decides whether a supplier is", "approved or removed.", 74)


@pytest.mark.parametrize(("line", "heading", "strong"), [
    ("1. DESCRIPTION", True, True),
    ("3.2 Responsibilities", True, True),
    ("5 Budget", True, False),  # a heading when it stands alone; "12 May 2023" looks alike
    ("Section 4 – Fees", True, True),
    ("Section 4: Fees", True, True),
    ("INCIDENT REPORT", True, True),
    ("Staff profiles", True, False),
    ("1990 FIFA World Cup", True, False),
    ("Incident: IR-2341", False, False),  # a key-value line
    ("| Supplier | Owner |", False, False),  # a table row
    ("1. Check the seal on every tray.", False, False),  # a list item that is a sentence
    ("- Anna Berg", False, False),
    ("Policy HR-POL-011, version 2,", False, False),
    ("3.5 tonnes of flake", False, False),
    ("IR-2341", True, False),  # a code alone is no capitals heading
])
def test_which_lines_may_be_headings(line: str, heading: bool, strong: bool) -> None:
    assert heading_line(line) is heading
    assert strong_heading(line) is strong
