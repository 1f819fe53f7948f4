"""A profile's heading gives its person's post ("Priya Nair — Quality & Technical Manager"):
the fact "person is post", the graph's way from a post other documents name to its holder,
only for a post no other heading of the ingest gives to someone else."""

from __future__ import annotations

from pathlib import Path

import pytest

from hopgraph.ingest import extract
from hopgraph.ingest.heading_names import heading_post

PROFILES = """# Who's who

## Priya Nair — Quality & Technical Manager

Priya leads food safety and joined us in 2018 from Dales Dairies of Skipton.

## Nadia Okafor — Depot Manager, Leeds

Nadia runs the Leeds depot and joined from Northgate Foodservice.

## Gareth Pryor — Depot Manager, Hull

Gareth runs the Hull depot.

## James Whitaker — Account Manager

James looks after the retail customers.

## Emma Crowther — Account Manager

Emma looks after the food manufacturers.
"""

REPORT = """EXCURSION REPORT TE-25-009

DECISION ON PRODUCT
Taken by the Quality & Technical Manager under QA-POL-03 5.4. Lot 24B-117 was put on
hold and released two days later. Copied to the Depot Manager, Leeds and the Account
Manager for the customer.
"""


@pytest.mark.parametrize(("heading", "expected"), [
    ("Priya Nair — Quality & Technical Manager", ("Priya Nair", "Quality & Technical Manager")),
    ("Ben Harrop – Housing Officer (Ashdyke)", ("Ben Harrop", "Housing Officer (Ashdyke)")),
    ("Nadia Okafor — Depot Manager, Leeds", ("Nadia Okafor", "Depot Manager, Leeds")),
    ("Tom Aspinall — Repairs Contract Manager (Thornbury Cross, Ashdyke and Millhaven)",
     ("Tom Aspinall", "Repairs Contract Manager (Thornbury Cross, Ashdyke and Millhaven)")),
    ("3.2 Gemma Hale - Head of Procurement", ("Gemma Hale", "Head of Procurement")),
    ("Greencreek — the town by the river", None),  # no post
    ("IR-2207 — Plant Manager", None),  # no person
    ("Sam Reid — Manager, of the north and the south-east", None),  # a phrase after the comma
    ("Staff profiles", None),
])
def test_a_profile_heading_gives_a_person_and_a_post(heading: str,
                                                     expected: tuple[str, str] | None) -> None:
    assert heading_post(heading) == expected


def test_a_post_one_heading_gives_is_related_to_its_holder(tmp_path: Path) -> None:
    (tmp_path / "staff_profiles.md").write_text(PROFILES)
    (tmp_path / "excursion_report.txt").write_text(REPORT)
    done = extract.run(extract.prepare([tmp_path], "offline"))
    facts = {(t.subject, t.predicate, t.object): r.text
             for report in done.reports for r in getattr(report, "records", [])
             for t in r.triplets}
    posts = {(s, o) for s, p, o in facts if p == "is"}
    # "Account Manager": two hold it. "Depot Manager, Hull" is named by no other text, but
    # the fact is the only one that ties Gareth's profile to the name "Gareth Pryor".
    assert posts == {("Priya Nair", "Quality & Technical Manager"),
                     ("Nadia Okafor", "Depot Manager, Leeds"),
                     ("Gareth Pryor", "Depot Manager, Hull")}
    assert "joined us in 2018" in facts[("Priya Nair", "is", "Quality & Technical Manager")]
    # The report names the post: the graph goes from its facts to the post, then to Priya.
    assert any("Quality & Technical Manager" in (s, o)
               and "TE-25-009" in text for (s, _, o), text in facts.items())
