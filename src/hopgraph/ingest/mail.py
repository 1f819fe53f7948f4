"""An e-mail saved as a file (.eml, RFC 5322) as text, with the standard library's `email`.

The text opens with the header lines `reading.header_metadata` reads (From, To, Cc, Date,
Subject), so the message's metadata and its subject as the title over the text come the
same way as for an e-mail pasted into a text file. Then the body: its plain-text part, or
its HTML part read as a page is (`ingest.html_text`). Attachments are named on a last line,
not read.
"""

from __future__ import annotations

import email
import html
import re
from email import policy
from email.message import EmailMessage
from pathlib import Path

from hopgraph.errors import InputError
from hopgraph.ingest.html_text import html_markdown
from hopgraph.ingest.markdown import ReadText, one_line

HEADERS = ("From", "To", "Cc", "Date", "Subject")
MAX_EML_BYTES = 64 * 1024 * 1024  # a message is parsed whole, attachments and all


def read_eml(path: Path) -> tuple[ReadText, str]:
    """The message as text, and how its body is read: "md" (from HTML) or "txt"."""
    if path.stat().st_size > MAX_EML_BYTES:
        raise InputError(f"too large: an e-mail of {path.stat().st_size // 2**20} MB (at "
                         f"most {MAX_EML_BYTES // 2**20} MB)", where=str(path))
    try:
        with path.open("rb") as handle:
            message = email.message_from_binary_file(handle, policy=policy.default)
        header = [f"{name}: {one_line(str(message[name]))}" for name in HEADERS
                  if message[name] is not None and str(message[name]).strip()]
        body, kind = _body(message, path)
        attached = [part.get_filename() or part.get_content_type()
                    for part in message.iter_attachments()]
    except (LookupError, ValueError, TypeError, AttributeError) as exc:
        raise InputError(f"cannot read e-mail ({type(exc).__name__}: {exc})",
                         where=str(path)) from exc
    if not header:
        raise InputError("not an e-mail: no From, To, Date or Subject header", where=str(path))
    parts = ["\n".join(header), body.strip()]
    if attached:
        parts.append("Attachments: " + ", ".join(one_line(name) for name in attached))
    return ReadText("\n\n".join(part for part in parts if part) + "\n"), kind


def _body(message: EmailMessage, path: Path) -> tuple[str, str]:
    """The message's text: its plain-text part, else its HTML part as Markdown."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return "", "txt"
    content = part.get_content()
    if part.get_content_type() == "text/html":
        try:
            return html_markdown(content, path).text, "md"
        except InputError:  # no BeautifulSoup (the office extra): the text between the tags
            return _untagged(content), "txt"
    return content.replace("\r\n", "\n"), "txt"


def _untagged(markup: str) -> str:
    """HTML's text without a parser: scripts and styles dropped, a tag that ends a block
    made a line break, every other tag removed."""
    markup = re.sub(r"(?is)<(script|style)\b.*?</\1\s*>", " ", markup)
    markup = re.sub(r"(?i)<(?:br|/p|/div|/h[1-6]|/li|/tr)\b[^>]*>", "\n", markup)
    lines = html.unescape(re.sub(r"<[^>]*>", " ", markup)).splitlines()
    return "\n".join(one_line(line) for line in lines if line.strip())
