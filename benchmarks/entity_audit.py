"""Junk among the entities the product makes of a folder: ingest it with the defaults into a
temporary graph (offline extractor, no LLM) and sort every entity into one class, the first
of these that applies, judged against the documents' own text:

1. heading: the entity is written nowhere in the documents' text but in their heading
   lines, and is one of them or is written inside one (so "SCOPE" from "1. SCOPE" is one; a
   profile headed "Helen Ashby" whose name runs through the text is not). Heading lines are
   Markdown `#` lines; lines that are a block of their own, short (at most 10 words) and
   not ending as a sentence; numbered lines opening a block ("3.2 Responsibilities");
   short ALL-CAPS lines; and a PDF's running header and footer (a line found on two or more
   pages, digits aside). Compared case aside, with a section number ("3.2", "1."), a
   trailing colon and a page counter ("- page 2 of 3") taken off.
2. label: the entity ends with ":", or is the key of a `Key: value` line of some document
   (e-mail headers included: From, To, Date...; a key that is a date, as in "May: ...",
   is not), or starts with such a key and its colon ("Date: 3 June", "Owner: Tom"). A key
   that the documents' text also writes without a colon after it names something a
   document lists its facts under ("CA-2025-021: ...", "Gateshead: 14 engineers"): not a
   label.
3. glued: written on no single line, but across a line break where one of the two lines is
   a heading line, a `Key: value` line, a list item or a table row, or the first ends a
   sentence ("Grace Whitlow Outcome" from "...: Grace Whitlow" over "Outcome: ..."). A name
   carried over by the wrapping of its paragraph is not glued. Also glued: a name with a
   hyphen that the documents write nowhere but with spaces around that hyphen, as a dash
   between two things ("Finding 2-Gas" from "Finding 2 - Gas safety records"; added at
   the fourteenth stop, when the extractor stopped making such names).
4. fragment: a proper part of a longer name or identifier: every time the documents write the
   entity, on one line, it is glued to more of a name: a hyphen and more characters ("PX"
   of "PX-310", "2025" of "CA-2025-017"), a possessive and a capitalised word ("Miller" of
   "Miller's Wharf"), "&", "and" or "of" and a capitalised word when the entity's own word
   there is capitalised too ("Hollis" of "Hollis and Grant Foods"), or a capitalised word
   or identifier right beside it (a legal form after it, "Ltd", "plc", and a courtesy title
   before it, "Mrs", are not more of the name: the extractor leaves them out on purpose;
   the courtesy title was added after the thirteenth stop). A capitalised word counts as
   part of a name when it stands inside a sentence, or opens one and is written nowhere in
   lower case; function words ("The", "In"), month and weekday names never do. The word
   after a list item's key that opens a line ("R3 Replace all the fans") opens the item,
   as after "1." (added at the fifteenth stop, when the extractor stopped making "R3
   Replace" and made "R3"). A word set off by punctuation (a label's colon, a comma) is
   not glued to the entity. An entity written nowhere on one line is not judged here.
5. date or number: dates, periods, amounts and numbers alone (digits, month and weekday
   names, units, currency: "8 April 2025", "£38,400", "30 per cent"; periods and lengths,
   "36 months", "124 miles", counted here only since the twenty-fourth stop: before, they
   fell to "generic" against this very definition), and datelines: a date
   with up to three more words ("Coalville, 8 April 2025", "Thu 27 Feb 2025").
6. generic: a single word that is a common word: written in lower case somewhere in the
   documents (e-mail addresses and links aside), or a function word, or in this script's
   fixed list of words that documents capitalise (`COMMON`), or a quarter or half year
   ("Q3", "H1"); also such a word after a count or a section number ("120 people",
   "6.2 The"; but "Line 4" names a line and is kept).

Everything else is kept. "Junk" is every class but dates and numbers alone, which are
reported apart (the extractor makes them entities on purpose: its numbers rule); the junk
share is given with and without them, with the share of relations that have a junk end.
Also listed: kept entities written on no single line of any document (a name wrapped with
its paragraph, or text the reader joined). "Kept" is not "good": a name with a verb or a
role glued on ("Visit the Redditch", "Helen Ashby, Managing Director") or a table row
("Keller Polymers B.V. 88 71") is in no class, so the junk share is a lower bound.

The rules were written before the first run. After it, only mistakes against these
definitions were mended (a count read as a section number, a label's colon read as part
of a name, e-mail addresses counted as lower-case words, function words and month names
taken for names, and, at the twenty-eighth stop, when the extractor began to keep a span
of days or times as one value, a span read as a dateline: "6 to 8 October 2025" is a
period); none was changed to lower the count. They are meant to be explainable,
not kind: a reader should agree with each sample line.

Usage (from the repository root):
  .venv/bin/python benchmarks/entity_audit.py DIR [--sample N] [--json FILE]
  .venv/bin/python benchmarks/entity_audit.py --set dev      # builds benchmarks/business/dev
                                                    # (or --set dev_b, --set holdout)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from hopgraph.api import GraphRAG
from hopgraph.ingest.fields import same_table
from hopgraph.ingest.loaders import read_text
from hopgraph.ingest.reading import folder_files, kind_of

CLASSES = ("heading", "label", "glued", "fragment", "dateline", "date or number", "generic",
           "kept")
JUNK = ("heading", "label", "glued", "fragment", "dateline", "generic")
HEADING_WORDS = 10
MONTHS = frozenset(re.findall(r"\S+", """
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec"""))
WEEKDAYS = frozenset(re.findall(r"\S+", """
    monday tuesday wednesday thursday friday saturday sunday
    mon tue tues wed thu thur fri sat sun"""))
UNITS = frozenset(re.findall(r"\S+", """
    mm cm m km g kg t tonne tonnes ml l litre litres µm um db a hz kw kwh per cent percent % £
    € $ million millions thousand bn k h hr hrs min mins s am pm st nd rd th degrees co2e
    minute minutes hour hours day days week weeks month months year years mile miles metre
    metres meter meters"""))  # periods and lengths (added at the twenty-fourth stop)
FUNCTION = frozenset(re.findall(r"\S+", """
    a an the in on at for by from to of and or but if when after before since under with our
    we it its he she they his her their this that these those each every both all any no not
    as so dear please thanks hi i you me us him them my your yes what where who whom which how
    why there here then than also only just is are was were be been has have had do does did
    will would can could should must shall one two three four five six seven eight nine ten"""))
# Words documents capitalise as headings, labels and table cells: common words even when
# the folder never writes them in lower case.
COMMON = frozenset(re.findall(r"\S+", """
    about account accounts action actions address agenda agreement annual apologies appendix
    approval approved attendees audit background board budget business changes chair
    closing comments complaint complaints conclusion confidential contact contacts contents
    context contract customer customers date decision decisions definitions delivery
    description details discussion distribution document draft equipment evidence executive
    external findings general highlights history incident incidents internal introduction
    issue issues items key management manager material materials meeting method minutes
    next notes objectives opening operations other outcome outlook overview owner part
    parts people performance period place policy present price prices priorities procedure
    product products profile profiles purpose quality questions reason records reference
    references report responsibilities result results review revision risks schedule scope
    section service services severity signed site sites staff standards status stock
    subject summary supplier suppliers supplies team terms timeline total training type
    update updates urgent volume warranty year"""))

_NUMBERED = re.compile(r"^(?:\d+\.(?:\d+\.?)*|[A-Z]\.)\s+")  # "1. ", "3.2 ", "A. "
_PAGE_COUNTER = re.compile(r"\s*[-–—|,]?\s*page\s+\d+(?:\s+(?:of|/)\s+\d+)?\s*$", re.I)
_KEY = re.compile(r"^\s*(?:[-*]\s+)?(?:\*\*)?([A-Za-z][\w .'’/()&-]{0,40}?)(?:\*\*)?:"
                  r"(?:\*\*)?\s+\S")
_WORD = re.compile(r"[^\W\d_][\w'’]*")
_TOKEN = re.compile(r"[\w£€$%µ]+(?:[.,:/'’-][\w]+)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;|#(>\-–—•]\s*|^\s*\d+(?:\.\d+)*\.?\s+)$")
# A courtesy title before a person's name is not part of it either: the extractor leaves it
# out on purpose ("Mrs Patricia Doyle" is Patricia Doyle; docs/extraction.md).
HONORIFICS = frozenset(["mr", "mrs", "ms", "mx", "dr", "prof"])
LEGAL_FORMS = frozenset(["ltd", "limited", "plc", "inc", "llc", "llp", "gmbh", "ag", "bv", "b.v",
                         "nv", "sa", "corp", "co"])
_ITEM_KEY = re.compile(r"\s*[A-Z]{1,3}\d{1,3}")
_CONNECTOR = re.compile(r"^\s+(?:&|and|of|de)(?:\s+the)?\s+(\S+)")
_LEFT_CONNECTOR = re.compile(r"(\S+)\s+(?:&|and|of|de)(?:\s+the)?\s+$")
_QUARTER = re.compile(r"^(?:Q[1-4]|H[12])$")
_ADDRESS = re.compile(r"\S+@\S+|\w+://\S+|www\.\S+")  # lower case there proves nothing
_COUNTED = re.compile(r"^\d+(?:[.,]\d+)*\.?\s+(\S+)$")  # "120 people", "6.2 The"
_LIST_OR_ROW = re.compile(r"^\s*(?:[-*•]\s|\|)")


@dataclass
class Corpus:
    """What the audit knows of the documents: their lines, heading lines, keys and words."""

    lines: list[str] = field(default_factory=list)      # every line, PDF pages included
    body: list[str] = field(default_factory=list)       # lines that are not headings
    heading_lines: list[str] = field(default_factory=list)
    headings: set[str] = field(default_factory=set)     # normalised heading lines
    breaks: list[tuple[str, str]] = field(default_factory=list)  # (line, next line), glued
    keys: set[str] = field(default_factory=set)         # lower-cased keys of Key: value lines
    lower: set[str] = field(default_factory=set)        # words written in lower case


def heading_key(line: str) -> str:
    """A heading line or an entity as compared: markup, a leading number, a page counter
    and a trailing colon taken off, spacing collapsed, lower case."""
    line = re.sub(r"^#+\s*|[*_`]+", "", line.strip())
    line = _PAGE_COUNTER.sub("", _NUMBERED.sub("", line))
    return " ".join(line.rstrip(":").split()).lower()


def read_corpus(folder: Path) -> Corpus:
    """The lines of every .md/.txt/.pdf file of the folder (PDFs page by page, as pypdf
    gives them, before the product's normalisation)."""
    corpus = Corpus()
    for path in folder_files(folder):
        kind = kind_of(path)
        if kind == "pdf":
            import pypdf

            pages = [(page.extract_text() or "").splitlines()
                     for page in pypdf.PdfReader(path).pages]
            _add_pdf(corpus, pages)
        elif kind in ("md", "txt"):
            _add_text(corpus, read_text(path).splitlines(), markdown=kind == "md")
    for line in corpus.lines:
        corpus.lower.update(w.lower() for w in _WORD.findall(_ADDRESS.sub(" ", line))
                            if w[0].islower())
        key = _KEY.match(line)
        if key and len(key.group(1).split()) <= 5 and not _date_or_number(key.group(1)):
            corpus.keys.add(key.group(1).strip().lower())
    return corpus


def _add_breaks(corpus: Corpus, lines: list[str], headings: list[bool]) -> None:
    """The line breaks a name should not cross (see "glued" in the module docstring)."""
    for number in range(len(lines) - 1):
        first, second = lines[number].strip(), lines[number + 1].strip()
        if first and second and (
                headings[number] or headings[number + 1] or first.endswith((".", "!", "?", ":"))
                or any(_KEY.match(line) or _LIST_OR_ROW.match(line)
                       for line in (first, second))):
            corpus.breaks.append((first, second))


def _add_text(corpus: Corpus, lines: list[str], markdown: bool) -> None:
    flags = []
    for number, line in enumerate(lines):
        before = lines[number - 1].strip() if number else ""
        after = lines[number + 1].strip() if number + 1 < len(lines) else ""
        text = line.strip()
        heading = bool(text) and not _row(lines, number) and (
            (markdown and text.startswith("#"))
            or (not before and not after and _short(text))
            or (_short(text) and ((not before and _NUMBERED.match(text)) or _caps(text))))
        _add_line(corpus, line, heading)
        flags.append(heading)
    _add_breaks(corpus, lines, flags)


def _add_pdf(corpus: Corpus, pages: list[list[str]]) -> None:
    def shape(line: str) -> str:
        return re.sub(r"\d+", "#", line.strip())

    seen = Counter(shape(line) for page in pages for line in set(page) if line.strip())
    lengths = sorted(len(line) for page in pages for line in page if line.strip())
    full = lengths[int(0.9 * (len(lengths) - 1))] if lengths else 0
    lines: list[str] = []
    flags: list[bool] = []
    for page in pages:
        for number, line in enumerate(page):
            text = line.strip()
            previous = page[number - 1].strip() if number else ""
            standalone = (not previous or previous.endswith((".", ":", "!", "?"))) \
                and len(text) < 0.6 * full
            heading = bool(text) and (
                (len(pages) > 1 and seen[shape(text)] >= 2)
                or (_short(text) and (standalone or _NUMBERED.match(text) or _caps(text))))
            _add_line(corpus, line, heading)
            lines.append(line)
            flags.append(heading)
    _add_breaks(corpus, lines, flags)  # pages run on: a name can cross a page's footer


def _add_line(corpus: Corpus, line: str, heading: bool) -> None:
    corpus.lines.append(line)
    if heading:
        corpus.heading_lines.append(line)
        corpus.headings.add(heading_key(line))
    else:
        corpus.body.append(line)


def _row(lines: list[str], number: int) -> bool:
    """Whether line `number` is a row of a table laid out with spaces (aligned with the
    line before or after it): "23/04/2025 00:00   -14.6   HIGH   SHUT" is in capitals, not
    a heading."""
    line = lines[number]
    return (number > 0 and same_table(lines[number - 1], line)) or (
        number + 1 < len(lines) and same_table(line, lines[number + 1]))


def _short(text: str) -> bool:
    return (len(text.split()) <= HEADING_WORDS and not text.endswith((".", ",", ";", "!", "?"))
            and ": " not in text)


def _caps(text: str) -> bool:
    letters = [ch for ch in text if ch.isalpha()]
    return len(letters) >= 2 and all(ch.isupper() for ch in letters)


def classify(entity: str, corpus: Corpus) -> str:
    """The entity's class (see the module docstring)."""
    name = " ".join(entity.split())
    if not _written(name, corpus.body) and (heading_key(name) in corpus.headings
                                            or _written(name, corpus.heading_lines)):
        return "heading"
    if _label(name, corpus):
        return "label"
    if _glued(name, corpus):
        return "glued"
    if _fragment(name, corpus):
        return "fragment"
    dated = _date_or_number(name)
    if dated:
        return dated
    if _generic(name, corpus):
        return "generic"
    return "kept"


def _written(name: str, lines: list[str]) -> bool:
    pattern = _occurrence(name)
    return any(pattern.search(line) for line in lines)


def _occurrence(name: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w])" + re.escape(name) + r"(?![\w])")


