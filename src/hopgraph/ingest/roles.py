"""Job titles: "Quality Manager", "Head of Procurement", "Sales Engineer".

A company's documents give people with their posts ("Priya Raman, Quality Manager", a
signature's second line). A post is no name of its own: it is the role the person is there
in (`layout_relations`), and a line that is a post says the line above it is a signature,
not a heading (`structure`).
"""

from __future__ import annotations

import re

JOB_WORDS = frozenset(re.findall(r"[\w-]+", """
    manager director lead leader officer engineer auditor coordinator co-ordinator supervisor
    technician chair chairman chairwoman chairperson secretary head controller analyst buyer
    planner administrator assistant advisor adviser consultant specialist inspector surveyor
    representative president vice-president ceo cfo coo cto cio owner partner accountant
    clerk executive agent operator foreman superintendent scientist chemist designer
    architect developer apprentice trainee associate counsel solicitor lawyer nurse doctor
    physician pharmacist editor producer founder treasurer trustee governor principal
    receptionist storekeeper estimator electrician fitter mechanic driver"""))
MAX_TITLE_WORDS = 6


_QUALIFIER = re.compile(r"\s*\([^()]*\)$")  # "Housing Officer (Wrenfield North)"


def job_title(part: str) -> str | None:
    """The part as a job title, when it is one: at most MAX_TITLE_WORDS words and no
    digit, its last word (or the word before "of") one of JOB_WORDS; a qualifier in
    brackets after it is part of it ("Housing Officer (Wrenfield North)")."""
    part = part.strip()
    base = _QUALIFIER.sub("", part) or part
    words = base.split()
    before_of = base.split(" of ")[0].split()
    if not 0 < len(words) <= MAX_TITLE_WORDS or any(ch.isdigit() for ch in base) \
            or not before_of or re.search(r"[():]| {2}", base):  # half a bracket (cut at a
        # comma inside it), a key's colon, a gap between columns: not one title
        return None
    return part if before_of[-1].lower().strip("().") in JOB_WORDS else None


def person_like(name: str) -> bool:
    """Two to four capitalized words with no digit: a name a job title can follow ("Priya
    Raman, Quality Manager"; not "Copper, Lead, Zinc")."""
    words = name.split()
    return 2 <= len(words) <= 4 and all(word[:1].isupper() for word in words) \
        and not any(ch.isdigit() for ch in name)
