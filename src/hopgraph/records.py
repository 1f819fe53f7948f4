"""Typed input records: what every loader produces and ingestion consumes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Triplet:
    """One (subject, predicate, object) fact extracted from a passage."""

    subject: str
    predicate: str
    object: str


@dataclass
class PassageRecord:
    """A passage with its triplets, as read from an input file."""

    text: str
    triplets: list[Triplet]
    doc_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    source: str = ""  # "file:line" or "file:[index]", for error reports


@dataclass
class Problem:
    """A malformed row or triplet that was skipped, and where it was."""

    where: str
    what: str


@dataclass
class LoadReport:
    """What a loader read from one file: the good records and the skipped problems."""

    path: str
    records: list[PassageRecord] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    rows_skipped: int = 0
    triplets_skipped: int = 0