def _label(name: str, corpus: Corpus) -> bool:
    if name.endswith(":"):
        return True
    lowered = name.lower()
    if any(lowered.startswith(key + ":") for key in corpus.keys):
        return True
    # A key that the text also writes as a name, not before a colon, names something a
    # document lists its facts under ("CA-2025-021: ...", "Gateshead: 14 engineers").
    return lowered in corpus.keys and not _named_in_text(name, corpus.body)


def _named_in_text(name: str, lines: list[str]) -> bool:
    pattern = re.compile(r"(?<![\w])" + re.escape(name) + r"(?![\w])(?!\s*:)")
    return any(pattern.search(line) for line in lines)


def _glued(name: str, corpus: Corpus) -> bool:
    if _written(name, corpus.lines):
        return False
    if "-" in name:  # "Finding 2-Gas" from "Finding 2 - Gas safety records"
        dashed = re.compile(r"(?<![\w])" + r"(\s+-\s+|-)".join(
            re.escape(part) for part in name.split("-")) + r"(?![\w])")
        if any(any(hyphen != "-" for hyphen in match.groups())
               for line in corpus.lines for match in dashed.finditer(line)):
            return True
    pattern = _occurrence(name)
    for first, second in corpus.breaks:
        joined = f"{first} {second}"
        if any(m.start() < len(first) < m.end() for m in pattern.finditer(joined)):
            return True
    return False


