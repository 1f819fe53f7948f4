"""Names as the offline extractor writes them: the entity a title names, and surnames."""

from __future__ import annotations

import re

_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")


def title_entity(title: str) -> str:
    """The entity a title names: without a trailing "(...)" that tells namesakes apart
    ("David Smith (director)" is the "David Smith" other passages mention)."""
    title = title.strip()
    return _DISAMBIGUATION.sub("", title) or title


def surnames(names: set[str]) -> dict[str, str]:
    """One-word names that end exactly one longer name of the passage -> that name."""
    longer: dict[str, set[str]] = {}
    for name in names:
        parts = name.split()
        if len(parts) > 1 and parts[-1][:1].isupper():
            longer.setdefault(parts[-1], set()).add(name)
    return {short: next(iter(full)) for short, full in longer.items()
            if len(full) == 1 and short in names}
