"""How a message ends and the one it answers begins: a signature block, a sign-off's name
alone on its line, a reply's attribution line. `structure` reads them so that no signer's
name becomes a heading, least of all one over the quoted message of someone else.
"""

from __future__ import annotations

import re

from hopgraph.ingest.lines import heading_line, key_value
from hopgraph.ingest.roles import job_title, person_like

MAX_SIGNATURE_LINES = 6  # the name, the post, the company, an address, a telephone, a site
_RULE = re.compile(r"^\s*[-_=*]{3,}")  # "-----Original Message-----", "________"
# A reply's attribution line, quoted or not: "On 14 Mar 2025, at 16:22, Declan Brannock
# wrote:", "> On Tue, 10 Jun 2025 at 09:15, Nadia Rahman <n.rahman@...> wrote:"
_REPLY = re.compile(r"^[>\s]*On\s[^\n]{1,160}?\swrote:", re.IGNORECASE)


def replies(text: str) -> bool:
    """Whether a text opens with a reply's attribution line: the message quoted below it
    is another's."""
    return _REPLY.match(text) is not None


def signs_off(line: str, signer: str) -> bool:
    """Whether a line alone over a signature is the sign-off's name: the signer's first
    name, or more of their name ("Tom" or "Tom E." over "Tom Ellery"); not a heading such
    as "Contacts" over a last "name over post" block."""
    words, names = line.split(), signer.split()
    return heading_line(line) and 0 < len(words) <= 3 and bool(names) \
        and words[0].rstrip(".,") == names[0]


def signature(lines: list[str], after: str) -> bool:
    """Whether a block (its lines) signs a message: a name over a job title ("Sam Reid"
    over "Customer Service Lead, Harrowgate Cold Chain Ltd"), a few lines more at most (the
    company, an address, a telephone), and then nothing or the next message (`after`, the
    text the next block opens with: a header line, a rule, or a reply's "On ... wrote:"
    line). Its name is no heading over what follows (a reply's quoted message is not the
    signer's); the extractor reads the name and the title together (`layout_relations`).
    A staff list's "name over post" block, with the person's text after it, is a
    heading."""
    if not 2 <= len(lines) <= MAX_SIGNATURE_LINES:
        return False
    return (person_like(lines[0].strip())
            and job_title(lines[1].partition(",")[0]) is not None
            and (not after.strip() or key_value(after) or _RULE.match(after) is not None
                 or replies(after)))