def _fragment(name: str, corpus: Corpus) -> bool:
    pattern = _occurrence(name)
    found = False
    for line in corpus.lines:
        for match in pattern.finditer(line):
            found = True
            if not _extended(line, match.start(), match.end(), corpus):
                return False
    return found


def _extended(line: str, start: int, end: int, corpus: Corpus) -> bool:
    """Whether this occurrence is glued to more of a name on either side."""
    right, left = line[end:], line[:start]
    if re.match(r"-[\w]", right) or re.search(r"[\w]-$", left):
        return True
    possessive = re.match(r"['’]s\s+(\S+)", right)
    if possessive and _name_token(possessive.group(1), True, corpus):
        return True
    joined = _CONNECTOR.match(right)  # "Hollis" of "Hollis and Grant": capitalised both sides
    if joined and _capitalised(line[start:end].split()[-1]) \
            and _name_token(joined.group(1), True, corpus):
        return True
    following = re.match(r"\s(\S+)", right)
    # a list item's key opening the line ("R3  Replace all ...") is its marker, as "1." is
    if following and _name_token(following.group(1), not _ITEM_KEY.fullmatch(line[:end]),
                                 corpus):
        return True
    owner = re.search(r"(\S+?)['’]s\s+$", left)  # "Miller's " before "Wharf"
    if owner and _name_token(owner.group(1), _inside(left[:owner.start()]), corpus,
                             before=True):
        return True
    joined_left = _LEFT_CONNECTOR.search(left)
    if joined_left and _capitalised(line[start:end]) and _name_token(joined_left.group(1),
                                   _inside(left[:joined_left.start()]), corpus, before=True):
        return True
    previous = re.search(r"(\S+)\s$", left)
    return bool(previous) and _name_token(previous.group(1), _inside(left[:previous.start()]),
                                          corpus, before=True)


