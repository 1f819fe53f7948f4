"""Entity linking: find the graph's entities named in a question, with no model and no LLM.

Word n-grams of the question are matched to entity names exactly (after normalization, which
also makes matching case-insensitive), then fuzzily; names in scripts written without spaces
(CJK) are found as substrings.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import numpy as np

from hopgraph.identity import normalize
from hopgraph.lexicon.fuzzy import FuzzyIndex

_WORD = re.compile(r"[\w][\w+#&.'’\-]*", re.UNICODE)
_LEADING_ARTICLE = re.compile(r"^(the|a|an) ")
_POSSESSIVE = re.compile(r"['’]s?$")
_MAX_NGRAM = 10
_FUZZY_CUTOFF = 90.0
_FUZZY_MIN_CHARS = 5
STOPWORDS = frozenset(
    """a an and are as at be been by did do does for from had has have he her him his how i in
    is it its of on or she that the their them they this to was were what when where which who
    whom whose why will with you your name named same than then there these those one two first
    last many much more most other""".split()  # noqa: SIM905
)


# Words that with numbers make a value (a date, an amount), not a name: a span of these and
# numbers alone ("2025", "May 2025", "92 per cent") is never a question's entity.
PERIODS = frozenset("""january february march april may june july august september october
    november december jan feb mar apr jun jul aug sep sept oct nov dec q1 q2 q3 q4 h1 h2
    fy monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur
    thurs fri""".split())  # noqa: SIM905
VALUE_WORDS = PERIODS | frozenset("""per cent percent million billion thousand hundred year
    years month months week weeks day days h kg g mg km m cm mm l ml""".split())  # noqa: SIM905
_NUMBER = re.compile(r"^[^\w]*[\d][\d.,:/%-]*[^\w]*$|^[£$€¥#]?[\d][\d.,]*[kmb]?$"
                     r"|^\d{1,2}(st|nd|rd|th)$")  # or a day of the month: "25th"


# Words before a number that make it no thing's number: "on 4 March", "at 31", "than 30"
PREPOSITIONS = frozenset("""about above across after against along among around at before
    behind below beneath beside besides between beyond by circa despite down during except
    for from in inside into like near nearly of off on onto out outside over past per since
    than through throughout till to toward towards under until up upon via with within
    without almost approximately some only just""".split())  # noqa: SIM905
_WHOLE_NUMBER = re.compile(r"^\d{1,5}$")
YEAR = re.compile(r"^(1[89]|20)\d\d$")  # a year, not a thing's number (also `ingest.vocabulary`)
_JOINS = frozenset({"and", "or"})


_DOTTED = re.compile(r"^\d+(?:\.\d+){2,}$")
_DATE = re.compile(r"^(?:\d+\.){2}\d{4}$|^(?:[0-2]?\d|3[01])\.(?:0?\d|1[0-2])\.\d\d$")


def is_version(word: str) -> bool:
    """Whether a normalized word is a version or a clause's number ("4.12.3", "3.2.1"): three
    numbers or more joined by dots, not a date ("12.05.2025", "12.05.25"). It names one
    thing, as an identifier does; "4.5" and "2025" are values."""
    return bool(_DOTTED.match(word)) and not _DATE.match(word)


def is_value(words: list[str]) -> bool:
    """Whether normalized words are a value (numbers, with month or unit words), not a name."""
    numbers = [bool(_NUMBER.match(w)) and not is_version(w) for w in words]
    return any(n or w in PERIODS for n, w in zip(numbers, words, strict=True)) and all(
        n or w in VALUE_WORDS or w in STOPWORDS for n, w in zip(numbers, words, strict=True))


def is_code(key: str) -> bool:
    """Whether a key is (or holds) an identifier with digits ("ir-2322", "kx-4 pro"): such
    names match exactly, never fuzzily (IR-2322 is not IR-2332)."""
    return any(ch.isdigit() for ch in key)


def numbered(question: str, words: list[tuple[int, int, str]]) -> set[int]:
    """The positions in `words` (the question's, as `EntityLinker.link` cuts it) of the
    numbers that name a thing by its number: a whole number, not a year, written right after
    a word in lower case that is a noun ("coach 402", "bus 304", "service 12"), or joined to
    such a number by "and", "or" or a comma ("spares 209 and 210").

    A company numbers its vehicles, routes and rooms, and its registers are keyed by those
    numbers (`| 304 | RU73 BZR | ...`). A number alone is a value ("2025", "7 days", "on 4
    March", "at 05:50"), never a seed; after the noun it numbers it is that thing's name.
    The word before must not be a function word, a preposition, a value's word ("per
    cent", "May") or a verb's past ("carried 92"), and the number not part of a time, a
    decimal or a longer figure ("08:15", "4.5") nor followed by a unit ("rose 12 per
    cent", "took 3 days")."""
    found: set[int] = set()
    for n, (start, end, key) in enumerate(words):
        figure = question[end:end + 1] == "%" or (  # "12%", "08:15", "4.5", "14,720", "3/4"
            question[end:end + 1] in (":", ".", ",", "/") and question[end + 1:end + 2].isdigit())
        measured = n + 1 < len(words) and words[n + 1][2] in VALUE_WORDS  # "12 per cent"
        if n == 0 or not _WHOLE_NUMBER.match(key) or YEAR.match(key) or figure or measured:
            continue
        before = question[words[n - 1][1]:start]
        previous = words[n - 1][2]
        if (before == " " and previous in _JOINS and n - 2 in found) \
                or (before.strip() == "," and n - 1 in found):
            found.add(n)  # "209 and 210", "209, 210"
        elif before == " " and previous.isalpha() and question[words[n - 1][0]].islower() \
                and previous not in STOPWORDS and previous not in PREPOSITIONS \
                and previous not in VALUE_WORDS and not previous.endswith("ed"):
            found.add(n)
    return found


def match_key(name: str) -> str:
    """The form entity names and question n-grams are compared in."""
    key = normalize(name).strip(" .,;:!?\"'()[]")
    key = _LEADING_ARTICLE.sub("", key)
    return _POSSESSIVE.sub("", key)


def _name_like(first: str) -> bool:
    """A word starting like a name: capital letter, digit, or a script without case."""
    return first.isdigit() or (first.isalpha() and not first.islower())


def _has_unspaced_script(text: str) -> bool:
    # Most names: no look-up per character, which is slow over many names
    # (benchmarks/RESULTS.md, "Figures moved from code comments").
    if text.isascii():
        return False
    return any(unicodedata.name(ch, "").startswith(("CJK", "HIRAGANA", "KATAKANA", "THAI"))
               for ch in text)


@dataclass(frozen=True)
class EntityMatch:
    """An entity found in the question: graph index, the text matched, and how."""

    index: int
    name: str
    matched: str
    score: float  # 1.0 for exact, fuzzy ratio / 100 otherwise
    how: str  # "exact", "fuzzy", "substring"


class EntityLinker:
    """An index of entity names for linking questions and user-given names to the graph."""

    def __init__(self, names: list[str]) -> None:
        self.names = list(names)  # its own: a graph's list may grow after
        self.by_key: dict[str, list[int]] = {}
        self.unspaced: list[tuple[str, int]] = []
        for index, name in enumerate(names):
            key = match_key(name)
            if not key or key in STOPWORDS:
                continue
            self.by_key.setdefault(key, []).append(index)
            if _has_unspaced_script(key):
                self.unspaced.append((key, index))
        self.keys = list(self.by_key)
        self._fuzzy_index: FuzzyIndex | None = None

    def arrays(self, with_fuzzy: bool = True
               ) -> tuple[list[str], list[str] | None, dict[str, np.ndarray]]:
        """The lookups as arrays, to save (`from_arrays` reads them back): the keys in
        order, each key's entities as CSR rows (`key_indptr`, `key_entities`), the unspaced
        names (`unspaced_key`, `unspaced_entity`) and, `with_fuzzy`, the trigram index (its
        trigrams, else None, and its arrays)."""
        sizes = [len(self.by_key[key]) for key in self.keys]
        numbers = {key: n for n, key in enumerate(self.keys)} if self.unspaced else {}
        arrays = {
            "key_indptr": np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]),
            "key_entities": np.array([i for key in self.keys for i in self.by_key[key]],
                                     dtype=np.int64),
            "unspaced_key": np.array([numbers[key] for key, _ in self.unspaced], dtype=np.int64),
            "unspaced_entity": np.array([i for _, i in self.unspaced], dtype=np.int64)}
        if not with_fuzzy:
            return self.keys, None, arrays
        grams, postings = self.fuzzy.arrays()
        return self.keys, grams, {**arrays, **postings}

    @classmethod
    def from_arrays(cls, names: list[str], keys: list[str], grams: list[str] | None,
                    arrays: dict[str, np.ndarray]) -> EntityLinker:
        """The linker `arrays` gave, over `names`, with the trigram index when `grams` are
        given (ValueError if the arrays do not fit together)."""
        indptr = np.asarray(arrays["key_indptr"])
        entities = np.asarray(arrays["key_entities"])
        if (len(indptr) != len(keys) + 1 or indptr[0] != 0 or indptr[-1] != len(entities)
                or np.any(np.diff(indptr) < 0) or np.any(entities < 0)
                or np.any(entities >= len(names))):
            raise ValueError("linker arrays do not fit its keys and names")
        bounds, listed = indptr.tolist(), entities.tolist()
        linker = cls.__new__(cls)
        linker.names, linker.keys = list(names), list(keys)
        linker.by_key = {key: listed[bounds[n]:bounds[n + 1]] for n, key in enumerate(keys)}
        if len(linker.by_key) != len(keys):
            raise ValueError("a linker key listed twice")
        unspaced_key = np.asarray(arrays["unspaced_key"])
        unspaced_entity = np.asarray(arrays["unspaced_entity"])
        if len(unspaced_entity) and (
                unspaced_key.min() < 0 or unspaced_key.max() >= len(keys)
                or unspaced_entity.min() < 0 or unspaced_entity.max() >= len(names)):
            raise ValueError("linker arrays do not fit its keys and names")
        linker.unspaced = [(keys[k], i) for k, i in zip(unspaced_key.tolist(),
                                                        unspaced_entity.tolist(), strict=True)]
        linker._fuzzy_index = None if grams is None else FuzzyIndex.from_arrays(
            linker.keys, grams, arrays)
        return linker

    def extends_to(self, names: list[str]) -> bool:
        """Whether `names` are this linker's names with more after them (entities added,
        none removed or renamed: what `extended` can follow)."""
        return len(names) >= len(self.names) and names[:len(self.names)] == self.names

    def extended(self, names: list[str]) -> EntityLinker:
        """The linker `EntityLinker(names)` would build, for names that `extends_to`: this
        one's lookups with the new names added, at the cost of the new names (this linker
        is not changed: queries may use it meanwhile)."""
        if len(names) == len(self.names):  # nothing added: this one serves as it is
            return self
        new = EntityLinker.__new__(EntityLinker)
        new.names, new.by_key, new.unspaced = list(names), dict(self.by_key), list(self.unspaced)
        added: list[str] = []
        for index in range(len(self.names), len(names)):
            key = match_key(names[index])
            if not key or key in STOPWORDS:
                continue
            if key in new.by_key:
                new.by_key[key] = [*new.by_key[key], index]
            else:
                new.by_key[key] = [index]
                added.append(key)
            if _has_unspaced_script(key):
                new.unspaced.append((key, index))
        new.keys = self.keys + added
        fuzzy = self._fuzzy_index
        new._fuzzy_index = None if fuzzy is None else fuzzy.extended(added)
        return new

    @property
    def fuzzy(self) -> FuzzyIndex:
        """The trigram index for fuzzy lookups, built on the first one."""
        if self._fuzzy_index is None:
            self._fuzzy_index = FuzzyIndex(self.keys)
        return self._fuzzy_index

    def link(self, question: str, whole: bool = True) -> list[EntityMatch]:
        """Entities named in the question, longest non-overlapping matches first.

        With `whole=False` the text as a whole is not matched: used to find the entities
        named inside an entity's own name.
        """
        words = [(m.start(), m.end(), match_key(m.group())) for m in _WORD.finditer(question)]
        # In a cased question, a name has a capitalized word or a number in it: this keeps
        # common nouns that are also entities ("president", "river") out of the seeds.
        cased = any(ch.isupper() for ch in question[1:])
        name_like = [_name_like(question[w[0]]) for w in words]
        numbers = numbered(question, words)
        matches: list[EntityMatch] = []
        covered: set[int] = set()
        fuzzy_candidates: list[tuple[int, int]] = []
        for size in range(min(_MAX_NGRAM, len(words)), 0, -1):
            if not whole and size == len(words):
                continue
            for start in range(len(words) - size + 1):
                span = range(start, start + size)
                if covered.intersection(span):
                    continue
                text = question[words[start][0] : words[start + size - 1][1]]
                key = match_key(text)
                if not key or all(words[i][2] in STOPWORDS for i in span):
                    continue
                if cased and not any(name_like[i] for i in span):
                    continue
                if is_value([words[i][2] for i in span]) and not (size == 1
                                                                  and start in numbers):
                    continue  # a year, a date, an amount: a value, never a seed
                if key in self.by_key:
                    covered.update(span)
                    matches.extend(EntityMatch(i, self.names[i], text, 1.0, "exact")
                                   for i in self.by_key[key])
                elif (len(key) >= _FUZZY_MIN_CHARS and words[start][2] not in STOPWORDS
                      and not is_code(key)):
                    fuzzy_candidates.append((start, size))
        matches.extend(self._fuzzy(question, words, fuzzy_candidates, covered))
        # "coach 402" may be a name of its own ("Coach 402" heads a report) while registers
        # write the coach as "402": the number is linked as well
        matches.extend(EntityMatch(i, self.names[i], words[n][2], 1.0, "exact")
                       for n in sorted(numbers) if whole
                       for i in self.by_key.get(words[n][2], []))
        question_key = normalize(question)
        for key, index in self.unspaced:
            if key in question_key:
                matches.append(EntityMatch(index, self.names[index], key, 1.0, "substring"))
        # An entity named twice is listed once (its first, best-ranked match).
        unique: dict[int, EntityMatch] = {}
        for match in matches:
            unique.setdefault(match.index, match)
        return list(unique.values())

    def _fuzzy(self, question: str, words: list[tuple[int, int, str]],
               spans: list[tuple[int, int]], covered: set[int]) -> list[EntityMatch]:
        found: list[EntityMatch] = []
        looked_up: dict[str, tuple[str, float] | None] = {}  # a repeated span is one lookup
        # Longer spans first, so "Johann Bernoull" wins over "Bernoull" alone.
        for start, size in sorted(spans, key=lambda s: -s[1]):
            span = range(start, start + size)
            if covered.intersection(span) or not self.keys:
                continue
            text = question[words[start][0] : words[start + size - 1][1]]
            key = match_key(text)
            if key not in looked_up:
                looked_up[key] = self.fuzzy.best(key, _FUZZY_CUTOFF)
            best = looked_up[key]
            if best is None:
                continue
            covered.update(span)
            found.extend(EntityMatch(i, self.names[i], text, best[1] / 100.0, "fuzzy")
                         for i in self.by_key[best[0]])
        return found

    def resolve(self, name: str) -> list[EntityMatch]:
        """Graph entities for a user-given name: exact key, else the best fuzzy match."""
        key = match_key(name)
        if key in self.by_key:
            return [EntityMatch(i, self.names[i], name, 1.0, "exact") for i in self.by_key[key]]
        if is_code(key):
            return []  # an identifier is this one or none
        best = self.fuzzy.best(key, 80.0)
        if best is None:
            return []
        return [EntityMatch(i, self.names[i], name, best[1] / 100.0, "fuzzy")
                for i in self.by_key[best[0]]]
