"""A document's structure: its sections (the headings above them) and their paragraphs.

Markdown headings are `#` lines (and setext underlines); in plain text and normalised PDF
text a heading is a short line of its own that does not end as a sentence does. Lines
wrapped by hand are joined; short lines (list items, names in a column, an address) keep
their line breaks, so nothing reads two of them as one name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hopgraph.ingest.fields import field_line
from hopgraph.ingest.reading import Document, ends_sentence, join_wrapped

MAX_HEADING_CHARS = 80
MAX_MARKDOWN_HEADING = 500  # a longer "# ..." line is text (a heading is in all its chunks)
MAX_HEADING_WORDS = 12
HEADLINE_WORDS = 5  # a heading this long with three lower-case words is a phrase, not a name
CONNECTORS = frozenset(re.findall(r"\w+", "of de von van der den la le du del da di dos das y "
                                  "the and in on at for to"))
WRAPPED_LINE = 40  # a line at least this long (and most of the block's width) was wrapped

# Words that name a part of a document, not a thing in the world: a heading made of these
# alone ("Staff profiles", "Products", "Press release") is context, never an entity.
GENERIC_HEADING_WORDS = frozenset(re.findall(r"\w+", """
    about abstract action actions agenda appendix answers attendees background benefits
    biography board budget careers changelog chapter conclusion conclusions contact contacts
    context customers decisions description details discussion employees executive faq features
    findings following general goals highlights history how introduction issues items key
    leadership links management meeting minutes milestones mission next news notes objectives
    overview partners people press pricing products product profile profiles purpose questions
    design offices office locations location contents
    references release releases requirements results review risks roadmap schedule scope
    section services specifications staff status steps summary suppliers supplier support team
    teams terms timeline updates us values what when where who why our the and of a an for to
    in on with at your its company organisation organization frequently asked update report
    contents table figures customer service
    """))


@dataclass
class Section:
    """Paragraphs under the same headings (outermost first; empty before any heading)."""

    headings: tuple[str, ...]
    paragraphs: list[str] = field(default_factory=list)

    @property
    def heading(self) -> str | None:
        """The section's own heading: the innermost one."""
        return self.headings[-1] if self.headings else None


_SECTION_NUMBER = re.compile(r"^\s*(?:(?:section|clause|part|article)\s+)?\d+(?:\.\d+)*[.)]?\s+",
                             re.IGNORECASE)
_ROLE = re.compile(r"\s+[—–-]\s+")  # "Grace Whitlow — Plant Manager": a name, then a role
_CODE_FIRST = re.compile(r"^([A-Za-z0-9]+(?:[-/.][A-Za-z0-9]+)+)\b")
LEGAL_FORM_WORDS = frozenset(["ltd", "limited", "inc", "plc", "llc", "llp", "gmbh", "ag", "sa",
                              "bv", "nv", "co", "corp"])


def names_something(heading: str | None) -> bool:
    """Whether a heading names an entity (a person, product, place: "Greencreek, Idaho",
    "Grace Whitlow — Plant Manager") rather than a part of the document ("Leadership",
    "1. Resin supply", "OPENING MEETING"); "Rolls-Royce plc" and "Riemann integral" name
    something."""
    if not heading or _SECTION_NUMBER.match(heading):
        return False  # a numbered section is a part of the document
    name = heading_entity(heading)
    words = re.findall(r"[^\W\d_][\w'’-]*", name)
    if not words:
        return bool(_CODE_FIRST.match(name))
    if len(words) > 1 and all(w.isupper() for w in words) and not _CODE_FIRST.match(name):
        return False  # an ALL-CAPS heading labels a section
    lower = [w for w in words if w[0].islower() and w not in CONNECTORS
             and w.lower() not in LEGAL_FORM_WORDS]
    if len(words) >= HEADLINE_WORDS and len(lower) >= 3:
        return False  # a headline ("Aurora Fisheries orders forty buoys"), not a name
    return not all(w.lower() in GENERIC_HEADING_WORDS for w in words)