def _capitalised(word: str) -> bool:
    return word[:1].isupper()


def _inside(before: str) -> bool:
    """Whether a word after this text stands inside a sentence (not at its start)."""
    return not _SENTENCE_START.search(before)


def _name_token(token: str, inside: bool, corpus: Corpus, before: bool = False) -> bool:
    """Whether a word beside an occurrence is part of a name with it. A word before it that
    ends in punctuation ("Severity:", "Ltd,") is set off from it; so is a word after it that
    starts with punctuation."""
    if (before and re.search(r"[,.;:!?)\]]$", token)) or re.match(r"[(\[\"“]", token):
        return False
    token = token.strip(",.;:!?()\"'’”“[]")
    if not token or token.lower() in FUNCTION or token.lower() in MONTHS \
            or token.lower() in WEEKDAYS or (not before and token.lower() in LEGAL_FORMS) \
            or (before and token.lower() in HONORIFICS):
        return False  # a legal form after a company's name is not part of it ("Keller Ltd")
    if re.search(r"[A-Za-z]", token) and re.search(r"\d", token):
        return True  # an identifier: KX-4, B97
    if not token[0].isupper():
        return False
    return inside or token.lower() not in corpus.lower


def _date_or_number(name: str) -> str | None:
    # A span of days or times ("6 to 8 October 2025", "01:00–04:00") is one period.
    name = re.sub(r"(?<=\d)\s*(?:\bto\b|[–-])\s*(?=\d)", "-", name)
    tokens = _TOKEN.findall(name.lower())
    if not tokens:
        return "date or number" if re.search(r"\d", name) else None
    plain = [t for t in tokens if not _dateish(t)]
    if not plain:
        return "date or number"
    dated = any(t in MONTHS or t in WEEKDAYS for t in tokens) and any(
        any(ch.isdigit() for ch in t) for t in tokens)
    return "dateline" if dated and len(plain) <= 3 else None


