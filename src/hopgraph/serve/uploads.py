"""What an upload job does with its files: read them, extract their triplets, store them one
file after the other, through the same write path as every other write
(`GraphService.write` → `GraphRAG.add_extracted`: the writer lease, the change log).

- A file that cannot be read (a broken PDF or Word file, an empty or binary file, a suffix
  we do not read) fails alone: it is named in the job's problems and the others go on.
- A file is stored under its upload name (`report.pdf`), not where it waits on disk, so
  uploading it again finds it: ingest is idempotent by content, and a document cut short
  is completed.
- The offline extractor reads every file of the upload at once (its common-words rule reads
  the whole ingest, as `hopgraph ingest a b` does); the LLM extracts file by file.
- A job asked to stop (cancelled, or its server stopping) stops at once while it reads
  (between two pieces of a document's chunking) or extracts (between two chunks), and
  between two files while it stores: the file being stored is finished first, so the
  graph is left whole and nothing stored before is lost (a write stopped halfway through a
  replacement could only be completed or rolled back, and rolling back would delete the
  earlier version too). Files already stored stay; the rest are not read. Only a killed
  server leaves a file cut short: `check` names it until the upload is made again (which
  completes it).
"""

from __future__ import annotations

import logging
import os
import shutil
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from hopgraph.api import GraphRAG, extracted_part
from hopgraph.errors import HopgraphError, InputError
from hopgraph.ingest import extract
from hopgraph.ingest.containers import ZIP_SIGNATURE
from hopgraph.ingest.encoding import text_codec
from hopgraph.ingest.inputs import ROW_SUFFIXES, readable_kinds
from hopgraph.ingest.loaders import source_doc_id
from hopgraph.ingest.reading import PDF_SIGNATURE, TEXT_SUFFIXES
from hopgraph.progress import Tracker
from hopgraph.records import IngestSummary, LoadReport, PassageRecord, Problem
from hopgraph.serve.jobs import HOST, Job, JobFile, Stopped, process_alive
from hopgraph.serve.service import GraphService

log = logging.getLogger(__name__)
_SNIFF = 8192  # bytes read to tell text from binary
FILES_PER_WRITE = 16  # extracted files stored together in one write (group commit)

__all__ = ["Incoming", "Stopped", "ingest_upload", "keep_files", "remove_dead_folders"]


@dataclass
class Incoming:
    """An uploaded file as the request gives it: its name, size and content."""

    name: str
    size: int
    content: BinaryIO


def keep_files(folder: Path, files: list[Incoming]) -> list[JobFile]:
    """Copy uploaded files into a job's folder, each in a folder of its own (its name is
    kept: the offline extractor may title a document by it)."""
    kept = []
    for index, incoming in enumerate(files):
        place = folder / str(index)
        place.mkdir(parents=True, mode=0o700)
        path = place / incoming.name
        with path.open("wb") as out:
            shutil.copyfileobj(incoming.content, out)
        kept.append(JobFile(incoming.name, incoming.size, path))
    return kept


def remove_dead_folders(uploads: Path, live: set[str]) -> None:
    """Remove the job folders (`<host>-<pid>-<board>-<job>`) that no open board of a live
    process of this host owns: of a dead process, or of this process's pid but no board
    of `live` (a server restarted in a container gets the same pid again)."""
    for folder in uploads.glob(f"{HOST}-*-*-*"):
        pid, board = folder.name[len(HOST) + 1:].split("-")[:2]
        if not pid.isdigit():
            continue
        alive = board in live if int(pid) == os.getpid() else process_alive(int(pid))
        if not alive:
            shutil.rmtree(folder, ignore_errors=True)


