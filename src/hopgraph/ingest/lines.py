"""What one line of a document is: the end of a line wrapped by hand or by the page, a
heading, a list item, or a laid-out line (a key–value line, a table row).

The readers and the structure share these tests, so a PDF's lines and a text file's lines
are judged alike. A line is wrapped when the next line's first word would not have fitted
after it within the text's line width: what a writer's editor, a mail program or a page
does, and what a short line written on purpose (a heading, a name in a list, an address)
never does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hopgraph.ingest.fields import field_line, same_table
from hopgraph.ingest.mentions import GREETINGS, SIGN_OFFS

MAX_HEADING_CHARS = 80
MAX_HEADING_WORDS = 12
WRAPPED_LINE = 30  # a line shorter than this was never wrapped (a name, a heading, "Thanks,")
# A wrapped line and the next word together pass the width: a text wrapped by characters
# (a mail program, an editor) never fills a line beyond its width, whose estimate cannot
# exceed it; a PDF set in a proportional type fits more or fewer characters to a line.
FULL_LINE = 1.0
FULL_PRINTED_LINE = 0.9
CONTINUED_LINE = 0.5  # a line at least this share of the width, then lower case: wrapped
WIDTH_QUANTILE = 0.9  # the text's line width: this quantile of its lines' lengths

_ENDS_SENTENCE = (".", "!", "?", ":", ";")
_CLOSING = "\"'”’)]»"
_ABBREVIATION = re.compile(r"(?:^|\s)[A-Z][a-z]{0,2}\.$|(?:[A-Z]\.){2,}$")
_HYPHENATED = re.compile(r"[^\W\d_]-$")
_ITEM = re.compile(r"^\s*(?:[-*+•‣▪–]\s+|\(?\d{1,3}[.)]\s+|\(?[a-z][.)]\s+)")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
# A heading's number: "3.", "3.2", "3.2.1", "IV.", "Section 4", "Part II", "Appendix B".
_NUMBER = (r"(?:(?:section|part|chapter|article|clause|schedule|appendix|annex)\s+"
           r"(?:\d{1,3}(?:\.\d{1,3})*|[IVXLC]{1,6}|[A-Z])\b\.?"
           r"|\d{1,3}(?:\.\d{1,3})+\.?|\d{1,3}\.?|[IVX]{1,5}\.)")
_NUMBERED = re.compile(rf"^(?P<number>{_NUMBER})(?:\s*[-–—:.]\s*|\s+)(?P<rest>\S.*)$", re.I)
_CLAUSE = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3})+\.?|\d{1,3}\.)\s+[(\"'“‘]?[A-Z]")


def ends_sentence(line: str) -> bool:
    """Whether a line ends as a sentence does (so it is not a heading)."""
    line = line.rstrip().rstrip(_CLOSING)
    if _ABBREVIATION.search(line):
        return False  # "Moerlein Brewing Co.", "Smith Jr.": a name, not a sentence
    return line.endswith(_ENDS_SENTENCE)


def join_wrapped(text: str, line: str) -> str:
    """`line` appended to `text` as the continuation of a wrapped line: a word broken with a
    hyphen at the line end is mended when the next line goes on in lower case."""
    if not text:
        return line
    if _HYPHENATED.search(text) and line[:1].islower():
        return text[:-1] + line
    return f"{text} {line}"


def laid_out(line: str) -> bool:
    """A key–value line or a table row: a line of its own, never a wrapped line's end or a
    heading."""
    return bool(_TABLE_ROW.match(line)) or key_value(line)


def key_value(line: str) -> bool:
    """A key–value line (`fields.field_line`). A "key" with a bracket left open is the start
    of a sentence ("Victoria Falls (Tokaleya Tonga: Mosi-oa-Tunya) is a waterfall")."""
    pair = field_line(line)
    return pair is not None and pair[0].count("(") == pair[0].count(")")


def list_item(line: str) -> bool:
    """A bulleted or numbered list item ("- Anna Berg", "2. Check the seal", "(b) ...")."""
    return bool(_ITEM.match(line))


def width_of(lines: Iterable[str]) -> int:
    """The line width of a text: a long line's length, the longest few aside (URLs, rows)."""
    lengths = sorted(len(line) for line in lines if line.strip() and not laid_out(line))
    return lengths[int(WIDTH_QUANTILE * (len(lengths) - 1))] if lengths else 0


