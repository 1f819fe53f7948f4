"""Inputs → records → load reports: the one path from files and folders (passage/triplet
rows, raw documents, or both) to what `GraphRAG` stores.

`prepare` sorts the inputs (`ingest.inputs`), reads the row files, reads and chunks the
documents and picks their extractor (the LLM when one is given or asked for, else the
offline one); `run` extracts, with no graph open (the CLI opens the graph only once this is
done, so a failed ingest leaves no graph behind); `GraphRAG.add_extracted` stores what it
gave. A dry run stops after `prepare`, or after `run` of the offline extractor, which calls
nothing outside the process.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from hopgraph.config import NO_LLM_HELP
from hopgraph.errors import InputError, LLMError, UsageError
from hopgraph.ingest.documents import (
    DEFAULT_CHUNK_TOKENS,
    DEFAULT_OVERLAP_TOKENS,
    Chunk,
    Document,
    chunk_documents,
    read_documents,
)
from hopgraph.ingest.inputs import sort_inputs
from hopgraph.ingest.loaders import load_file
from hopgraph.llm import LLMClient
from hopgraph.records import LoadReport

EXTRACTORS = ("auto", "offline", "llm")


@dataclass
class Plan:
    """The row files read, the documents read and chunked, and which extractor will run on
    the chunks (None when there are no documents)."""

    extractor: str | None  # "offline", "llm", or None: no raw documents
    reading: LoadReport  # files skipped while reading (no records)
    docs: list[Document]
    chunks: list[Chunk]
    titles: dict[str, str] = field(default_factory=dict)  # document id -> title (offline)
    rows: list[LoadReport] = field(default_factory=list)  # the row files' records
    aliases: dict[str, str] = field(default_factory=dict)  # older id -> document id


@dataclass
class Extraction:
    """What extraction gave: the load reports to ingest and what it did, for people."""

    extractor: str | None  # None: only row files, nothing extracted
    reports: list[LoadReport]
    lines: list[str]
    aliases: dict[str, str] = field(default_factory=dict)  # older id -> document id (`Plan`)


def choose(extractor: str, has_llm: bool, require_llm: bool = True) -> str:
    """The extractor that runs: `llm` when asked for or ("auto") when an LLM is configured,
    else `offline`. Asking for `llm` with none configured is an LLMError saying how (unless
    not `require_llm`: a dry run estimates the LLM's work without one)."""
    if extractor not in EXTRACTORS:
        raise UsageError(f"unknown extractor {extractor!r}", fix=", ".join(EXTRACTORS))
    if extractor == "llm" and not has_llm and require_llm:
        raise _no_llm()
    return "llm" if extractor == "llm" or (extractor == "auto" and has_llm) else "offline"


def prepare(paths: Iterable[str | Path], extractor: str = "auto", has_llm: bool = False,
            chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
            overlap_tokens: int = DEFAULT_OVERLAP_TOKENS, require_llm: bool = True,
            documents_only: bool = False, root: str | Path | None = None,
            names: Mapping[str, str] | None = None,
            progress: Callable[[str, int, int], None] | None = None) -> Plan:
    """Read the row files, and read and chunk the documents, of these files and folders;
    skipped files are the reading report's problems. `documents_only`: every text file is a
    raw document (`--extract`). `require_llm=False` plans an LLM extraction with no LLM
    configured (for a dry run). Documents are named by their ids (`ingest.inputs`: relative
    to the folder given, or to `root`; `names` gives some files theirs, by path).
    `progress("chunk", characters, total)` is called between pieces of the chunking
    (`chunk_documents`); it may raise to stop."""
    from hopgraph.ingest.offline_records import document_title

    inputs = sort_inputs(paths, documents_only, root)
    ids = {**inputs.ids, **(names or {})}
    chosen = choose(extractor, has_llm, require_llm) if inputs.documents else None
    rows = [load_file(path, ids[str(path)]) for path in inputs.rows]
    reading = LoadReport(path="documents", problems=list(inputs.skipped))
    docs = [replace(doc, path=ids[doc.path])
            for doc in read_documents(inputs.documents, reading.problems)]
    reading.files_skipped = len(reading.problems)
    chunks = chunk_documents(docs, chunk_tokens=chunk_tokens, overlap_tokens=overlap_tokens,
                             progress=progress)
    titles = {doc.path: subject if isinstance(subject := doc.metadata.get("subject"), str)
              and subject else document_title(doc.path, doc.text) for doc in docs}
    return Plan(chosen, reading, docs, chunks, titles, rows, inputs.aliases)


def run(plan: Plan, llm: LLMClient | None = None,
        progress: Callable[[str, int, int], None] | None = None,
        names: str = "rules") -> Extraction:
    """Extract the plan's chunks (`progress("extract", done, total)` as chunks are done, by
    the LLM or the offline extractor, whose names come from `names`: "rules", "spacy" or
    "both", `Settings.names`; it may raise to stop).
    Nothing to store at all (every row and chunk skipped) is an InputError naming the first
    problem."""
    done = replace(_extract(plan, llm, progress, names), aliases=dict(plan.aliases))
    records = sum(len(report.records) for report in done.reports)
    if not records:
        problems = [problem for report in done.reports for problem in report.problems]
        first = f"; first: {problems[0]}" if problems else ""
        raise InputError(f"nothing to ingest: no passage was read ({len(problems)} "
                         f"problems{first})", fix="nothing was stored")
    return done


def _extract(plan: Plan, llm: LLMClient | None,
             progress: Callable[[str, int, int], None] | None, names: str) -> Extraction:
    if plan.extractor is None:
        return Extraction(None, [*plan.rows, plan.reading], [])
    if plan.extractor == "offline":
        return _offline(plan, progress, names)
    if llm is None:
        raise _no_llm()
    from hopgraph.ingest.llm_extractor import extract_records

    done = 0

    def advance(count: int) -> None:
        nonlocal done
        done += count
        if progress is not None:
            progress("extract", done, len(plan.chunks))

    before = llm.usage.as_dict()
    report = extract_records(llm, plan.chunks, progress=advance)
    if plan.chunks and report.chunks_failed == len(plan.chunks):
        raise LLMError(f"every one of {len(plan.chunks)} chunks failed to extract; first: "
                       f"{report.problems[0]}", fix="nothing was stored; check the LLM "
                       "settings (HOPGRAPH_LLM_MODEL, HOPGRAPH_LLM_BASE_URL, OPENAI_API_KEY)")
    usage = ", ".join(f"{k} {v - before[k]}" for k, v in llm.usage.as_dict().items())
    line = (f"extracted {report.triplets} triplets from {len(plan.chunks)} chunks of "
            f"{len(plan.docs)} documents ({report.cached} chunks from cache, "
            f"{report.chunks_failed} failed, {report.triplets_skipped} malformed triplets "
            f"skipped); LLM {usage}")
    return Extraction("llm", [*plan.rows, plan.reading, report], [line])


def _no_llm() -> LLMError:
    how = NO_LLM_HELP.split("\n", 1)[1].replace(" The retrieved evidence is shown above.", "")
    return LLMError("extractor 'llm' needs an LLM, and none is configured",
                    fix=f"{how} From Python: GraphRAG(..., llm=LLMClient(LLMSettings(...))).")


def _offline(plan: Plan, progress: Callable[[str, int, int], None] | None,
             names: str) -> Extraction:
    from hopgraph.ingest.mentions import Rules
    from hopgraph.ingest.offline_records import extract_chunks

    started = time.perf_counter()
    report, stats = extract_chunks(plan.chunks, Rules(names=names), progress=progress)
    seconds = time.perf_counter() - started
    lines = [f"offline extractor: {stats.passages} passages, {stats.sentences} sentences, "
             f"{stats.triplets} triplets from {len(plan.docs)} documents in {seconds:.2f}s",
             *(f"note: {note}" for note in stats.notes)]
    return Extraction("offline", [*plan.rows, plan.reading, report], lines)
