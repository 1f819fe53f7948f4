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
  the same passage ("Euler" in a passage naming "Leonhard Euler") is that entity.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise

from syntok import segmenter

from hopgraph.ingest.documents import Chunk
from hopgraph.ingest.loaders import source_doc_id
from hopgraph.records import LoadReport, PassageRecord, Triplet


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


def _extends(tokens: list[str], j: int, rules: Rules) -> int:
    """How many tokens from `j` on continue the mention before `j` (0: it ends there)."""
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
    followed = j + 1 < len(tokens) and _is_cap(tokens[j + 1])
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
    while i < n:
        value = tokens[i]
        starts = (_is_cap(value) and not (i == 0 and value.lower() in OPENERS)
                  and value.lower() not in PRONOUNS) or (rules.numbers and _is_number(value))
        if not starts or not _WORD.search(value):
            i += 1
            continue
        j = i + 1
        while j < n and (step := _extends(tokens, j, rules)):
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


def extract(title: str | None, text: str, rules: Rules | None = None,
            report: OfflineReport | None = None) -> list[Triplet]:
    """Triplets of one passage (`text` without its title line)."""
    rules = rules or Rules()
    report = report if report is not None else OfflineReport()
    title = title_entity(title or "") or None
    triplets: list[Triplet] = []
    analyzed = [[(token.spacing, token.value) for token in sentence]
                for paragraph in segmenter.analyze(text) for sentence in paragraph]
    sentences = [[value for _, value in sentence] for sentence in analyzed]
    report.sentences += len(sentences)
    found = [mentions(tokens, rules, [space for space, _ in sentence])
             for tokens, sentence in zip(sentences, analyzed, strict=True)]
    names = _surnames({m.text for ms in found for m in ms}) if rules.surnames else {}
    for tokens, sentence_mentions in zip(sentences, found, strict=True):
        resolved = [names.get(m.text, m.text) for m in sentence_mentions]
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
                triplets.append(Triplet(title, predicate, name))
        if not rules.pairs:
            continue
        chain = list(zip(sentence_mentions, resolved, strict=True))
        if rules.title and title is not None and _refers_to_title(tokens):
            chain.insert(0, (_Mention(title, 0, 1), title))
        for (left, left_name), (right, right_name) in pairwise(chain):
            between = _words(tokens[left.end:right.start])
            if not between or left_name == right_name:
                continue
            predicate = " ".join(between[:MAX_PREDICATE_WORDS]).lower()
            triplets.append(Triplet(left_name, predicate, right_name))
    report.passages += 1
    report.triplets += len(triplets)
    if not triplets:
        report.without_triplets += 1
    return triplets


_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")


def title_entity(title: str) -> str:
    """The entity a title names: without a trailing "(...)" that tells namesakes apart
    ("David Smith (director)" is the "David Smith" other passages mention)."""
    title = title.strip()
    return _DISAMBIGUATION.sub("", title) or title


def _surnames(names: set[str]) -> dict[str, str]:
    """One-word names that end exactly one longer name of the passage -> that name."""
    longer: dict[str, set[str]] = {}
    for name in names:
        parts = name.split()
        if len(parts) > 1 and parts[-1][:1].isupper():
            longer.setdefault(parts[-1], set()).add(name)
    return {short: next(iter(full)) for short, full in longer.items()
            if len(full) == 1 and short in names}


def extract_corpus(items: Iterable[dict[str, str]], source: str, rules: Rules | None = None
                   ) -> tuple[LoadReport, OfflineReport]:
    """Records from `{"title", "text"}` items (a benchmark corpus): the passage is
    `title + "\\n" + text`, as the OpenIE files have it."""
    load, stats = LoadReport(path=source), OfflineReport()
    for i, item in enumerate(items):
        title, text = item.get("title", ""), item.get("text", "")
        if not isinstance(text, str) or not text.strip():
            load.skip_row(f"{source}:[{i}]", "no text")
            continue
        passage = f"{title}\n{text}" if title else text
        load.records.append(PassageRecord(passage, extract(title, text, rules, stats),
                                          metadata={"title": title}, source=f"{source}:[{i}]"))
    return load, stats


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def document_title(path: str, text: str) -> str:
    """A raw document's title: its first Markdown heading, else its first line when that is
    short and has no final full stop, else the file name without its suffix."""
    heading = _HEADING.search(text)
    if heading:
        return heading.group(1).strip()
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if first and len(first) <= 80 and not first.endswith((".", "!", "?", ":")):
        return first
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name


def extract_chunks(chunks: Iterable[Chunk], titles: dict[str, str], rules: Rules | None = None
                   ) -> tuple[LoadReport, OfflineReport]:
    """Records of raw-document chunks (each passage is the chunk's text; its document is the
    file it came from), triplets from the offline extractor with the file's title."""
    load, stats = LoadReport(path="offline extractor"), OfflineReport()
    for chunk in chunks:
        triplets = extract(titles.get(chunk.doc), chunk.text, rules, stats)
        load.records.append(PassageRecord(
            chunk.text, triplets, doc_id=source_doc_id(chunk.doc),
            metadata={"source": chunk.doc, "chunk": chunk.index, "title": titles.get(chunk.doc)},
            source=chunk.id))
    if stats.passages and stats.triplets == 0:
        stats.notes.append("no triplets found (text without capitalized names, e.g. Chinese or "
                           "Japanese): the passages still serve naive and lexical retrieval")
    return load, stats
