"""The offline extractor: raw text -> passages with triplets, no model, no network,
deterministic. The graph it builds is for the default method, which needs entities to
bridge through and relation texts that say how they are connected.

Rules (the ablation in docs/extraction.md measures each):
- names as `ingest.mentions` finds them (codes, possessives, "and"/"&"/"of" inside names,
  numbers only with their month or unit);
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
  pronoun or "The <noun>" is about the name the last sentence opened with ("The <noun>"
  after a blank line is not);
- "common words": a capitalized word opening a sentence, which the document also writes in
  lower case ("Staff meet on Fridays" beside "our staff"), is not a mention;
- a dateline opening a text (`LONDON, 3 June 2025 -`) is not read as names;
- layout (`ingest.fields`): key–value lines, e-mail headers and table rows (Markdown, or
  columns laid out with spaces) relate what they name (`ingest.layout_relations`); their
  keys are never names; an item that ends with its owner after a dash (an action in
  minutes: "Count specks on every lot — Marek Nowak, ongoing") links the owner to what the
  item names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

from hopgraph.ingest import fields
from hopgraph.ingest.layout_relations import layout_triplets
from hopgraph.ingest.mentions import (
    GAP,
    ITEM_KEY,
    PRONOUNS,
    WORD,
    Mention,
    Rules,
    is_code,
    is_number,
    mentions,
    sentences_of,
    set_of,
)
from hopgraph.ingest.names import regrouped, surnames, title_entity, without_verb
from hopgraph.ingest.vocabulary import Vocabulary, vocabulary_of
from hopgraph.records import Triplet

__all__ = ["MAX_PREDICATE_WORDS", "OfflineReport", "Rules", "Vocabulary", "extract",
           "mentions", "vocabulary_of"]

MAX_PREDICATE_WORDS = 6
TITLE_CONTEXT_WORDS = 4


@dataclass
class OfflineReport:
    """What the offline extractor found, for the summary."""

    passages: int = 0
    sentences: int = 0
    triplets: int = 0
    without_triplets: int = 0
    notes: list[str] = field(default_factory=list)


_DATELINE = re.compile(r"^\s*[A-Z][A-Za-z .'’-]{1,40},\s+(?:\d{1,2}\s+[A-Z][a-z]+|[A-Z][a-z]+\s+"
                       r"\d{1,2}),?\s+\d{4}\s*[-–—:]\s*")


def _words(tokens: list[str]) -> list[str]:
    return [t for t in tokens if WORD.search(t)]


def _refers_to_title(tokens: list[str]) -> bool:
    """A sentence that opens with a pronoun, or "The <noun>" (the film, the company)."""
    if not tokens:
        return False
    first = tokens[0].lower()
    return first in PRONOUNS or (first == "the" and len(tokens) > 1
                                 and tokens[1][:1].islower())


SUBJECT_DETERMINERS = set_of("the a an our its this their his her")


def _subject(tokens: list[str], found: list[Mention]) -> Mention | None:
    """The name a sentence opens with ("Maria Berg ...", "The Heron Arm ..."), if any."""
    for mention in found:
        first = tokens[mention.start]
        opening = mention.start == 0 or (
            mention.start == 1 and tokens[0].lower() in SUBJECT_DETERMINERS)
        if opening and not is_number(first):
            return mention
        break
    return None


GREETINGS = set_of("dear hi hello hey morning afternoon evening good attn attention")


def _greeting(tokens: list[str], found: list[Mention]) -> bool:
    """A line that only addresses someone ("Gemma,", "Dear Mr Reid,"): whom a letter is
    written to, not the topic of the sentences after it."""
    inside = {i for m in found for i in range(m.start, m.end)}
    addressed = tokens[-1] in (",", ":") or tokens[0].lower() in GREETINGS
    return bool(found) and addressed and all(
        i in inside or not WORD.search(t) or t.lower() in GREETINGS
        for i, t in enumerate(tokens))


def _layout(text: str, rules: Rules) -> fields.Layout:
    return fields.split(text) if rules.layout else fields.Layout(prose=text.split("\n"))


def prose_sentences(layout: fields.Layout | str, rules: Rules) -> list[list[tuple[str, str]]]:
    """The sentences the extractor reads in a text's prose, as (spacing, token) pairs. A line
    break left in the text separates items (a list, names in a column): each line is read on
    its own, so no sentence, pair or name runs from one item into the next."""
    return [sentence for sentence, _ in _prose(layout, rules)]


def _prose(layout: fields.Layout | str, rules: Rules
           ) -> list[tuple[list[tuple[str, str]], bool]]:
    """`prose_sentences`, each with whether it opens a paragraph (a blank line before it)."""
    if isinstance(layout, str):
        layout = _layout(layout, rules)
    found: list[tuple[list[tuple[str, str]], bool]] = []
    opening = True
    for line in layout.prose:
        if not line.strip():
            opening = True
            continue
        for sentence in sentences_of([_DATELINE.sub("", line, count=1)], rules):
            found.append((sentence, opening))
            opening = False
    return found


def _sentence_mentions(tokens: list[str], rules: Rules, spacing: list[str],
                       spaced_hyphens: bool) -> list[Mention]:
    """The rules' mentions, or with `rules.names` "spacy" or "both", spaCy's names or the
    rules' corrected by them (`ingest.spacy_names`)."""
    found = mentions(tokens, rules, spacing, spaced_hyphens)
    if rules.names == "rules":
        return found
    from hopgraph.ingest.spacy_names import corrected

    return [Mention(text, i, j) for text, i, j
            in corrected(tokens, spacing, [(m.start, m.end) for m in found], rules)]