def _dateish(token: str) -> bool:
    token = token.strip(".,")
    return (token in MONTHS or token in WEEKDAYS or token in UNITS
            or bool(re.fullmatch(r"[£€$]?[\d.,:/'’-]+(?:st|nd|rd|th|s|am|pm|%)?", token)))


def _generic(name: str, corpus: Corpus) -> bool:
    counted = _COUNTED.match(name)
    if counted:
        name = counted.group(1)
    if " " in name:
        return False
    if _QUARTER.match(name):
        return True
    word = name.strip(".,:;").lower()
    return word.isalpha() and (word in COMMON or word in FUNCTION or word in corpus.lower)


@dataclass
class Audit:
    """Entities by class, and relations with a junk end."""

    classes: dict[str, list[str]]
    relations: int
    junk_relations: int
    not_on_a_line: list[str]


def audit(folder: Path, work: Path) -> Audit:
    """Ingest the folder with the defaults and classify every entity of the graph."""
    corpus = read_corpus(folder)
    with GraphRAG(uri=str(work / "audit.db"), graph="audit") as rag:
        rag.add_files([folder])
        names = list(rag.graph.entity_names)
        ends = [(r.subject, r.object) for r in rag.graph.relations]
    found = {name: classify(name, corpus) for name in names}
    classes: dict[str, list[str]] = {c: [] for c in CLASSES}
    for name, kind in found.items():
        classes[kind].append(name)
    junk = {i for i, name in enumerate(names) if found[name] in JUNK}
    return Audit(classes, len(ends), sum(s in junk or o in junk for s, o in ends),
                 sorted(n for n in classes["kept"]
                        if not _written(" ".join(n.split()), corpus.lines)))