def ingest_upload(job: Job, service: GraphService) -> None:
    """Read, extract and store the job's files into `service`'s graph (raises `Stopped`
    when the job is asked to stop)."""
    chosen = extract.choose(job.extractor, service.llm is not None)
    job.set_stage("reading")
    plans: dict[str, extract.Plan] = {}
    for entry in job.files:
        job.check_stop()
        plan = _read(job, entry, chosen, service.llm is not None)
        if plan is not None:
            plans[entry.name] = plan
    ready = _extract_offline(job, plans, service.rag.settings.names) if chosen == "offline" \
        else {}
    job.set_stage("storing")
    group: list[tuple[JobFile, extract.Extraction]] = []
    for entry in job.files:
        if entry.name not in plans:
            continue
        job.check_stop()
        if entry.name in ready:  # extracted already: stored with others, in one write
            group.append((entry, ready[entry.name]))
            if len(group) == FILES_PER_WRITE:
                _store_group(job, group, service)
                group = []
            continue
        done = _extract_llm(job, entry, plans[entry.name], service)
        if done is not None:
            _store(job, entry, done, service)
    if group:
        _store_group(job, group, service)
    job.check_stop()  # asked during the last file: the job ends as asked


def _read(job: Job, entry: JobFile, chosen: str, has_llm: bool) -> extract.Plan | None:
    """The file read (and chunked) under its upload name; None, and a problem, if it is
    bad."""
    try:
        _sniff(entry.path)
        plan = extract.prepare([entry.path], chosen, has_llm, progress=Tracker(
            lambda event: job.progress(entry, event), entry.name))
    except HopgraphError as exc:
        job.file_failed(entry, _named(str(exc), entry))
        return None
    plan = renamed(plan, entry.path, entry.name)
    passages = len(plan.chunks) + sum(len(report.records) for report in plan.rows)
    if not passages:
        first = plan.reading.problems[0].what if plan.reading.problems else "no text found"
        job.file_failed(entry, first)
        return None
    job.file_read(entry, passages)
    return plan


def _sniff(path: Path) -> None:
    """An InputError for an empty file, or for binary data in a file whose suffix says text
    (the reader would take it for Windows-1252 text; UTF-16's zero bytes are text) or with
    no suffix and no PDF or ZIP signature; other suffixes (.pdf, .docx...) are the reader's."""
    with path.open("rb") as handle:
        head = handle.read(_SNIFF)
    if not head.strip():
        raise InputError("the file is empty")
    texts = (*TEXT_SUFFIXES, *ROW_SUFFIXES, "")
    if (path.suffix.lower() in texts and not head.startswith((PDF_SIGNATURE, ZIP_SIGNATURE))
            and b"\x00" in head and text_codec(head) in (None, "utf-8")):
        raise InputError("binary data, not text", fix=f"upload {readable_kinds()}")


def _named(text: str, entry: JobFile) -> str:
    """`text` with the file's place on disk written as its upload name."""
    return text.replace(str(entry.path), entry.name)


def renamed(plan: extract.Plan, path: Path, name: str) -> extract.Plan:
    """`plan` of the file at `path`, as if the file had been read as `name`: documents,
    chunks, rows and problems name `name`, and rows that name no document are `name`'s."""
    old, doc = str(path), source_doc_id(name)

    def swap(text: str) -> str:
        return name + text[len(old):] if text.startswith(old) else text

    def rows(report: LoadReport) -> LoadReport:
        records = [replace(r, source=swap(r.source), doc_id=doc if r.doc_id ==
                           source_doc_id(path) else r.doc_id) for r in report.records]
        return replace(report, path=swap(report.path), records=records,
                       problems=[Problem(swap(p.where), p.what) for p in report.problems])

    return replace(plan, docs=[replace(d, path=swap(d.path)) for d in plan.docs],
                   chunks=[replace(c, doc=swap(c.doc)) for c in plan.chunks],
                   titles={swap(k): v for k, v in plan.titles.items()},
                   rows=[rows(report) for report in plan.rows], reading=rows(plan.reading))