_PHRASE_WORD = re.compile(r"[^\W\d_][\w'’-]*")


def common_phrase(name: str, vocabulary: Vocabulary) -> bool:
    """Whether a heading's name is a phrase of common words in sentence case ("Spare parts",
    "Complaints in 2025", "Notes on individual contracts"): its first word capitalized and
    one the ingest also writes in lower case, and no other word capitalized (the heading
    itself writes those in lower case). A heading in capitals of two words or more
    ("POST-INCIDENT REVIEW") is judged the same way, each of its words one the ingest
    writes in lower case. Such a heading is a part of a document, not an entity; "Rolling
    in the Deep" (a capital inside) and "Keller Polymers" are names."""
    words = _PHRASE_WORD.findall(name)
    if not words or not words[0][:1].isupper():
        return False
    if len(words) > 1 and all(w.isupper() and len(w) > 1 for w in words):  # not "F.I.R."
        return all(part in vocabulary.lower for w in words
                   for part in _LETTERS.findall(w.lower()))
    return not any(w[:1].isupper() for w in words[1:]) and words[0].lower() in vocabulary.lower


_LETTERS = re.compile(r"[^\W\d_]+")  # the parts of "POST-INCIDENT" the vocabulary holds


def extract(title: str | None, text: str, rules: Rules | None = None,
            report: OfflineReport | None = None, vocabulary: Vocabulary | None = None
            ) -> list[Triplet]:
    """Triplets of one passage (`text` without its title line). `vocabulary`: that of the
    texts ingested with it (default: this text's own)."""
    rules = rules or Rules()
    report = report if report is not None else OfflineReport()
    vocabulary = vocabulary_of([text]) if vocabulary is None else vocabulary
    title = title_entity(title or "") or None
    if title is not None and rules.common_words and common_phrase(title, vocabulary):
        title = None
    layout = _layout(text, rules)
    triplets: list[Triplet] = []
    triplets.extend(layout_triplets(layout, title, rules, vocabulary))
    read = _prose(layout, rules)
    analyzed = [sentence for sentence, _ in read]
    sentences = [[value for _, value in sentence] for sentence in analyzed]
    report.sentences += len(sentences)
    found = [regrouped(tokens, _drop_common(
                 tokens, _sentence_mentions(tokens, rules, [space for space, _ in sentence],
                                            vocabulary.spaced_hyphens),
                 vocabulary if rules.common_words else None, title,
                 [space for space, _ in sentence]), vocabulary)
             for tokens, sentence in zip(sentences, analyzed, strict=True)]
    names = surnames({m.text for ms in found for m in ms}) if rules.surnames else {}
    topic: str | None = None
    for tokens, sentence_mentions, (_, opening) in zip(sentences, found, read, strict=True):
        resolved = [names.get(m.text, m.text) for m in sentence_mentions]
        subject = _subject(tokens, sentence_mentions)
        subject_name = None if subject is None else names.get(subject.text, subject.text)
        if rules.title and title is not None:
            previous_end = 0
            for mention, name in zip(sentence_mentions, resolved, strict=True):
                # The words just before, back to the previous mention at most (crossing
                # it cost MuSiQue recall: benchmarks/RESULTS.md, "Figures moved from code
                # comments").
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
            if title is None and opening and tokens[0].lower() == "the":
                head = None  # "The heating plates..." after a blank line: a new thing, not
                # the name the last paragraph was about (a pronoun still refers back)
            if rules.title and head is not None and _refers_to_title(tokens):
                chain.insert(0, (Mention(head, 0, 1), head))
            for (left, left_name), (right, right_name) in pairwise(chain):
                between = _words(tokens[left.end:right.start])
                if not between or left_name == right_name:
                    continue
                predicate = " ".join(between[:MAX_PREDICATE_WORDS]).lower()
                triplets.append(Triplet(left_name, predicate, right_name))
        if rules.layout:
            triplets.extend(_owned(tokens, sentence_mentions, resolved))
        if subject_name is not None and not _greeting(tokens, sentence_mentions):
            topic = subject_name
    if vocabulary.people or vocabulary.first_names:  # "T.Whitcombe" of a change log, and
        # "Nadia" of an e-mail, are the Tom Whitcombe and the Nadia Farouk of the profiles
        triplets = [Triplet(full, t.predicate, other) for t in triplets
                    if (full := vocabulary.full_name(t.subject))
                    != (other := vocabulary.full_name(t.object))]
    report.passages += 1
    report.triplets += len(triplets)
    if not triplets:
        report.without_triplets += 1
    return triplets