def heading_entity(heading: str) -> str:
    """The name a heading gives: "About Brightwater Instruments" names Brightwater
    Instruments; "Grace Whitlow — Plant Manager" Grace Whitlow; "Account profile: Hollis
    Foods" Hollis Foods; "IR-2322, leaking bowls at Evesham" IR-2322 ("Greencreek, Idaho"
    stays whole)."""
    heading = heading.strip()
    code = _CODE_FIRST.match(heading)
    if code and any(ch.isdigit() for ch in code.group(1)) and \
            any(ch.isalpha() for ch in code.group(1)):
        return code.group(1)
    label, colon, rest = heading.partition(": ")
    if colon and rest and len(label.split()) <= 3:
        heading = rest.strip()  # "Account profile: Hollis Foods": a label, then the name
    heading = _ROLE.split(heading, maxsplit=1)[0]
    return re.sub(r"^(?:about|meet)\s+", "", heading, flags=re.IGNORECASE).strip() or heading


def sections(doc: Document) -> list[Section]:
    """The document's sections, in order; those with no paragraph are left out."""
    found = _markdown(doc.text) if doc.kind == "md" else _plain(doc.text)
    return [section for section in found if section.paragraphs]


_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+•‣▪–]\s+|\d{1,3}[.)]\s+)")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def _markdown(text: str) -> list[Section]:
    found = [Section(())]
    stack: list[tuple[int, str]] = []
    block: list[str] = []

    def flush() -> None:
        if block:
            found[-1].paragraphs.extend(_paragraphs(block))
            block.clear()

    def open_section(level: int, title: str) -> None:
        flush()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, _clean_heading(title)))
        found.append(Section(tuple(title for _, title in stack)))

    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            block.append(line)
            continue
        atx = None if fenced or len(line) > MAX_MARKDOWN_HEADING else _ATX.match(line)
        if fenced:
            block.append(line)
        elif atx:
            open_section(len(atx.group(1)), atx.group(2))
        elif (_SETEXT.match(line) and len(block) == 1 and not _BULLET.match(block[0])
              and len(block[0]) <= MAX_MARKDOWN_HEADING):
            title = block.pop()
            open_section(1 if line.strip()[0] == "=" else 2, title)
        elif not line.strip():
            flush()
        else:
            block.append(line)
    flush()
    return found


def _clean_heading(title: str) -> str:
    return re.sub(r"[*_`]+", "", title).strip()


def _plain(text: str) -> list[Section]:
    """Plain or PDF text: blocks between blank lines; a block opening with a heading-like
    line starts a section. The first heading is the document's title when another heading
    follows it with no paragraph between (then sections are under it)."""
    blocks = [block.splitlines() for block in re.split(r"\n\s*\n", text) if block.strip()]
    found = [Section(())]
    title: str | None = None
    for number, lines in enumerate(blocks):
        lines = [line.strip() for line in lines if line.strip()]
        if _heading_line(lines[0]) and (len(lines) > 1 or number + 1 < len(blocks)):
            heading = lines.pop(0)
            first = len(found) == 1 and not found[0].paragraphs
            if first and not lines and number + 1 < len(blocks) and \
                    _heading_line(blocks[number + 1][0].strip()) and title is None:
                title = heading  # a title line standing over the first section's heading
                continue
            found.append(Section((title, heading) if title else (heading,)))
        if lines:
            found[-1].paragraphs.extend(_paragraphs(lines))
    return found


def _heading_line(line: str) -> bool:
    if not 0 < len(line) <= MAX_HEADING_CHARS:
        return False  # before splitting it into words: a line may be megabytes long
    return (len(line.split()) <= MAX_HEADING_WORDS
            and not ends_sentence(line) and not line.endswith(",")
            and not _BULLET.match(line) and (line[:1].isupper() or line[:1].isdigit()))


def _laid_out(line: str) -> bool:
    """A key–value line or a table row: a line of its own, never a wrapped line's end."""
    return line.startswith("|") or field_line(line) is not None


def _paragraphs(lines: list[str]) -> list[str]:
    """One block's paragraphs: list items stay one per line (one paragraph for the list);
    wrapped lines are joined; a short line keeps its break."""
    lines = [line.strip() for line in lines if line.strip()]
    width = max(len(line) for line in lines)
    text = ""
    for previous, line in zip([None, *lines], lines, strict=False):
        if previous is None:
            text = line
        elif (not _BULLET.match(line) and len(previous) >= WRAPPED_LINE
              and len(previous) >= 0.6 * width and not _laid_out(line)):
            text = join_wrapped(text, line)
        else:
            text = f"{text}\n{line}"
    return [text]
