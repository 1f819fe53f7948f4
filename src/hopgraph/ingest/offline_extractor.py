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
- a mention never spans a line break (list items, names in a column);
- "codes": an identifier written with hyphens or slashes between letters and digits
  (`IR-2322`, `CA-2025-014`, `KX-4`) is one token, so one name; a code starts a name of its
  own (`Incident IR-2322` names IR-2322) and capitalized words after it stay with it
  (`KX-4 Pro`);
- names hold a possessive before a capital (`Bramley's Fresh Kitchen`), `&` and `of`
  (`Orrin & Tate`, `Dairy Farmers of the Dales`), but not `of` after a company ending
  (`Harlow Plastics Ltd` of Brentmoor), and `and` when the ingest writes the whole name more
  than once or it ends as a company does (`Hollis and Grant Foods` beside `Tom and Priya`);
- "lone numbers" (off by default): a number alone ("410", "2025") is a name; by default
  only a number with the month or unit beside it is (a date, an amount), a value;
- a dateline opening a text (`LONDON, 3 June 2025 -`) is not read as names;
- layout (`ingest.fields`): key–value lines, e-mail headers and table rows relate what
  they name (`structure_triplets`); their keys are never names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise

from syntok import segmenter

from hopgraph.ingest import fields
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
# A company's legal form ends its name: `of` after one starts a place, not more of the name
# ("Harlow Plastics Ltd of Brentmoor"). `and` may join two names before one of these or of
# the words organisations end with ("Hollis and Grant Ltd", "Finance and Audit Board").
LEGAL_FORMS = _set("""ltd ltd. limited inc inc. incorporated llc llp plc gmbh ag sa bv b.v nv
    n.v co co. corp corp.""")
COMPANY_ENDINGS = LEGAL_FORMS | _set("""company corporation group holdings partners associates
    sons brothers board committee council trust foundation institute university society
    association agency authority department ministry""")
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
    codes: bool = True
    lone_numbers: bool = False
    layout: bool = True


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
    if lower in CONNECTORS and followed and not _is_number(before) and not (
            lower == "of" and before.lower() in LEGAL_FORMS):
        return 2  # "University of Copenhagen", not "Harlow Plastics Ltd of Brentmoor"
    if nxt in ("-", "'", "’", "'s", "’s") and followed:
        return 2  # "Saint-Denis", "Bramley's Fresh Kitchen"
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
            if rules.codes and is_code(tokens[j]) and not is_code(tokens[i]):
                break  # "Incident IR-2322": the code is the name
            j += step
        if spacing is None:
            text = " ".join(tokens[i:j])
        else:
            text = tokens[i] + "".join(spacing[k] + tokens[k] for k in range(i + 1, j))
        # Text tokenized before it reached us spaces out hyphens and apostrophes inside names
        # ("Saint - Denis"): the name is the same without the spaces.
        text = _SPACED_JOINER.sub(r"\1", text)
        if rules.lone_numbers or j - i > 1 or not _is_number(value) or is_code(value):
            found.append(_Mention(text, i, j))
        i = j
    return found


_CODE = re.compile(r"^[A-Za-z0-9]+(?:[-/.][A-Za-z0-9]+)+$")


def is_code(token: str) -> bool:
    """An identifier: letters and digits joined by hyphens, slashes or dots, with a capital
    letter and a digit ("IR-2322", "KX-4", "SW-K4P-0453"; not "2023-24" or "v2.1")."""
    return (bool(_CODE.match(token)) and any(ch.isdigit() for ch in token)
            and any(ch.isupper() for ch in token))


