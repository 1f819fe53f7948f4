"""Names as the offline extractor writes them: the entity a title names, surnames, the
names a field's value or a table cell holds, and names read with what the ingest's texts
say of their words (`vocabulary`): two names joined by "and" that the texts write as one,
a verb glued by "the" to the name after it, a person and the company they are "of"."""

from __future__ import annotations

import re

from hopgraph.ingest.mentions import (
    COMPANY_ENDINGS,
    UNITS,
    Mention,
    Rules,
    is_code,
    is_number,
    mentions,
    sentences_of,
    set_of,
)
from hopgraph.ingest.roles import person_like
from hopgraph.ingest.vocabulary import Vocabulary

_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")


def title_entity(title: str) -> str:
    """The entity a title names: without a trailing "(...)" that tells namesakes apart
    ("David Smith (director)" is the "David Smith" other passages mention)."""
    title = title.strip()
    return _DISAMBIGUATION.sub("", title) or title


def surnames(names: set[str]) -> dict[str, str]:
    """One-word names that end exactly one longer name of the passage -> that name."""
    longer: dict[str, set[str]] = {}
    for name in names:
        parts = name.split()
        if len(parts) > 1 and parts[-1][:1].isupper():
            longer.setdefault(parts[-1], set()).add(name)
    return {short: next(iter(full)) for short, full in longer.items()
            if len(full) == 1 and short in names}


def names_in(text: str, rules: Rules, vocabulary: Vocabulary) -> list[str]:
    """The names a short text (a field's value, a table cell) holds, in order; a one-word
    name the ingest also writes in lower case ("Major", "Open") is a word, not a name."""
    names: list[str] = []
    for sentence in sentences_of([text], rules):
        tokens = [value for _, value in sentence]
        found = mentions(tokens, rules, [space for space, _ in sentence],
                         vocabulary.spaced_hyphens, compounds=True)
        if found:
            found[0] = without_verb(tokens, found[0], vocabulary)
        names.extend(m.text for m in regrouped(tokens, found, vocabulary)
                     if " " in m.text or not vocabulary.a_word(m.text) or is_code(m.text))
    return list(dict.fromkeys(names))


def without_verb(tokens: list[str], first: Mention, vocabulary: Vocabulary) -> Mention:
    """A mention opening a sentence or a cell without the verb before its "the" ("Complete
    the Dunmore Recycling approval file", "Sign the Carr Lane grant agreement"): a verb
    capitalized for grammar, which the texts also write in lower case, is no part of the
    name after it."""
    words = first.text.split(None, 2)
    if first.start == 0 and first.end >= 3 and tokens[1] == "the" and len(words) == 3 \
            and tokens[0].lower() in vocabulary.lower and words[:2] == tokens[:2]:
        return Mention(words[2], 2, first.end)
    return first


def regrouped(tokens: list[str], found: list[Mention], vocabulary: Vocabulary
              ) -> list[Mention]:
    """One sentence's mentions cut and joined as the ingest's texts say: a register's
    numbers named (`register_numbers`), a person apart from the company they are of
    (`people_apart`), then two names joined by "and" made one (`joined`)."""
    found = register_numbers(tokens, found, vocabulary)
    return joined(tokens, people_apart(tokens, found, vocabulary), vocabulary)


_AMOUNT_SIGNS = frozenset("£$€#")


def register_numbers(tokens: list[str], found: list[Mention], vocabulary: Vocabulary
                     ) -> list[Mention]:
    """A sentence's mentions with the numbers that key a register's rows
    (`Vocabulary.registers`) written alone: "the outing ran with 406", "send 404 from
    Thornsby", "Coach 402 on the S22" (a word the texts also write in lower case before the
    number is no part of its name). A register writes a bus, a person or a unit by its
    number, and so do the minutes and e-mails that say what happened to it; read as a
    name, the number joins what they say to the register's row.

    Not a number that is part of an amount, a figure or a phone number: after a currency
    sign or another number, or before a number, a unit or a per cent sign."""
    if not vocabulary.registers:
        return found
    out: list[Mention] = []
    taken: set[int] = set()
    for mention in found:
        last = tokens[mention.end - 1]
        if mention.end - mention.start == 2 and last in vocabulary.registers \
                and tokens[mention.start].istitle() and vocabulary.a_word(tokens[mention.start]):
            mention = Mention(last, mention.end - 1, mention.end)  # "Coach 402": 402
        out.append(mention)
        taken.update(range(mention.start, mention.end))
    for k, token in enumerate(tokens):
        if token in vocabulary.registers and k not in taken and _alone(tokens, k):
            out.append(Mention(token, k, k + 1))
    return sorted(out, key=lambda mention: mention.start)


