"""Quoted replies in a plain-text e-mail, read as the messages they quote.

A reply quotes the message it answers with "> " before each of its lines, under a line
that says who wrote it ("On Mon, 3 Mar 2025 at 16:40, Sam Reid <sam@example.com> wrote:").
Read as they are, the markers end up inside sentences once wrapped lines are joined ("the
probe log shows > the reefer unit"), and the attribution line reads as prose. So a quoted
block loses its markers, a level at a time (a quote inside a quote is read the same way),
and its attribution line becomes the header of the message it quotes, written as a mail
client writes a forwarded message's:

    From: Sam Reid <sam@example.com>
    Date: Mon, 3 Mar 2025 at 16:40
    Subject: Claim CLM-25-0412      (the reply's subject without its "RE:")

The rest of the ingest then reads that block as it reads any e-mail header inside a text
(its sender, date and subject as relations, `layout_relations`). The subject is the reply's
own without its "RE:" / "FW:" prefixes, which is what the quoted message was titled; a reply
with no subject gives none.
"""

from __future__ import annotations

import re

from hopgraph.ingest.fields import bare_subject, field_line

_QUOTED = re.compile(r"^[ \t]{0,3}>[ \t]?")
_WROTE = re.compile(
    r"^(?:on\s+(?P<date>.+?),?\s+)?(?P<who>[^\s<>,:\d][^<>:,\d]*?)\s*(?P<address>[<(\[][^<>()\[\]]*"
    r"[>)\]])?\s+wrote\s*:\s*$", re.I)
MAX_ATTRIBUTION_LINES = 3  # a client wraps "On ..., Name <address> wrote:" over 2 or 3 lines
MIN_QUOTED_LINES = 2  # one line opening with ">" is not a quoted message


def unquote(text: str, subject: str | None = None) -> str:
    """The text with each quoted block (lines opening with ">") unquoted, under a header
    made from its attribution line when it has one; the text itself when it quotes
    nothing. `subject`: the thread's, for a quote inside a quote (else read from the
    text's own header)."""
    lines = text.split("\n")
    if sum(1 for line in lines if _QUOTED.match(line)) < MIN_QUOTED_LINES:
        return text
    if subject is None and not _mail(lines):
        return text  # "> 10 days" lines in a table of thresholds quote nothing
    subject = _subject(lines) if subject is None else subject
    out: list[str] = []
    index = 0
    while index < len(lines):
        if not _QUOTED.match(lines[index]):
            out.append(lines[index])
            index += 1
            continue
        end = index
        while end < len(lines) and _QUOTED.match(lines[end]):
            end += 1
        block = [_QUOTED.sub("", line, count=1) for line in lines[index:end]]
        if end - index < MIN_QUOTED_LINES:
            out.extend(block)
        else:
            header = _attribution(out)
            if header is not None and subject:
                header.append(f"Subject: {subject}")
            body = unquote("\n".join(block), subject).strip("\n")
            out.extend(["", *(header or []), "", body, ""])
        index = end
    return "\n".join(out)


def _mail(lines: list[str]) -> bool:
    """Whether the text is an e-mail: it opens with a From line, or a line says who wrote
    what it quotes."""
    opening = next((line for line in lines if line.strip()), "")
    pair = field_line(opening)
    return (pair is not None and pair[0].lower() == "from") or any(
        _WROTE.match(line.strip()) for line in lines if "wrote" in line.lower())


def _subject(lines: list[str]) -> str:
    """The subject of the message's own header (the key-value lines it opens with)."""
    for line in lines:
        if not line.strip():
            break
        pair = field_line(line)
        if pair is not None and pair[0].lower() == "subject":
            return bare_subject(pair[1])
    return ""


def _attribution(out: list[str]) -> list[str] | None:
    """The header for a quoted block, from the attribution line(s) just before it (taken
    off `out`), or None when the block has none."""
    while out and not out[-1].strip():
        out.pop()
    for count in range(1, MAX_ATTRIBUTION_LINES + 1):
        if count > len(out):
            break
        said = _WROTE.match(" ".join(line.strip() for line in out[-count:]))
        if said is None or len(said.group("who").split()) > 5:
            continue
        del out[-count:]
        header = [f"From: {said.group('who')} {said.group('address') or ''}".rstrip()]
        if said.group("date"):
            header.append(f"Date: {said.group('date')}")
        return header
    return None
