"""The offline extractor: raw text -> passages with triplets, no model, no network,
deterministic. The graph it builds is for the default method, which needs entities to
bridge through and relation texts that say how they are connected.

Rules (the ablation in docs/extraction.md measures each):
- sentences and tokens from syntok (a maintained rule-based segmenter);
- mentions: runs of capitalized tokens, with inner "of/de/von/the/..." between capitalized
  ones, acronyms, and numbers with the month or unit beside them; a capitalized function
  word opening a sentence ("The", "In", "He") is not a mention;
- "title": the passage's title stands for the sentences that refer back to it (opening with
  a pronoun or "The <noun>") and is linked to every mention of its passage, the predicate
  being the words just before the mention; a trailing "(...)" that tells namesakes apart is
  not part of the entity's name;
- "pairs": consecutive mentions of a sentence are linked by the words between them;
- "surnames" (off by default, measured): a one-word mention that ends a longer mention of
  the same passage ("Euler" in a passage naming "Leonhard Euler") is that entity;
- "own subject": a sentence that opens with a name other than the title ("The Heron Arm was
  designed by ...") is about that name: the words before its other mentions are that name's
  predicate, not the title's (the title is linked to them as "mentions");
- "topic": with no title (a section headed "Staff profiles"), a sentence opening with a
  pronoun or "The <noun>" is about the name the last sentence opened with;
- "common words": a capitalized word opening a sentence, which the document also writes in
  lower case ("Staff meet on Fridays" beside "our staff"), is not a mention;
- a mention never spans a line break (list items, names in a column).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise

from syntok import segmenter

from hopgraph.ingest.names import surnames, title_entity
from hopgraph.records import Triplet


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


CONNECTORS = _set("of de von van der den la le du del da di dos das y & the")
# Capitalized at a sentence start for grammar's sake, not because they name something.
OPENERS = _set("""a an the this that these those it its he she his her they their them we our
    i you in on at by for from with after before during when while since although though as
    if but and or so yet also however there here what which who whom whose where why how both
    each every many most some several other another such one two three under over between
    among into onto upon about against despite unlike following according""")
PRONOUNS = _set("he she it they his her its their him them")
MONTHS = _set("""january february march april may june july august september october november
    december jan feb mar apr jun jul aug sep sept oct nov dec""")
UNITS = _set("""million billion thousand hundred percent per cent km kilometres kilometers miles
    metres meters feet ft kg tonnes tons years year people inhabitants""")
MAX_PREDICATE_WORDS = 6
TITLE_CONTEXT_WORDS = 4
_WORD = re.compile(r"\w", re.UNICODE)
_SPACED_JOINER = re.compile(r"\s+([-'’])\s+")


@dataclass
class Rules:
    """Which rules run. `surnames` is off by default: measured on the dev questions it cost
    MuSiQue 2.3 R@2 and 1.3 R@5 and changed nothing on HotpotQA (docs/extraction.md, ablation)."""

    title: bool = True
    pairs: bool = True
    surnames: bool = False
    numbers: bool = True
    own_subject: bool = True
    topic: bool = True
    common_words: bool = True


@dataclass
class _Mention:
    text: str
    start: int  # token index in the sentence
    end: int  # one past the last token


@dataclass
class OfflineReport:
    """What the offline extractor found, for the summary."""

    passages: int = 0
    sentences: int = 0
    triplets: int = 0
    without_triplets: int = 0
    notes: list[str] = field(default_factory=list)


def _is_cap(value: str) -> bool:
    first = value[0]
    return first.isupper() or (first.isalpha() and not first.islower() and not first.isupper())


def _is_number(value: str) -> bool:
    return any(ch.isdigit() for ch in value) and not any(ch.isalpha() for ch in value[:1])


def _extends(tokens: list[str], j: int, rules: Rules, breaks: list[bool]) -> int:
    """How many tokens from `j` on continue the mention before `j` (0: it ends there; a line
    break before a token ends it too)."""
    if breaks[j]:
        return 0
    nxt, before = tokens[j], tokens[j - 1]
    lower = nxt.lower()
    if _is_cap(nxt) and lower not in PRONOUNS:
        return 1
    if rules.numbers:
        dated = _is_number(before) or before.lower() in MONTHS
        if (_is_number(nxt) or lower in MONTHS) and dated:
            return 1  # "12 May 1850"
        if _is_number(before) and lower in UNITS:
            return 1  # "5 million", "300 km"
    followed = j + 1 < len(tokens) and _is_cap(tokens[j + 1]) and not breaks[j + 1]
    if lower in CONNECTORS and followed and not _is_number(before):
        return 2  # "University of Copenhagen"
    if nxt in ("-", "'", "’") and followed:
        return 2
    return 0


def mentions(tokens: list[str], rules: Rules, spacing: list[str] | None = None
             ) -> list[_Mention]:
    """The mentions of one sentence's tokens (`spacing`: the text before each token, to
    write a mention as it was written; one space each by default)."""
    found: list[_Mention] = []
    i, n = 0, len(tokens)
    breaks = ["\n" in space for space in spacing] if spacing is not None else [False] * n
    while i < n:
        value = tokens[i]
        starts = (_is_cap(value) and not (i == 0 and value.lower() in OPENERS)
                  and value.lower() not in PRONOUNS) or (rules.numbers and _is_number(value))
        if not starts or not _WORD.search(value):
            i += 1
            continue
        j = i + 1
        while j < n and (step := _extends(tokens, j, rules, breaks)):
            j += step
        if spacing is None:
            text = " ".join(tokens[i:j])
        else:
            text = tokens[i] + "".join(spacing[k] + tokens[k] for k in range(i + 1, j))
        # Text tokenized before it reached us spaces out hyphens and apostrophes inside names
        # ("Saint - Denis"): the name is the same without the spaces.
        text = _SPACED_JOINER.sub(r"\1", text)
        found.append(_Mention(text, i, j))
        i = j
    return found


def _words(tokens: list[str]) -> list[str]:
    return [t for t in tokens if _WORD.search(t)]


def _refers_to_title(tokens: list[str]) -> bool:
    """A sentence that opens with a pronoun, or "The <noun>" (the film, the company)."""
    if not tokens:
        return False
    first = tokens[0].lower()
    return first in PRONOUNS or (first == "the" and len(tokens) > 1
                                 and tokens[1][:1].islower())


@dataclass(frozen=True)
class Vocabulary:
    """What the texts being ingested say of their words, for the "common words" rule: those
    they write in lower case, and the capitalized ones they write inside a sentence."""

    lower: frozenset[str]
    named: frozenset[str]


_INSIDE = re.compile(r"(?:(?<=[^\W_] )|(?<=[^\W_][,;:] ))([^\W\d_][\w'’-]*)")


def vocabulary_of(texts: Iterable[str]) -> Vocabulary:
    """The vocabulary of some texts (a passage, a document, a whole ingest)."""
    lower: set[str] = set()
    named: set[str] = set()
    for text in texts:
        lower.update(re.findall(r"\b[^\W\d_A-Z][^\W\d_]*", text))
        named.update(word for line in text.splitlines() for word in _INSIDE.findall(line)
                     if _is_cap(word))
    return Vocabulary(frozenset(lower), frozenset(named))


SUBJECT_DETERMINERS = _set("the a an our its this their his her")


def _subject(tokens: list[str], found: list[_Mention]) -> _Mention | None:
    """The name a sentence opens with ("Maria Berg ...", "The Heron Arm ..."), if any."""
    for mention in found:
        first = tokens[mention.start]
        opening = mention.start == 0 or (
            mention.start == 1 and tokens[0].lower() in SUBJECT_DETERMINERS)
        if opening and not _is_number(first):
            return mention
        break
    return None


def extract(title: str | None, text: str, rules: Rules | None = None,
            report: OfflineReport | None = None, vocabulary: Vocabulary | None = None
            ) -> list[Triplet]:
    """Triplets of one passage (`text` without its title line). `vocabulary`: that of the
    texts ingested with it (default: this text's own)."""
    rules = rules or Rules()
    report = report if report is not None else OfflineReport()
    title = title_entity(title or "") or None
    vocabulary = vocabulary_of([text]) if vocabulary is None else vocabulary
    triplets: list[Triplet] = []
    # A line break left in the text separates items (a list, names in a column): each line
    # is read on its own, so no sentence, pair or name runs from one item into the next.
    analyzed = [_from_first_word([(token.spacing, token.value) for token in sentence])
                for line in text.split("\n") if line.strip()
                for paragraph in segmenter.analyze(line) for sentence in paragraph]
    sentences = [[value for _, value in sentence] for sentence in analyzed]
    report.sentences += len(sentences)
    found = [_drop_common(tokens, mentions(tokens, rules, [space for space, _ in sentence]),
                          vocabulary if rules.common_words else None, title)
             for tokens, sentence in zip(sentences, analyzed, strict=True)]
    names = surnames({m.text for ms in found for m in ms}) if rules.surnames else {}
    topic: str | None = None
    for tokens, sentence_mentions in zip(sentences, found, strict=True):
        resolved = [names.get(m.text, m.text) for m in sentence_mentions]
        subject = _subject(tokens, sentence_mentions)
        subject_name = None if subject is None else names.get(subject.text, subject.text)
        if rules.title and title is not None:
            previous_end = 0
            for mention, name in zip(sentence_mentions, resolved, strict=True):
                # The words just before, back to the previous mention at most (measured:
                # crossing it, MuSiQue R@5 73.5 against 76.5).
                start = max(previous_end, mention.start - TITLE_CONTEXT_WORDS)
                previous_end = mention.end
                if name == title:
                    continue
                before = _words(tokens[start:mention.start])
                predicate = " ".join(before).lower() or "mentions"
                if rules.own_subject and subject_name not in (None, title) \
                        and mention is not subject:
                    predicate = "mentions"  # what the words say is the subject's, not the title's
                triplets.append(Triplet(title, predicate, name))
        if rules.pairs:
            chain = list(zip(sentence_mentions, resolved, strict=True))
            head = title if title is not None else (topic if rules.topic else None)
            if rules.title and head is not None and _refers_to_title(tokens):
                chain.insert(0, (_Mention(head, 0, 1), head))
            for (left, left_name), (right, right_name) in pairwise(chain):
                between = _words(tokens[left.end:right.start])
                if not between or left_name == right_name:
                    continue
                predicate = " ".join(between[:MAX_PREDICATE_WORDS]).lower()
                triplets.append(Triplet(left_name, predicate, right_name))
        if subject_name is not None:
            topic = subject_name
    report.passages += 1
    report.triplets += len(triplets)
    if not triplets:
        report.without_triplets += 1
    return triplets


def _from_first_word(sentence: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The sentence from its first word on: a list item's "-" or "1." does not make its
    first word any less the sentence's opening word."""
    for index, (_, value) in enumerate(sentence):
        if _WORD.search(value) and not (_is_number(value) and index + 1 < len(sentence)
                                        and sentence[index + 1][1] in (".", ")")):
            return sentence[index:]
    return sentence


def _drop_common(tokens: list[str], found: list[_Mention], vocabulary: Vocabulary | None,
                 title: str | None) -> list[_Mention]:
    """Without a one-word mention opening the sentence ("Staff meet on Fridays", "Products
    ship in June") that the texts also write in lower case, or never capitalize inside a
    sentence: capitalized for grammar, not because it names something."""
    if vocabulary is None or not found or found[0].start != 0 or found[0].end != 1 \
            or found[0].text == title or _is_number(tokens[0]):
        return found
    word = tokens[0]
    if word.lower() in vocabulary.lower or word not in vocabulary.named:
        return found[1:]
    return found