def wrapped(line: str, following: str, width: int, full: float = FULL_LINE) -> bool:
    """Whether `following` goes on with `line`, cut by the line width `width`: the next
    word would not have fitted (within `full` of the width), or a long line goes on in lower
    case. A key–value line, a table row, a list item or a numbered clause never goes on from
    the line before it (a key–value line's value may go on to the next line)."""
    if (width <= 0 or not following or list_item(following) or numbered_clause(following)
            or _TABLE_ROW.match(line) or _TABLE_ROW.match(following)
            or same_table(line, following)):
        return False
    if key_value(following) and (key_value(line) or ends_sentence(line)
                                 or " " in following.split(":", 1)[0]):
        return False  # a key–value line; "Smith: ..." after "...echoed by Vincent" goes on
    word = following.split(None, 1)[0]
    if _shape(word) == _shape(line.split(None, 1)[0]) and any(ch.isdigit() for ch in word):
        return False  # rows that open alike ("IR-2319 ...", "IR-2322 ..."): a table's lines
    if len(line) >= WRAPPED_LINE and len(line) + 1 + len(word) > full * width:
        return True
    return (following[:1].islower() and not ends_sentence(line)
            and len(line) >= CONTINUED_LINE * width)


def _shape(word: str) -> str:
    """A word's shape: "IR-2319" and "KP-5562" are "A-9", "12/03/2025" is "9/9/9"."""
    return re.sub(r"[^\W\d_]+", "A", re.sub(r"\d+", "9", word))


def heading_number(line: str) -> tuple[str, str] | None:
    """(number, words) of a numbered heading's line ("3.2 Responsibilities",
    "Section 4 – Fees"), else None."""
    found = _NUMBERED.match(line.strip())
    if not found or not found.group("rest")[:1].isalpha():
        return None
    return found.group("number"), found.group("rest")


def numbered_clause(line: str) -> bool:
    """A line opening with a clause or item number ("3.1 A supplier...", "2. Check...")."""
    return bool(_CLAUSE.match(line))


def all_caps(line: str) -> bool:
    """A line in capitals with a word of three letters or more ("1. SCOPE", "INCIDENT
    REPORT"); a code alone ("IR-2341") is not."""
    letters = [ch for ch in line if ch.isalpha()]
    return (bool(letters) and all(ch.isupper() for ch in letters)
            and re.search(r"(?<![\w-])[^\W\d_]{3,}(?![\w-])", line) is not None)


_SIGN_OFF = re.compile(rf"(?:{'|'.join(sorted(SIGN_OFFS))}|thank you|(?:kind|best|warm) "
                       r"(?:regards|wishes)|many thanks|yours (?:sincerely|faithfully|truly))\b",
                       re.IGNORECASE)


def greeting(line: str) -> bool:
    """Whether a line is an e-mail's greeting or sign-off ("Hello Helen", "Hi all", "Thanks,
    Helen", "Kind regards"): a heading's form, but no heading where no paragraph follows it
    (`structure`; a title may still be one: "Hey Jude", "Thank You")."""
    words = line.split()
    return 0 < len(words) <= 4 and (words[0].lower() in GREETINGS or bool(_SIGN_OFF.match(line)))


_SALUTATION = re.compile(r"^(?:dear|hello|hi)\b[^.!?\n]{0,60}[,:]?$", re.IGNORECASE)


def salutation(line: str) -> bool:
    """Whether a line opens a letter or an e-mail to its reader ("Dear Ms Garside,")."""
    return _SALUTATION.match(line.strip()) is not None


def salutation_block(first_lines: list[str]) -> int:
    """Of a text's blocks (given by their first lines), the one a letter's salutation opens
    ("Dear Sir or Madam,"), when one after the first does and another block follows; else 0.
    What stands between the letterhead and it is the addressee, the date and the
    references, whose short lines head nothing."""
    for number, line in enumerate(first_lines[1:-1], start=1):
        if line.rstrip().endswith(",") and salutation(line):
            return number
    return 0