_DASHES = frozenset("—–")
_AFTER_OWNER = frozenset(",;(")


def _owned(tokens: list[str], found: list[Mention], names: list[str]) -> list[Triplet]:
    """An item that ends with its owner after a dash, as minutes list their actions ("Count
    specks on every RB-118 lot from Keller Polymers — Marek Nowak, ongoing"): the owner is
    linked to each name of the item by the item's words before that name, its action (the
    pairs rule finds no words between the last name and the owner). Only a name that ends
    the item, or is followed by a comma, a semicolon or a bracket (a due date, a status),
    is an owner."""
    dash = max((i for i, t in enumerate(tokens) if t in _DASHES), default=None)
    owner = next((k for k, m in enumerate(found) if dash is not None and m.start == dash + 1),
                 None)
    if owner is None or (found[owner].end < len(tokens)
                         and tokens[found[owner].end] not in _AFTER_OWNER):
        return []
    linked = []
    for mention, name in zip(found[:owner], names[:owner], strict=True):
        action = _words(tokens[:mention.start])[:MAX_PREDICATE_WORDS]
        if action and name != names[owner]:
            linked.append(Triplet(names[owner], " ".join(action).lower(), name))
    return linked


# A label's colon, a column's bar, a dash (a spaced hyphen: `mentions.dashes`): the word
# after them opens a value or a phrase.
_VALUE_OPENERS = frozenset({":", "|", "-", "–", "—"})


