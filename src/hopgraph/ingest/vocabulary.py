"""What the texts being ingested say of their words, for the offline extractor's rules: the
words they write in lower case, the capitalized ones they write inside a sentence, the
names they join with "and", and whether they space out every hyphen."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from hopgraph.ingest import fields
from hopgraph.ingest.mentions import (
    COMPANY_ENDINGS,
    ITEM_KEY,
    PREFIXES,
    is_cap,
    without_legal_form,
)
from hopgraph.ingest.roles import job_title
from hopgraph.lexicon.link import YEAR, is_code

_HYPHEN = re.compile(r"([^\W_]+)-[^\W_]")
_SPACED_HYPHEN = re.compile(r"[^\W_] - [^\W_]")


def spaces_hyphens(texts: Iterable[str]) -> bool:
    """Whether texts space out every hyphen they write ("Austria - Hungary", "air -
    cooled"), as some text tokenized before it reached us does: a hyphen with spaces
    around it, and never one between two letters or digits but after a prefix such a
    tokenizer keeps ("co-founder", "mid-2001"). A writer who writes "IR-2322" or
    "follow-up" means a spaced hyphen as a dash."""
    spaced = False
    for text in texts:
        if any(m.group(1).lower() not in PREFIXES for m in _HYPHEN.finditer(text)):
            return False
        spaced = spaced or _SPACED_HYPHEN.search(text) is not None
    return spaced


@dataclass(frozen=True)
class Vocabulary:
    """What the texts being ingested say of their words: those they write in lower case,
    the capitalized ones they write inside a sentence (the "common words" rule), the names
    they join with "and", and their habit with hyphens."""

    lower: frozenset[str]
    named: frozenset[str]
    # "A and B C" names written more than once, or ending as a company does, and their
    # short forms ("Hollins and Shaw" of "Hollins and Shaw Maintenance Ltd").
    joined: frozenset[str] = frozenset()
    # The texts space out every hyphen, so a spaced one may join a name (`spaces_hyphens`).
    spaced_hyphens: bool = False
    # `lower` but for e-mail addresses and links, which write names in lower case
    # ("claims@kirkgate.co.uk"); None: the same as `lower`.
    worded: frozenset[str] | None = None
    # Names of two capitalized words the texts write alone, neither a word they write in
    # lower case ("Tom Whitcombe"; not "Market Place" or "Balkan League", as they write
    # "market" and "league", addresses aside: "tom.whitcombe@..." is his), by the initial
    # and the last word they could be written as ("T whitcombe"): `full_name`.
    people: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # First names of the people the texts give a job title ("Nadia Farouk — Customer
    # Success Manager", "Lewis Hay, Financial Controller"), each with the one such person
    # (`full_name`); a first name two of them share is left out.
    first_names: tuple[tuple[str, str], ...] = ()
    # The numbers a register's rows are keyed by ("304" of a fleet register's "| 304 | RU73
    # BZR | ..."): written alone in a sentence, such a number names the row's thing
    # (`names.register_numbers`).
    registers: frozenset[str] = frozenset()

    def full_name(self, name: str) -> str:
        """The one name of two words an initial and a surname stand for ("Tom Whitcombe"
        of "T.Whitcombe" or "T. Whitcombe", where a change log or a signature writes him
        so and his profile in full); a first name alone, that of the one person the texts
        give a job title with it ("Nadia" of "Nadia Farouk — Customer Success Manager");
        the name itself when the texts write no such name, or more than one."""
        found = _INITIALLED.match(name)
        if found is None:
            return self._first_names.get(name, name)
        full = self._people.get(f"{found.group(1)} {found.group(2).lower()}", ())
        return full[0] if len(full) == 1 else name

    @cached_property
    def _people(self) -> dict[str, tuple[str, ...]]:
        return dict(self.people)

    @cached_property
    def _first_names(self) -> dict[str, str]:
        return dict(self.first_names)

    def a_word(self, name: str) -> bool:
        """Whether a one-word name alone in a field's value or a cell, or opening one, is
        a word: the texts write it in lower case, addresses and links aside."""
        return name.lower() in (self.lower if self.worded is None else self.worded)

    def capitalized_for_grammar(self, word: str) -> bool:
        """Whether a capitalized word opening a sentence or a phrase ("Staff meet on
        Fridays", "Mobility scooters stored on the landings") is capitalized for grammar
        only: the texts also write it in lower case, or never capitalize it inside a
        sentence."""
        return word.lower() in self.lower or word not in self.named


_LOWER = re.compile(r"\b[^\W\d_A-Z][^\W\d_]*")
_ADDRESS = re.compile(r"\S+@\S+|\w+://\S+|www\.\S+")
_INSIDE = re.compile(r"(?:(?<=[^\W_] )|(?<=[^\W_][,;:] ))([^\W\d_][\w'’-]*)")
# A list item's key before the item's first word ("R1  Adopt the plan"): that word opens it.
_KEYED = re.compile(rf"^\s*{ITEM_KEY.pattern}\s+(?=[A-Z][a-z])")


def vocabulary_of(texts: Iterable[str]) -> Vocabulary:
    """The vocabulary of some texts (a passage, a document, a whole ingest)."""
    texts = list(texts)
    lower: set[str] = set()
    worded: set[str] = set()
    named: set[str] = set()
    pairs: dict[str, int] = {}
    for text in texts:
        lower.update(_LOWER.findall(text))
        worded.update(_LOWER.findall(_ADDRESS.sub(" ", text)))
        named.update(word for line in text.splitlines()
                     for word in _INSIDE.findall(_KEYED.sub("", line)) if is_cap(word))
        for found in _AND_NAMES.finditer(text):
            pairs[found.group(0)] = pairs.get(found.group(0), 0) + 1
    people: dict[str, set[str]] = {}
    for text in texts:  # two capitalized words alone, neither a word written in lower case
        for run in _CAPITALIZED_RUN.findall(text):
            two = _TWO_NAMES.fullmatch(run)
            if two is not None and two.group(1).lower() not in worded \
                    and two.group(2).lower() not in worded:
                first, last = two.group(1), two.group(2)
                people.setdefault(f"{first[0]} {last.lower()}", set()).add(run)
    titled: dict[str, set[str]] = {}
    for text in texts:  # a person with a job title: after a dash, a comma or in brackets
        for found in _TITLED.finditer(text):
            if job_title(found.group("post")) is not None:
                titled.setdefault(found.group("first"), set()).add(found.group("name"))
    firsts = tuple(sorted((first, next(iter(names))) for first, names in titled.items()
                          if len(names) == 1 and first.lower() not in worded))
    candidates = {name: count for name, count in pairs.items()
                  if count > 1 or name.rsplit(" ", 1)[-1].lower() in COMPANY_ENDINGS}
    alone = _alone({part for name in candidates for part in name.split(" and ", 1)}, texts)
    joined = {form for name, count in candidates.items() if not _two_names(name, count, alone)
              for form in (name, without_legal_form(name))}  # mentions drop the legal form
    joined |= {short for name in joined for short in _short_forms(name)}
    return Vocabulary(frozenset(lower), frozenset(named), frozenset(joined),
                      spaces_hyphens(texts), frozenset(worded),
                      tuple(sorted((key, tuple(sorted(full))) for key, full in people.items())),
                      firsts, _register_numbers(texts))


# A register keys its rows by whole numbers of three digits or more: fleet, staff, unit or
# asset numbers. A year is no such key ("| 2024 | £1.2m |" is a row of figures), and a table
# of fewer rows is no register (a short list numbered 1, 2, 3 neither).
MIN_REGISTER_ROWS = 3
_REGISTER_NUMBER = re.compile(r"\d{3,6}")


def _register_numbers(texts: list[str]) -> frozenset[str]:
    """The numbers the rows of a register are keyed by: the whole numbers (`_REGISTER_NUMBER`,
    not a year) in the first cells of the rows of tables under one header, when at least
    MIN_REGISTER_ROWS rows under that header are so keyed. A register is often cut into a
    chunk per row, each with its header, so rows are counted by header across the texts."""
    keyed: dict[tuple[str, ...], set[str]] = {}
    for text in texts:
        for table in fields.split(text).tables:
            header = tuple(" ".join(cell.lower().split()) for cell in table.header)
            keys = {row[0].strip() for row in table.rows if row}
            keyed.setdefault(header, set()).update(
                key for key in keys if _REGISTER_NUMBER.fullmatch(key) and not YEAR.match(key))
    return frozenset(key for keys in keyed.values() if len(keys) >= MIN_REGISTER_ROWS
                     for key in keys)


def _two_names(pair: str, count: int, alone: dict[str, int]) -> bool:
    """Whether "A and B" is two names, not one: the texts write A alone and B alone
    (`_alone`), each at least as often as the pair ("Thornsby and Keldholme", two depots;
    "KX-4 and KX-4 Pro", two products), or codes meet at the "and". "Hollins and Shaw" and
    "Audit and Risk Committee" are one name: "Shaw" and "Risk Committee" are seldom written
    alone."""
    first, _, second = pair.partition(" and ")
    if is_code(first.rsplit(" ", 1)[-1]) and is_code(second.split(" ", 1)[0]):
        return True  # codes either side ("PT-25-01 and PT-25-02") are two things
    return all(alone.get(part, 0) >= count for part in (first, second))


_BEFORE_NAME = re.compile(r"(?:[A-Z][\w'’-]*|and|&|of|the) $")
_AFTER_NAME = re.compile(r" (?:[A-Z0-9]|and\b|&|of\b)")  # matched at the name's end


def _alone(names: set[str], texts: list[str]) -> dict[str, int]:
    """How often the texts write each of `names` as a name of its own: not inside a longer
    name and not one side of "and", "&" or "of". One pass over the texts for all names."""
    counts: dict[str, int] = {}
    if not names:
        return counts
    either = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w'’&.-])(?:{either})(?![\w'’-])")
    for text in texts:
        for found in pattern.finditer(text):
            before = text[max(0, found.start() - 40):found.start()]
            if not _BEFORE_NAME.search(before) \
                    and not _AFTER_NAME.match(text, found.end(), found.end() + 6):
                counts[found.group(0)] = counts.get(found.group(0), 0) + 1
    return counts


def _short_forms(name: str) -> list[str]:
    """What a text may call "Hollins and Shaw Maintenance" for short: "Hollins and Shaw"."""
    first, _, second = name.partition(" and ")
    words = second.split()
    return [f"{first} and {' '.join(words[:k])}" for k in range(1, len(words))]


# A first name and a last name, not inside a longer name ("Tom Whitcombe", "Aoife O'Neill")
_SURNAME = r"(?:Mc|Mac|O['’])?[A-Z][a-z]+(?:-[A-Z][a-z]+)?"
_CAPITALIZED_RUN = re.compile(r"(?<![\w.'’-])[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)*(?![\w'’-])")
_TWO_NAMES = re.compile(rf"([A-Z][a-z]+) ({_SURNAME})")
# An initial and a surname: "T.Whitcombe", "T. Whitcombe"
_INITIALLED = re.compile(rf"^([A-Z])\.\s?({_SURNAME})$")
# A name of two words and the post after it: "Nadia Farouk — Customer Success Manager",
# "Lewis Hay, Financial Controller", "Anne Caldwell (Business Manager)"
_TITLED = re.compile(rf"(?<![\w'’.-])(?P<name>(?P<first>[A-Z][a-z]+) {_SURNAME})"
                     rf"(?:\s+[—–-]\s+|,\s+|\s+\()(?P<post>[A-Z][\w&'’ -]{{2,60}}?)"
                     rf"(?=[,.;:)\n]|\s+[—–-]|$)", re.MULTILINE)

_NAME_WORD = r"[A-Z][\w'’&-]*(?:\.\w+)*"  # "B.V" inside a name, not a sentence's full stop
_NAME_WORDS = rf"{_NAME_WORD}(?: (?:of |the |& )?{_NAME_WORD})*"
_AND_NAMES = re.compile(rf"(?<![\w'’-]){_NAME_WORDS} and {_NAME_WORDS}(?![\w'’-])")