def _merge_codes(sentence: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(spacing, token) pairs with the pieces of each code joined: syntok writes "IR-2322"
    as "IR" and "2322", the hyphen being the second's spacing ("BFK-C-0119": three)."""
    merged: list[tuple[str, str]] = []
    run: list[tuple[str, str]] = []

    def close() -> None:
        whole = run[0][1] + "".join(spacing + value for spacing, value in run[1:])
        if len(run) > 1 and is_code(whole):
            merged.append((run[0][0], whole))
        else:
            merged.extend(run)
        run.clear()

    for spacing, value in sentence:
        if run and spacing in ("-", "/", ".") and value[:1].isalnum() \
                and run[-1][1][-1:].isalnum():
            run.append((spacing, value))
            continue
        if run:
            close()
        run.append((spacing, value))
    if run:
        close()
    return merged


_DATELINE = re.compile(r"^\s*[A-Z][A-Za-z .'’-]{1,40},\s+(?:\d{1,2}\s+[A-Z][a-z]+|[A-Z][a-z]+\s+"
                       r"\d{1,2}),?\s+\d{4}\s*[-–—:]\s*")


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
    # "A and B C" names written more than once, or ending as a company does (`_joined`).
    joined: frozenset[str] = frozenset()


_INSIDE = re.compile(r"(?:(?<=[^\W_] )|(?<=[^\W_][,;:] ))([^\W\d_][\w'’-]*)")


def vocabulary_of(texts: Iterable[str]) -> Vocabulary:
    """The vocabulary of some texts (a passage, a document, a whole ingest)."""
    lower: set[str] = set()
    named: set[str] = set()
    pairs: dict[str, int] = {}
    for text in texts:
        lower.update(re.findall(r"\b[^\W\d_A-Z][^\W\d_]*", text))
        named.update(word for line in text.splitlines() for word in _INSIDE.findall(line)
                     if _is_cap(word))
        for found in _AND_NAMES.finditer(text):
            pairs[found.group(0)] = pairs.get(found.group(0), 0) + 1
    joined = {name for name, count in pairs.items()
              if count > 1 or name.rsplit(" ", 1)[-1].lower() in COMPANY_ENDINGS}
    return Vocabulary(frozenset(lower), frozenset(named), frozenset(joined))


_NAME_WORD = r"[A-Z][\w'’&-]*(?:\.\w+)*"  # "B.V" inside a name, not a sentence's full stop
_NAME_WORDS = rf"{_NAME_WORD}(?: (?:of |the |& )?{_NAME_WORD})*"
_AND_NAMES = re.compile(rf"(?<![\w'’-]){_NAME_WORDS} and {_NAME_WORDS}(?![\w'’-])")


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
    layout = fields.split(text) if rules.layout else fields.Layout(prose=text.split("\n"))
    triplets: list[Triplet] = []
    if layout.records or layout.tables:
        triplets.extend(structure_triplets(layout, title, rules, vocabulary))
    # A line break left in the text separates items (a list, names in a column): each line
    # is read on its own, so no sentence, pair or name runs from one item into the next.
    analyzed = _sentences([_DATELINE.sub("", line, count=1) for line in layout.prose], rules)
    sentences = [[value for _, value in sentence] for sentence in analyzed]
    report.sentences += len(sentences)
    found = [_joined(tokens, _drop_common(
                 tokens, mentions(tokens, rules, [space for space, _ in sentence]),
                 vocabulary if rules.common_words else None, title), vocabulary)
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


def _sentences(lines: list[str], rules: Rules) -> list[list[tuple[str, str]]]:
    """Each line's sentences as (spacing, token) pairs, from their first word on."""
    found = []
    for line in lines:
        if not line.strip():
            continue
        for paragraph in segmenter.analyze(line):
            for sentence in paragraph:
                pairs = [(token.spacing, token.value) for token in sentence]
                found.append(_from_first_word(_merge_codes(pairs) if rules.codes else pairs))
    return found


def names_in(text: str, rules: Rules, vocabulary: Vocabulary) -> list[str]:
    """The names a short text (a field's value, a table cell) holds, in order; a one-word
    name the ingest also writes in lower case ("Major", "Open") is a word, not a name."""
    names: list[str] = []
    for sentence in _sentences([text], rules):
        tokens = [value for _, value in sentence]
        found = mentions(tokens, rules, [space for space, _ in sentence])
        names.extend(m.text for m in _joined(tokens, found, vocabulary)
                     if " " in m.text or m.text.lower() not in vocabulary.lower
                     or is_code(m.text))
    return list(dict.fromkeys(names))


MAX_VALUE_WORDS = 5


def _objects(value: str, rules: Rules, vocabulary: Vocabulary) -> list[str]:
    """What a field's value or a table cell relates to, part by part (split at commas and
    semicolons): its codes and its other names, a short part without codes that names
    something being a name as a whole ("Recycled PET flake", "United Kingdom"); else a
    short value with a digit (a date, an amount)."""
    objects: list[str] = []
    for part in re.split(r"[;,](?!\d)", value):
        part = part.strip().rstrip(".")
        if not part:
            continue
        names = names_in(part, rules, vocabulary)
        codes = [name for name in names if is_code(name)]
        others = [name for name in names if not is_code(name)]
        objects.extend(codes)
        if others and not codes and len(part.split()) <= MAX_VALUE_WORDS and "(" not in part:
            objects.append(part)
        elif others:
            objects.extend(others)
        elif not codes and (found := _value(part)) is not None:
            objects.append(found)
    return list(dict.fromkeys(objects))


def _value(text: str) -> str | None:
    """A short value with a digit in it (a date, an amount: "7 May 2025"), as written."""
    text = text.strip().rstrip(".;,")
    if any(ch.isdigit() for ch in text) and len(text.split()) <= 4:
        return text
    return None


def structure_triplets(layout: fields.Layout, title: str | None, rules: Rules,
                       vocabulary: Vocabulary) -> list[Triplet]:
    """Triplets from a chunk's key–value records and table rows (`ingest.fields`)."""
    triplets: list[Triplet] = []
    subject = title
    for record in layout.records:
        if record.is_email:
            triplets.extend(_email(record, rules, vocabulary))
            continue
        first = _objects(record.fields[0][1], rules, vocabulary)
        if len(first) == 1:
            subject = first[0]
        if subject is None:
            continue
        for key, value in record.fields:
            triplets.extend(Triplet(subject, key.lower(), name)
                            for name in _objects(value, rules, vocabulary) if name != subject)
    for table in layout.tables:
        for row in table.rows:
            heads = _objects(row[0], rules, vocabulary) if row else []
            if len(heads) != 1:
                continue
            for header, cell in zip(table.header[1:], row[1:], strict=False):
                predicate = header.lower().strip() or "has"
                triplets.extend(Triplet(heads[0], predicate, name)
                                for name in _objects(cell, rules, vocabulary)
                                if name != heads[0])
    return triplets


def _email(record: fields.Record, rules: Rules, vocabulary: Vocabulary) -> list[Triplet]:
    """An e-mail's headers: the sender wrote to each recipient, about what the subject
    names, on its date."""
    by_key = [(key.lower(), value) for key, value in record.fields]
    senders = [n for key, value in by_key if key == "from"
               for n in names_in(value, rules, vocabulary)]
    if not senders:
        return []
    triplets: list[Triplet] = []
    for key, value in by_key:
        predicate = fields.EMAIL_KEYS.get(key)
        if predicate is None or key == "from":
            continue
        objects = names_in(value, rules, vocabulary)
        if key in ("date", "sent"):
            objects = [v for v in [_value(value)] if v is not None]
        triplets.extend(Triplet(senders[0], predicate, name) for name in objects
                        if name != senders[0])
    return triplets


def _joined(tokens: list[str], found: list[_Mention], vocabulary: Vocabulary
            ) -> list[_Mention]:
    """Two names joined by "and" made one where the ingest writes them as one name
    (`Vocabulary.joined`)."""
    if len(found) < 2 or not vocabulary.joined:
        return found
    out = [found[0]]
    for mention in found[1:]:
        last = out[-1]
        if tokens[last.end:mention.start] == ["and"] and \
                f"{last.text} and {mention.text}" in vocabulary.joined:
            out[-1] = _Mention(f"{last.text} and {mention.text}", last.start, mention.end)
        else:
            out.append(mention)
    return out


_CLAUSE_NUMBER = re.compile(r"^\d{1,3}(?:\.\d{1,3})+\.?$")


def _from_first_word(sentence: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The sentence from its first word on: a list item's "-" or "1." does not make its
    first word any less the sentence's opening word, nor does a clause's number ("3.1 A
    supplier must...", where "3.1 A" is no quantity)."""
    if (len(sentence) > 1 and _CLAUSE_NUMBER.match(sentence[0][1])
            and sentence[1][1][:1].isupper()):
        sentence = sentence[1:]
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
