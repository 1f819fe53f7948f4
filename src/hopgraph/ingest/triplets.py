"""Triplet validation, shared by file loading and LLM extraction.

A triplet is `[subject, predicate, object]` (or `{"subject", "predicate", "object"}`) of three
non-empty strings. Bad ones and repeats within one passage (after normalization) are skipped
and reported with their place; the good ones come back stripped, in order.
"""

from __future__ import annotations

from typing import Any

from hopgraph.identity import normalize
from hopgraph.records import LoadReport, Triplet

PARTS = ("subject", "predicate", "object")


def triplet_problem(item: Any) -> str | None:
    """What is wrong with one raw triplet, or None when it is three non-empty strings."""
    if isinstance(item, dict):
        item = [item.get(name) for name in PARTS]
    if not isinstance(item, (list, tuple)):
        return f"expected [subject, predicate, object], got {type(item).__name__}"
    if len(item) != 3:
        return f"expected 3 parts, got {len(item)}"
    for name, part in zip(PARTS, item, strict=True):
        if not isinstance(part, str):
            return f"{name} is {type(part).__name__}, expected a string"
        if not part.strip():
            return f"{name} is empty"
    return None


def read_triplets(items: list[Any], where: str, report: LoadReport) -> list[Triplet]:
    """The valid, distinct triplets of one passage; the rest go to `report` as problems."""
    triplets: list[Triplet] = []
    seen: set[tuple[str, ...]] = set()
    for i, item in enumerate(items):
        problem = triplet_problem(item)
        if problem is None:
            parts = [item[name] for name in PARTS] if isinstance(item, dict) else list(item)
            key = tuple(normalize(part) for part in parts)
            if key in seen:
                problem = "duplicate of an earlier triplet"
        if problem is not None:
            report.skip_triplet(f"{where} triplet {i}", problem)
            continue
        seen.add(key)
        triplets.append(Triplet(*(part.strip() for part in parts)))
    return triplets