def _alone(tokens: list[str], k: int) -> bool:
    """Whether the number at k stands alone: no currency sign or number before it, no
    number, unit or per cent sign after it."""
    before = tokens[k - 1] if k else ""
    after = tokens[k + 1] if k + 1 < len(tokens) else ""
    return before not in _AMOUNT_SIGNS and not is_number(before) and not is_number(after) \
        and after.lower() not in UNITS and after != "%"


def joined(tokens: list[str], found: list[Mention], vocabulary: Vocabulary
            ) -> list[Mention]:
    """Two names joined by "and" made one where the ingest writes them as one name
    (`Vocabulary.joined`). When the first holds "of" and only its part after "of" makes
    such a name with the second ("The Chair of the Audit and Risk Committee"), that part
    is joined and the part before "of" stays a name of its own (`Chair`)."""
    if len(found) < 2 or not vocabulary.joined:
        return found
    out = [found[0]]
    for mention in found[1:]:
        last = out[-1]
        if tokens[last.end:mention.start] != ["and"]:
            out.append(mention)
        elif f"{last.text} and {mention.text}" in vocabulary.joined:
            out[-1] = Mention(f"{last.text} and {mention.text}", last.start, mention.end)
        elif (split := _after_of(tokens, last)) is not None \
                and f"{split[1].text} and {mention.text}" in vocabulary.joined:
            head, tail = split
            out[-1:] = [head, Mention(f"{tail.text} and {mention.text}", tail.start,
                                      mention.end)]
        else:
            out.append(mention)
    return out


def _after_of(tokens: list[str], mention: Mention, first: bool = False
              ) -> tuple[Mention, Mention] | None:
    """A mention cut at its last "of" (or "of the"), or its `first`: the part before and
    the part after."""
    cut = mention.text.find(" of ") if first else mention.text.rfind(" of ")
    ofs = [k for k in range(mention.start + 1, mention.end - 1) if tokens[k] == "of"]
    if cut < 0 or not ofs:
        return None
    of = ofs[0] if first else ofs[-1]
    after = of + 2 if tokens[of + 1] == "the" else of + 1
    tail = mention.text[cut + 4:]
    tail = tail[4:] if tail.startswith("the ") else tail
    if after >= mention.end or not tail:
        return None
    return Mention(mention.text[:cut], mention.start, of), Mention(tail, after, mention.end)


def people_apart(tokens: list[str], found: list[Mention], vocabulary: Vocabulary
                 ) -> list[Mention]:
    """A person written with the company or group they are of ("Ryan Tait of Kielder
    Generator Services Ltd", "Ruth Okonjo of Lindqvist Certification", "Trent Reznor of
    Nine Inch Nails") as two names, the person and what they are of: cut at the first "of"
    when the part before it is two to four capitalized words, none of them one the texts
    write in lower case or one a company's name ends with (a first name and a surname,
    not "Royal Bank" or "Finance Committee"), and the part after it is two words or more.
    A single word after "of" is mostly a place or a field that the name is written with,
    legal form or not ("Duke Ferdinand of Brunswick", "Columbus Museum of Art", "Dales
    Dairies of Skipton Ltd"): one name, as before."""
    out: list[Mention] = []
    for mention in found:
        split = _after_of(tokens, mention, first=True)
        if split is not None and " " in split[1].text \
                and _a_person(split[0].text, vocabulary):
            out.extend(split)
        else:
            out.append(mention)
    return out


# What an institution's name is built on, besides a company's endings: a small ingest may
# never write these in lower case ("Darpana Academy of Performing Arts").
_INSTITUTIONS = set_of("""academy museum college school conservatory hospital church
    cathedral bank library gallery theatre""")


def _a_person(name: str, vocabulary: Vocabulary) -> bool:
    """Whether a name reads as a person's: `person_like`, and no word of it one the texts
    write in lower case or one an organisation's name is built on ("Committee", "Trust",
    "Academy")."""
    return person_like(name) and not any(
        word.lower() in vocabulary.lower or word.lower() in COMPANY_ENDINGS
        or word.lower() in _INSTITUTIONS for word in name.split())

