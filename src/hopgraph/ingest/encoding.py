"""How the bytes of a text file become text: UTF-8, or UTF-16/UTF-32 when a byte-order mark
says so, or UTF-16 without one when its zero bytes show it (Latin-script text saved as
"Unicode" has a zero in every other byte).

Windows editors save "Unicode" text as UTF-16 with a byte-order mark; read as UTF-8 or as
Windows-1252 it is garbage with a NUL between every two letters, and an upload took it for
binary data. Text that is none of these is the caller's to handle (`reading` reads it as
Windows-1252).
"""

from __future__ import annotations

import codecs
import logging

log = logging.getLogger(__name__)

# UTF-32's marks first: UTF-32-LE's begins with UTF-16-LE's.
_MARKS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
          (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
          (codecs.BOM_UTF16_BE, "utf-16-be"))
SNIFF_BYTES = 4096  # of a file's head, enough to tell UTF-16 without a mark
_MOSTLY_ZERO = 0.3  # at least this share of one byte of each pair is zero...
_RARELY_ZERO = 0.05  # ...and at most this share of the other: UTF-16 without a mark
_CONTROLS = frozenset(chr(c) for c in range(32)) - set("\t\n\r\f\v")


def marked(data: bytes) -> tuple[str, int] | None:
    """The codec a byte-order mark at the start of `data` names, and the mark's length."""
    for mark, codec in _MARKS:
        if data.startswith(mark):
            return codec, len(mark)
    return None


def unmarked_utf16(head: bytes) -> str | None:
    """"utf-16-le" or "utf-16-be" when `head` (a file's first bytes, no byte-order mark)
    reads as UTF-16 text: zero bytes in one place of each pair, rarely in the other, and
    no control characters once decoded; else None."""
    pairs = len(head) // 2
    if pairs < 2:
        return None
    even = head[0:2 * pairs:2].count(0) / pairs
    odd = head[1:2 * pairs:2].count(0) / pairs
    if odd >= _MOSTLY_ZERO and even <= _RARELY_ZERO:
        codec = "utf-16-le"
    elif even >= _MOSTLY_ZERO and odd <= _RARELY_ZERO:
        codec = "utf-16-be"
    else:
        return None
    text = head[:2 * pairs].decode(codec, errors="replace")
    controls = sum(char in _CONTROLS for char in text)
    return codec if controls <= len(text) // 100 else None


def text_codec(head: bytes) -> str | None:
    """The codec a file whose first bytes are `head` is read with when it is not plain
    UTF-8: one named by its byte-order mark, or UTF-16 told by its zero bytes; else None."""
    mark = marked(head)
    return mark[0] if mark else unmarked_utf16(head[:SNIFF_BYTES])


def decode(data: bytes, where: str = "") -> str:
    """A text file's bytes as text, its byte-order mark dropped: UTF-16 or UTF-32 when
    `text_codec` says so (a damaged character becomes U+FFFD, said in the log), else strict
    UTF-8 (a UnicodeDecodeError when it is not)."""
    mark = marked(data)
    if mark is not None:
        codec, skip = mark
    else:
        codec, skip = unmarked_utf16(data[:SNIFF_BYTES]) or "utf-8", 0
    if codec == "utf-8":
        return data[skip:].decode("utf-8")
    try:
        return data[skip:].decode(codec)
    except UnicodeDecodeError as exc:
        log.warning("%s: damaged %s text (%s); read with U+FFFD in its place", where or "text",
                    codec.upper(), exc.reason)
        return data[skip:].decode(codec, errors="replace")


def universal_newlines(text: str) -> str:
    """`text` with "\\r\\n" and "\\r" line ends as "\\n" (what reading a file in text mode
    does)."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
