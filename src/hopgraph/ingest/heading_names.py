"""What a heading names: an entity ("Greencreek, Idaho", "Grace Whitlow — Plant Manager",
"Account profile: Hollis and Grant Foods") or a part of the document ("Leadership", "Staff
profiles", "2. SCOPE", "Sheet1"). A section whose heading names something has it as its
title, which the offline extractor links to what the section's sentences name.
"""

from __future__ import annotations

import re

from hopgraph.ingest.lines import section_number
from hopgraph.ingest.roles import job_title, person_like

HEADLINE_WORDS = 5  # a heading this long with three lower-case words is a phrase, not a name
CONNECTORS = frozenset(re.findall(r"\w+", "of de von van der den la le du del da di dos das y "
                                  "the and in on at for to"))

# Words that name a part of a document, not a thing in the world: a heading made of these
# alone ("Staff profiles", "Products", "Press release") is context, never an entity.
GENERIC_HEADING_WORDS = frozenset(re.findall(r"\w+", """
    about abstract action actions agenda appendix answers attendees background benefits
    biography board budget careers changelog chapter conclusion conclusions contact contacts
    context customers decisions description details discussion employees executive faq features
    findings following general goals highlights history how introduction issues items key
    leadership links management meeting minutes milestones mission next news notes objectives
    overview partners people press pricing products product profile profiles purpose questions
    design offices office locations location contents
    references release releases requirements results review risks roadmap schedule scope
    section services specifications staff status steps summary suppliers supplier support team
    teams terms timeline updates us values what when where who why our the and of a an for to
    in on with at your its company organisation organization frequently asked update report
    contents table figures customer service memo memorandum letter notice invoice quotation
    proposal circular bulletin newsletter briefing announcement
    """))

_CODE_FIRST = re.compile(r"^([A-Za-z0-9]+(?:[-/.][A-Za-z0-9]+)+)\b")
_PLACEHOLDER = re.compile(r"^(?:slide|sheet|page|table|figure|chart|tab)\s*\d+$", re.IGNORECASE)
_ROLE = re.compile(r"\s+[—–-]\s+")  # "Grace Whitlow — Plant Manager": a name, then a role
_PLACE_WORDS = 3  # words of a post's place after a comma ("Depot Manager, North Leeds")
LEGAL_FORM_WORDS = frozenset(["ltd", "limited", "inc", "plc", "llc", "llp", "gmbh", "ag", "sa",
                              "bv", "nv", "co", "corp"])


def names_something(heading: str | None) -> bool:
    """Whether a heading names an entity (a person, product, place: "Greencreek, Idaho",
    "Grace Whitlow — Plant Manager", "Rolls-Royce plc") rather than a part of the document
    ("Leadership", "Staff profiles", "2. SCOPE", "3.2 Responsibilities"). A heading set in
    capitals says nothing of which of its words are names, so it is context ("ACCOUNT
    SUMMARY (CRM export)")."""
    if not heading or section_number(heading) is not None:
        return False  # a numbered section is a part of the document
    if _PLACEHOLDER.match(heading.strip()):
        return False  # a name a program gives ("Sheet1", "Slide 3"), not the author
    name = heading_entity(heading)
    capitals = re.findall(r"(?<![\w-])[^\W\d_]{3,}(?![\w-])", name)
    if sum(word.isupper() for word in capitals) >= 2:
        return False  # "INCIDENT REPORT"; an acronym alone ("ISO 4217", "BRICS") is a name
    words = re.findall(r"[^\W\d_][\w'’-]*", name)
    if not words:
        return bool(_CODE_FIRST.match(name))
    lower = [w for w in words if w[0].islower() and w not in CONNECTORS
             and w.lower() not in LEGAL_FORM_WORDS]
    if len(words) >= HEADLINE_WORDS and len(lower) >= 3:
        return False  # a headline ("Aurora Fisheries orders forty buoys"), not a name
    return not all(w.lower() in GENERIC_HEADING_WORDS for w in words)


def heading_entity(heading: str) -> str:
    """The name a heading gives: "About Brightwater Instruments" names Brightwater
    Instruments, "Grace Whitlow — Plant Manager" Grace Whitlow, "Account profile: Hollis
    and Grant Foods" Hollis and Grant Foods, "IR-2322, leaking bowls at Evesham" IR-2322
    ("Greencreek, Idaho" stays whole)."""
    heading = _unnumbered(heading).strip()
    code = _CODE_FIRST.match(heading)
    if code and any(ch.isdigit() for ch in code.group(1)) and \
            any(ch.isalpha() for ch in code.group(1)):
        return code.group(1)
    heading = _unnamed_part(heading)
    label, colon, rest = heading.partition(": ")
    if colon and rest and len(label.split()) <= 3:
        heading = rest.strip()  # "Account profile: Hollis Foods": a label, then the name
    heading = _ROLE.split(heading, maxsplit=1)[0]
    return re.sub(r"^(?:about|meet)\s+", "", heading, flags=re.IGNORECASE).strip() or heading


def heading_post(heading: str) -> tuple[str, str] | None:
    """The person and the post a profile's heading gives ("Priya Nair — Quality & Technical
    Manager", "Ben Harrop – Housing Officer (Ashdyke)", "Nadia Okafor — Depot Manager,
    Leeds"), else None. A post's place after a comma is part of it."""
    parts = _ROLE.split(_unnumbered(heading).strip(), maxsplit=1)
    if len(parts) != 2 or not person_like(parts[0].strip()):
        return None
    post = parts[1].strip()
    base, comma, place = post.partition(", ")
    if "(" in post or not comma:  # a place in brackets may hold commas of its own
        base = post
    elif not (place[:1].isupper() and len(place.split()) <= _PLACE_WORDS):
        return None
    return (parts[0].strip(), post) if job_title(base) is not None else None


def _unnumbered(heading: str) -> str:
    numbered = section_number(heading)
    return numbered[1] if numbered else heading


def _unnamed_part(heading: str) -> str:
    """The heading after a label made of words for parts of documents ("Account profile:
    ...", "Press release – ..."), else the heading."""
    found = re.match(r"^([^:–—]+?)\s*(?::|\s[–—-])\s+(\S.*)$", heading)
    if found and all(word.lower() in GENERIC_HEADING_WORDS
                     for word in re.findall(r"\w+", found.group(1))):
        return found.group(2)
    return heading