_BOLD = re.compile(r"^\s{0,3}(\*\*|__)(?P<inner>[^*_].*?)\1\s*:?\s*$")


MD_ITEM = re.compile(r"^\s*(?:[-*+•‣▪–]\s+|\d{1,3}[.)]\s+)")  # a Markdown list item


def body_heading(line: str) -> str | None:
    """The heading a line of Markdown body text (a block of its own) is by its form, else
    None: in capitals, or numbered as a heading, not as a list item ("3.2 Scope", "Section
    4 – Fees"; "1. Scope" is an item of a list); or set in bold alone ("Scope" of
    "**Scope**", "1. Scope" of "__1. Scope:__"), as a Word document without heading styles
    marks its headings, but not a bold sentence ("**Do not reuse.**")."""
    found = _BOLD.match(line)
    if found is not None:
        inner = found.group("inner").strip().rstrip(":").strip()
        return inner if heading_line(inner) else None
    if strong_heading(line) and (all_caps(line) or not MD_ITEM.match(line)):
        return line
    return None


def heading_line(line: str) -> bool:
    """Whether a line may be a heading: short, opening with a capital, a digit or a heading's
    number, not a sentence, a list item that is a sentence, or a laid-out line."""
    line = line.strip()
    if not line or len(line) > MAX_HEADING_CHARS:
        return False  # (checked first: a line of megabytes is never split into words here)
    words = line.split()
    if len(words) > MAX_HEADING_WORDS:
        return False
    if ends_sentence(line) or line.endswith(",") or _TABLE_ROW.match(line):
        return False
    numbered = heading_number(line)
    if key_value(line) and not (numbered and numbered[0][:1].isalpha()):
        return False  # "Incident: IR-2341" is a field; "Section 4: Fees" a heading
    if numbered is not None:
        return numbered[1][:1].isupper()
    return (line[:1].isupper() or line[:1].isdigit()) and not list_item(line)


_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_DATED = re.compile(rf"(?<![\w/])(?:\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?|\d{{1,2}}[:.]\d{{2}}\s*[ap]m"
                    rf"|\d{{1,2}}:\d{{2}}|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\.?\s+\d{{4}}"
                    rf"|{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,\s*\d{{4}})(?![\w/])", re.I)


def dated(line: str) -> bool:
    """Whether a line gives a day or a time ("Printed 20/03/2025", "Thursday 22 May 2025,
    6.30pm", "Exported from TransPlan 06/05/2025 09:12 by slund"): a document's dateline,
    not a line of its title ("Annual Report 2024", "Quality review, July 2025" give
    neither)."""
    return _DATED.search(line) is not None


# A telephone number (nine digits or more in groups: "01632 960 200", "+44 (0)113 496 0000"),
# an e-mail or web address, a UK postcode ("RY1 4BD") or a US state and ZIP ("OH 43215")
_CONTACT = re.compile(r"(?:\+?\(?\d[\d ()-]{7,}\d)|@\w|\bwww\.|https?://"
                      r"|\b[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}\b|\b[A-Z]{2}\s+\d{5}(?:-\d{4})?\b")


def contact(line: str) -> bool:
    """Whether a line gives a way to reach someone: a telephone number, an e-mail or web
    address, a postcode (a letterhead's "Aldermoor House, Beckside Road, Thornsby RY1 4BD",
    "Telephone 01632 960 200"). Under a company's name, such lines head no section."""
    return _CONTACT.search(line) is not None and sum(ch.isdigit() for ch in line) < 20


def strong_heading(line: str) -> bool:
    """A heading that says it is one by its form, wherever it stands: numbered with a point
    or a word ("2. SCOPE", "3.2 Responsibilities", "Section 4 – Fees") or in capitals
    ("INCIDENT REPORT"); "12 May 2023" is not."""
    return heading_line(line) and (all_caps(line) or section_number(line) is not None)


def section_number(line: str) -> tuple[str, str] | None:
    """(number, words) of a heading numbered as sections are, with a point or a word ("2.",
    "3.2", "Section 4"); a bare number ("25 August 2003 Mumbai bombings") is no such
    number."""
    numbered = heading_number(line)
    if numbered is None or not ("." in numbered[0] or numbered[0][:1].isalpha()):
        return None
    return numbered