def _extract_offline(job: Job, plans: dict[str, extract.Plan], names: str
                     ) -> dict[str, extract.Extraction]:
    """Every file's records from one offline extraction of them all (names from `names`,
    the graph's `Settings.names`), by file."""
    if not plans:
        return {}
    job.set_stage("extracting")
    merged = extract.Plan(
        "offline", LoadReport(path="documents"),
        [d for p in plans.values() for d in p.docs],
        [c for p in plans.values() for c in p.chunks],
        {k: v for p in plans.values() for k, v in p.titles.items()},
        [r for p in plans.values() for r in p.rows])
    done = extract.run(merged, progress=Tracker(lambda event: job.progress(None, event)),
                       names=names)
    row_files = {id(report): name for name, plan in plans.items() for report in plan.rows}
    by_file: dict[str, list[LoadReport]] = defaultdict(list)
    for report in done.reports:
        if id(report) in row_files:  # a row file's own report
            by_file[row_files[id(report)]].append(report)
            continue
        found: dict[str, list[PassageRecord]] = defaultdict(list)
        for record in report.records:  # the extractor's: every document's chunks
            found[str(record.metadata.get("source"))].append(record)
        for name, records in found.items():
            by_file[name].append(LoadReport(path=name, records=records))
    return {name: extract.Extraction("offline", by_file[name], done.lines) for name in plans}


def _extract_llm(job: Job, entry: JobFile, plan: extract.Plan, service: GraphService
                 ) -> extract.Extraction | None:
    """One file's records from the LLM (None, and a problem, if every chunk failed)."""
    job.set_stage("extracting")
    try:
        done = extract.run(plan, service.llm, Tracker(lambda e: job.progress(entry, e),
                                                      entry.name))
    except HopgraphError as exc:
        job.file_failed(entry, _named(str(exc), entry))
        return None
    finally:
        job.set_stage("storing")
    return done


def _store_group(job: Job, group: list[tuple[JobFile, extract.Extraction]],
                 service: GraphService) -> None:
    """Store several files' records in one write (`GraphRAG.add_parts`), each file with its
    own outcome; if that write fails, each file alone (`_store`), as before groups: the
    files before a bad one are stored, and the bad one's error ends the job."""
    if len(group) == 1:
        _store(job, *group[0], service)
        return
    coming = iter(group)

    def stopped() -> bool:
        """Asked before each file's part: a stop leaves the rest queued; else the next
        file is running."""
        if job.stop_as is not None:
            return True
        entry, done = next(coming)
        job.file_running(entry, sum(len(report.records) for report in done.reports))
        return False

    def write(rag: GraphRAG) -> list[IngestSummary]:
        job.check_stop()  # asked while waiting for the write lock: nothing written yet
        return rag.add_parts([extracted_part(done, job.append, _tracker(job, entry))
                              for entry, done in group], until=stopped)

    try:
        summaries = service.write(write)
    except Stopped:
        raise
    except Exception as exc:
        log.warning("storing %d files in one write failed (%s); storing each alone",
                    len(group), exc)
        for entry, done in group:  # each file's problems come from its own write again
            job.check_stop()
            _store(job, entry, done, service)
        return
    for (entry, done), summary in zip(group, summaries, strict=False):  # fewer: stopped
        job.file_done(entry, _documents(done), [str(p) for p in summary.problems])
    job.check_stop()  # the files after a stop stay queued


def _tracker(job: Job, entry: JobFile) -> Tracker:
    """Progress events of one file, told to the job under the file's name."""
    return Tracker(lambda event: job.progress(entry, event), entry.name)


def _documents(done: extract.Extraction) -> list[str]:
    return sorted({r.doc_id for report in done.reports for r in report.records
                   if r.doc_id is not None})


def _store(job: Job, entry: JobFile, done: extract.Extraction, service: GraphService
           ) -> None:
    """Store one file's records in one write (a stop waits for its end)."""
    documents = _documents(done)
    job.file_running(entry, sum(len(report.records) for report in done.reports))
    progress = _tracker(job, entry)

    def write(rag: GraphRAG) -> IngestSummary:
        job.check_stop()  # asked while waiting for the write lock: nothing written yet
        return rag.add_extracted(done, progress, job.append)

    summary = service.write(write)
    job.file_done(entry, documents, [str(p) for p in summary.problems])