def report(result: Audit, sample: int) -> str:
    """Counts, shares and a sample of each class, then the junk share, as markdown."""
    total = sum(len(v) for v in result.classes.values())
    lines = ["| class | entities | share |", "|---|---:|---:|"]
    for kind in CLASSES:
        lines.append(f"| {kind} | {len(result.classes[kind])} | "
                     f"{100 * len(result.classes[kind]) / max(total, 1):.1f}% |")
    junk = sum(len(result.classes[k]) for k in JUNK)
    with_numbers = junk + len(result.classes["date or number"])
    lines += ["", f"entities: {total}; junk (every class but dates and numbers alone and "
              f"kept): {junk} ({100 * junk / max(total, 1):.1f}%); with dates and numbers "
              f"alone: {with_numbers} ({100 * with_numbers / max(total, 1):.1f}%)",
              f"relations with a junk end: {result.junk_relations} of {result.relations} "
              f"({100 * result.junk_relations / max(result.relations, 1):.1f}%)",
              f"kept, but written on no single line: {len(result.not_on_a_line)}", ""]
    for kind in CLASSES:
        names = sorted(result.classes[kind], key=str.lower)
        step = max(1, len(names) // sample) if names and sample else 1
        shown = names[::step][:sample]
        lines.append(f"{kind} ({len(names)}): " + " · ".join(repr(n) for n in shown))
    lines.append("kept, not on one line: "
                 + " · ".join(repr(n) for n in result.not_on_a_line[:sample]))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", help="a folder of .md/.txt/.pdf documents")
    parser.add_argument("--set", help="instead of a folder: build benchmarks/business/SET "
                                      "(dev, dev_b to dev_f, holdout)")
    parser.add_argument("--sample", type=int, default=15,
                        help="names shown per class (0: the counts only)")
    parser.add_argument("--json", metavar="FILE", help="also write every entity's class")
    args = parser.parse_args()
    if args.sample < 0:
        parser.error(f"--sample {args.sample}: give 0 or more names per class")
    if bool(args.folder) == bool(args.set):
        sys.exit("give a folder or --set")
    with tempfile.TemporaryDirectory(prefix="hopgraph-audit-") as tmp:
        folder = Path(args.folder) if args.folder else Path(tmp) / "docs"
        if args.set:
            from business import SETS, build

            build(SETS / args.set, folder)
        result = audit(folder, Path(tmp))
    print(report(result, args.sample))
    if args.json:
        Path(args.json).write_text(json.dumps({"classes": result.classes,
                                               "not_on_a_line": result.not_on_a_line},
                                              indent=1, ensure_ascii=False) + "\n",
                                   encoding="utf-8")


if __name__ == "__main__":
    main()