def _opens_value(tokens: list[str], mention: Mention, vocabulary: Vocabulary) -> bool:
    """Whether a one-word mention opens a label's value ("Status: Approved at the Board",
    "Office 01632 960 418 | Mobile 07700 900 552") or a phrase after a dash ("Finding 2 -
    Gas safety records") and is a word the texts also write in lower case: capitalized
    because it opens the value, as a sentence's first word is."""
    word = tokens[mention.start]
    return mention.end - mention.start == 1 and mention.start > 0 \
        and tokens[mention.start - 1] in _VALUE_OPENERS \
        and word.istitle() and vocabulary.a_word(word)


def _opens_unsplit(tokens: list[str], mention: Mention, vocabulary: Vocabulary) -> bool:
    """Whether a one-word mention opens a sentence the splitter did not end the one before
    at ("... stopped at 03:58. Nobody noticed") and is capitalized for grammar only."""
    at = mention.start
    ended = tokens[at - 2] if at > 1 else ""  # a lower-case word or a figure, not "Mr" or "C"
    return mention.end - at == 1 and tokens[at - 1] == "." \
        and ((ended.isalpha() and ended.islower() and len(ended) > 1)
             or any(ch.isdigit() for ch in ended)) \
        and vocabulary.capitalized_for_grammar(tokens[at])


def _opens_after_key(tokens: list[str], spacing: list[str] | None, mention: Mention,
                     vocabulary: Vocabulary) -> bool:
    """Whether a one-word mention opens the text after a line's key and a gap of spaces (a
    log's "CHG-0966  Brought forward after PIR-2025-09", a timeline's "08:35  Index build
    cancelled") and is capitalized for grammar only: the key's note opens there."""
    at = mention.start
    return mention.end - at == 1 and at > 0 and spacing is not None \
        and GAP.search(spacing[at]) is not None \
        and all(not token.isalpha() or is_code(token) for token in tokens[:at]) \
        and vocabulary.capitalized_for_grammar(tokens[at])



def _reply_mark(tokens: list[str], mention: Mention) -> bool:
    """Whether a mention is a quoted e-mail subject's "RE:" or "FW:" (`fields.REPLY_MARKS`,
    which the e-mail header's subject is read without): no name."""
    return mention.end - mention.start == 1 and mention.end < len(tokens) \
        and tokens[mention.end] == ":" and tokens[mention.start].lower() in fields.REPLY_MARKS


def _drop_common(tokens: list[str], found: list[Mention], vocabulary: Vocabulary | None,
                 title: str | None, spacing: list[str] | None = None) -> list[Mention]:
    """Without a one-word mention opening the sentence ("Staff meet on Fridays", "Products
    ship in June") that the texts also write in lower case, or never capitalize inside a
    sentence: capitalized for grammar, not because it names something. A longer one that
    opens with such a word and "the" keeps the name after them. The same for a one-word
    mention opening a label's value (`_opens_value`); never a quoted subject's "RE:". A
    list item's key keeps such a word out of its name ("R3 Replace all ...": `R3`)."""
    found = [m for m in found if not _reply_mark(tokens, m)]
    if vocabulary is not None:
        found = [m for m in found if not _opens_value(tokens, m, vocabulary)
                 and not _opens_unsplit(tokens, m, vocabulary)
                 and not _opens_after_key(tokens, spacing, m, vocabulary)]
    if vocabulary is None or not found or found[0].start != 0 \
            or found[0].text == title or is_number(tokens[0]):
        return found
    word, first = tokens[0], found[0]
    if first.end == 1:
        return found[1:] if vocabulary.capitalized_for_grammar(word) else found
    # "R3 Replace all bathroom extract fans" (a PDF's text can lose the gap after a list
    # item's key): the key stays, the item's verb goes
    if first.end == 2 and ITEM_KEY.fullmatch(word) and tokens[1].istitle() \
            and vocabulary.capitalized_for_grammar(tokens[1]):
        return [Mention(word, 0, 1), *found[1:]]
    return [without_verb(tokens, first, vocabulary), *found[1:]]
