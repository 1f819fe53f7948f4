"""Typed records that flow between stages: input rows, load and ingest reports, search hits,
and retrieval results (with their one JSON view, used by the CLI and the API alike)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

SCORE_DIGITS = 6  # scores in JSON views are rounded to this many decimals
HEADING_SEPARATOR = " › "  # between a passage's headings, as `ingest.documents` joins them
SOURCE_SEPARATOR = " · "  # between the parts of a source's line
SLIDE_TYPES = frozenset(["pptx", "ppt", "odp", "key"])  # whose pages are slides


# --- input ---------------------------------------------------------------------------------

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

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


@dataclass
class LoadReport:
    """What one source gave: the good records and the skipped problems.

    Loaders (files, Python items) and extractors (raw text) all produce one of these.
    """

    path: str
    records: list[PassageRecord] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    rows_skipped: int = 0
    triplets_skipped: int = 0
    files_skipped: int = 0  # whole files not read (an unsupported type, no text in them)

    def skip_row(self, where: str, what: str) -> None:
        """Record a row that was left out, and why."""
        self.problems.append(Problem(where, what))
        self.rows_skipped += 1

    def skip_triplet(self, where: str, what: str) -> None:
        """Record a triplet that was left out, and why."""
        self.problems.append(Problem(where, what))
        self.triplets_skipped += 1


# --- ingestion -----------------------------------------------------------------------------

@dataclass
class IngestSummary:
    """What one ingestion added, found already present, updated, removed and skipped."""

    passages_added: int = 0
    passages_present: int = 0
    passages_updated: int = 0  # present, with new metadata or text (not re-embedded)
    entities_added: int = 0
    entities_present: int = 0
    relations_added: int = 0
    relations_present: int = 0
    relations_linked: int = 0  # present relations that gained a passage
    texts_embedded: int = 0
    # The documents the input named: new ones, stored ones it changed (`replaced`: given or
    # losing a passage, a relation link or passage metadata) and stored ones it left as
    # they were (`unchanged`: ingesting the same file again).
    documents_added: int = 0
    documents_replaced: int = 0
    documents_unchanged: int = 0
    # What replaced documents no longer hold (see `Removal`).
    passages_removed: int = 0
    relations_removed: int = 0
    relations_unlinked: int = 0
    entities_removed: int = 0
    rows_skipped: int = 0
    triplets_skipped: int = 0
    files_skipped: int = 0
    documents_retired: int = 0  # stored under an id an earlier version gave the same file
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    # Raw documents (`add_documents`): the extractor that ran and what it did, for people.
    extractor: str | None = None
    extraction_notes: list[str] = field(default_factory=list)

    def count_removal(self, removal: Removal) -> None:
        """Add what pruning replaced documents removed."""
        self.passages_removed += removal.passages
        self.relations_removed += removal.relations
        self.relations_unlinked += removal.relations_unlinked
        self.entities_removed += removal.entities

    def include(self, reports: list[LoadReport]) -> None:
        """Count the loading problems of `reports` in, before those met while storing."""
        self.problems[:0] = [p for report in reports for p in report.problems]
        self.rows_skipped += sum(report.rows_skipped for report in reports)
        self.triplets_skipped += sum(report.triplets_skipped for report in reports)
        self.files_skipped += sum(report.files_skipped for report in reports)

    def as_dict(self) -> dict[str, object]:
        """Plain-JSON view, problems as "place: what" strings; `extractor` for raw documents."""
        out: dict[str, object] = {k: v for k, v in self.__dict__.items()
                                  if k not in ("problems", "extractor", "extraction_notes")}
        out["problems"] = [str(p) for p in self.problems]
        if self.extractor is not None:
            out["extractor"] = self.extractor
        return out


@dataclass
class Removal:
    """What deleting documents (or pruning replaced ones) removed: passages, relations left
    without passages, entities left without relations, and relations that only lost some
    passages; `missing` are asked-for documents that were not stored."""

    documents: list[str] = field(default_factory=list)
    passages: int = 0
    relations: int = 0
    relations_unlinked: int = 0
    entities: int = 0
    missing: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, object]:
        """Plain-JSON view."""
        return asdict(self)


# --- search and retrieval ------------------------------------------------------------------

@dataclass(frozen=True)
class Hit:
    """One search result: row id, similarity (higher is better) and requested fields."""

    id: str
    score: float
    fields: dict[str, Any]


@dataclass
class RelationHit:
    """A relation that led to a passage, with its ranking score."""

    id: str
    text: str
    score: float


@dataclass
class PassageHit:
    """A retrieved passage, its score, and the relations that led to it (graph methods):
    `relations` as shown to people, `via` their ids; `doc_id` is its document; `source`
    where it came from (`passage_source`), given by `GraphRAG` and the server."""

    id: str
    text: str
    score: float
    relations: list[str] = field(default_factory=list)
    via: list[str] = field(default_factory=list)
    doc_id: str | None = None
    source: dict[str, Any] | None = None

    @property
    def source_line(self) -> str:
        """Where the passage came from, for people: "report.pdf · p. 3 · Safety › Battery"
        (its document id when nothing more is known)."""
        return source_line(self.source or passage_source({}, self.doc_id))


def passage_source(metadata: Mapping[str, Any] | None, doc_id: str | None) -> dict[str, Any]:
    """Where a passage came from, as results show it: `{"file", "page", "headings",
    "start", "end"}` from the flat keys of its stored metadata (`ingest.documents.Chunk.
    passage_metadata`). A passage stored without them (before issue 36, or a row of a JSON
    file) has its document id as `file`, its `section` split into `headings`, and nulls."""
    found = metadata or {}
    file = found.get("file")
    page = found.get("page")
    headings = found.get("headings")
    section = found.get("section")
    if not (isinstance(headings, list) and all(isinstance(h, str) for h in headings)):
        headings = section.split(HEADING_SEPARATOR) if isinstance(section, str) and section \
            else []
    return {"file": file if isinstance(file, str) and file else doc_id,
            "page": page if isinstance(page, (int, str)) and not isinstance(page, bool)
            and page != "" else None,
            "headings": list(headings), "start": _offset(found.get("start")),
            "end": _offset(found.get("end"))}


def _offset(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def source_line(source: Mapping[str, Any]) -> str:
    """A source as one line: file, page ("p. 3"; "slide 3" in a deck; a sheet's name as it
    is) and headings, those known: "report.pdf · p. 3 · Safety › Battery"."""
    file, page = source.get("file"), source.get("page")
    parts = [str(file)] if file else []
    if isinstance(page, int):
        suffix = str(file or "").rsplit(".", 1)[-1].lower() if "." in str(file or "") else ""
        parts.append(f"{'slide' if suffix in SLIDE_TYPES else 'p.'} {page}")
    elif page:
        parts.append(str(page))
    headings = [str(h) for h in source.get("headings") or [] if h]
    if headings:
        parts.append(HEADING_SEPARATOR.join(headings))
    return SOURCE_SEPARATOR.join(parts)


def with_sources(results: Iterable[Retrieval],
                 metadata_of: Callable[[list[str]], Mapping[str, Mapping[str, Any]]]) -> None:
    """Give every passage of `results` its `source`, from the stored metadata `metadata_of`
    reads for their ids in one call (timed as "fetch_sources", counted in "total")."""
    results = list(results)
    ids = list(dict.fromkeys(p.id for result in results for p in result.passages))
    started = time.perf_counter()
    found = metadata_of(ids) if ids else {}
    ms = round((time.perf_counter() - started) * 1000, 2)
    for result in results:
        for p in result.passages:
            p.source = passage_source(found.get(p.id), p.doc_id)
        result.timings_ms["fetch_sources"] = ms
        if "total" in result.timings_ms:
            result.timings_ms["total"] = round(result.timings_ms["total"] + ms, 2)


@dataclass
class Retrieval:
    """Everything one retrieval found, and how long each stage took."""

    question: str
    method: str
    passages: list[PassageHit]
    entities: list[dict[str, object]] = field(default_factory=list)
    relations: list[RelationHit] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    llm: dict[str, object] | None = None  # what the LLM did, when one was used
    # The default method's bridge entities: {"id", "name", "relation" (the relation id it
    # was reached through), "confidence"}, best first.
    bridges: list[dict[str, object]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The plain-JSON view: every field, scores rounded to SCORE_DIGITS decimals."""
        out = asdict(self)
        for item in out["passages"] + out["relations"]:
            item["score"] = round(item["score"], SCORE_DIGITS)
        return out


def comparison_json(graph: Retrieval, naive: Retrieval) -> dict[str, Any]:
    """Graph retrieval beside naive retrieval: the one JSON view of a retrieval, printed by
    `hopgraph query --json` and sent by the server's `POST /query` (which adds the subgraph
    and `cached`). Its schema is `serve.models.RetrievalView`, tested against both."""
    view = graph.as_dict()
    return {
        "question": view["question"],
        "method": view["method"],
        "graph": view["passages"],
        "naive": naive.as_dict()["passages"],
        "entities": view["entities"],
        "relations": view["relations"],
        "timings_ms": view["timings_ms"],
        "naive_timings_ms": naive.timings_ms,
        "notes": view["notes"],
        "llm": view["llm"],
        "bridges": view["bridges"],
    }


@dataclass
class Answer:
    """An answer written from retrieved passages (`GraphRAG.ask`): its text, with citations
    [n] to `retrieval.passages[n - 1]`, and the LLM's token usage so far."""

    question: str
    text: str
    retrieval: Retrieval
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def citations(self) -> list[str]:
        """The passages the text cites, as "[n] file · p. 3 · Section", in the order of n."""
        return cited_sources(self.text, self.retrieval.passages)


def cited_sources(text: str, passages: list[PassageHit]) -> list[str]:
    """The passages an answer's [n] (or [n, m]) citations name, as "[n] <source line>"."""
    numbers = {int(n) for group in re.findall(r"\[(\d+(?:\s*,\s*\d+)*)\]", text)
               for n in re.findall(r"\d+", group)}
    return [f"[{n}] {passages[n - 1].source_line}" for n in sorted(numbers)
            if 1 <= n <= len(passages)]
