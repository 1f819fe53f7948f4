"""`hopgraph ingest`: passage/triplet files, or raw documents with --extract."""

from __future__ import annotations

import argparse
import json
import sys
import time

from hopgraph.cli.common import Bars, llm_client, llm_configured, open_graph
from hopgraph.config import NO_LLM_HELP
from hopgraph.errors import LLMError
from hopgraph.records import IngestSummary, LoadReport


def _offline(args: argparse.Namespace, reading: LoadReport, docs: list, chunks: list
             ) -> list[LoadReport] | None:
    """Chunks → triplets by the offline extractor; with --dry-run a sample per document."""
    from hopgraph.ingest.offline_extractor import document_title, extract_chunks

    titles = {doc.path: document_title(doc.path, doc.text) for doc in docs}
    started = time.perf_counter()
    report, stats = extract_chunks(chunks, titles)
    seconds = time.perf_counter() - started
    print(f"offline extractor: {stats.passages} passages, {stats.sentences} sentences, "
          f"{stats.triplets} triplets from {len(docs)} documents in {seconds:.2f}s",
          file=sys.stderr)
    for note in stats.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.dry_run:
        for doc in docs:
            mine = [r for r in report.records if r.metadata["source"] == doc.path]
            print(f"{doc.path} (title {titles[doc.path]!r}): {len(mine)} passages, "
                  f"{sum(len(r.triplets) for r in mine)} triplets")
            for triplet in [t for r in mine for t in r.triplets][:8]:
                print(f"  ({triplet.subject} | {triplet.predicate} | {triplet.object})")
        for problem in reading.problems:
            print(f"skipped {problem}", file=sys.stderr)
        return None
    return [reading, report]


def _extract(args: argparse.Namespace) -> list[LoadReport] | None:
    """Raw documents → chunks → triplets (the LLM when one is configured or asked for, else
    the offline extractor), as load reports; None after a dry run."""
    from hopgraph.ingest.documents import chunk_documents, read_documents
    from hopgraph.ingest.llm_extractor import estimate, extract_records

    reading = LoadReport(path="documents")
    docs = read_documents(args.files, reading.problems)
    chunks = chunk_documents(docs, chunk_tokens=args.chunk_tokens,
                             overlap_tokens=args.overlap_tokens)
    configured = args.extractor != "offline" and llm_configured(args) is not None
    args.extractor_used = "llm" if configured or args.extractor == "llm" else "offline"
    if args.extractor_used == "offline":
        return _offline(args, reading, docs, chunks)
    if args.dry_run:
        guess = estimate(chunks)
        print(f"{len(docs)} documents, {guess.chunks} chunks of <= {args.chunk_tokens} tokens "
              f"({args.overlap_tokens} overlap)\nestimated prompt tokens: {guess.prompt_tokens} "
              f"(largest prompt {guess.max_prompt_tokens}; counted with the MiniLM tokenizer, "
              "so close to, not equal to, the LLM's count); no LLM call made")
        for problem in reading.problems:
            print(f"skipped {problem}", file=sys.stderr)
        return None
    llm = llm_client(args)
    if llm is None:
        raise LLMError("--extract needs an LLM to extract triplets, and none is configured",
                         fix=NO_LLM_HELP.split("\n", 1)[1].replace(
                             " The retrieved evidence is shown above.", ""))
    progress = Bars(unit="chunks", prefix="")
    done = 0

    def advance(count: int) -> None:
        nonlocal done
        done += count
        if not args.quiet:
            progress("extract", done, len(chunks))

    with llm:
        report = extract_records(llm, chunks, progress=advance)
        usage = llm.usage.as_dict()
    print(f"extracted {report.triplets} triplets from {len(chunks)} chunks of {len(docs)} "
          f"documents ({report.cached} chunks from cache, {report.chunks_failed} failed, "
          f"{report.triplets_skipped} malformed triplets skipped); LLM " +
          ", ".join(f"{k} {v}" for k, v in usage.items()), file=sys.stderr)
    return [reading, report]


def cmd_ingest(args: argparse.Namespace) -> int:
    """Ingest files (or extracted documents) and print what was added and skipped."""
    extracted = None
    if args.extract:
        extracted = _extract(args)
        if extracted is None:
            return 0
    with open_graph(args) as rag:
        bars = None if args.quiet else Bars()
        if extracted is not None:
            summary = rag.add_reports(extracted, progress=bars, append=args.append)
        else:
            summary = rag.add_files(args.files, progress=bars, append=args.append)
    if args.json:
        view = summary.as_dict()
        if args.extract:
            view["extractor"] = args.extractor_used
        print(json.dumps(view, ensure_ascii=False, indent=2))
    else:
        print_summary(summary, args.show_problems)
        if args.extract:
            print(f"extractor: {args.extractor_used}")
    return 0


def print_summary(summary: IngestSummary, show_problems: int) -> None:
    """The ingest summary for people: problems on stderr, counts on stdout."""
    for problem in summary.problems[:show_problems]:
        print(f"skipped {problem}", file=sys.stderr)
    hidden = len(summary.problems) - show_problems
    if hidden > 0:
        print(f"... and {hidden} more problems (--show-problems N, or --json)", file=sys.stderr)
    print(
        f"passages:  {summary.passages_added} added, {summary.passages_present} already present\n"
        f"entities:  {summary.entities_added} added, {summary.entities_present} already present\n"
        f"relations: {summary.relations_added} added, {summary.relations_present} already "
        f"present ({summary.relations_linked} linked to new passages)\n"
        + (f"removed:   {summary.passages_removed} passages, {summary.relations_removed} "
           f"relations, {summary.entities_removed} entities no longer in "
           f"{summary.documents_replaced} replaced documents "
           f"({summary.relations_unlinked} relations kept with fewer passages)\n"
           if summary.documents_replaced else "")
        + (f"updated:   {summary.passages_updated} passages (metadata or text case)\n"
           if summary.passages_updated else "")
        + f"skipped:   {summary.rows_skipped} malformed rows, "
        f"{summary.triplets_skipped} malformed triplets\n"
        f"embedded:  {summary.texts_embedded} texts in {summary.seconds:.1f}s"
    )


def add_parser(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]
               ) -> None:
    """The `ingest` subcommand."""
    p = sub.add_parser("ingest", parents=parents,
                       help="ingest passage/triplet files, or raw text with --extract")
    p.add_argument("files", nargs="+", help="JSON, JSONL or HippoRAG OpenIE files; with "
                   "--extract: .txt, .md, .pdf files or folders of them")
    p.add_argument("--extract", action="store_true",
                   help="raw documents: chunk them and extract triplets (with the LLM when "
                        "one is configured, else offline)")
    p.add_argument("--extractor", choices=["auto", "offline", "llm"], default="auto",
                   help="with --extract: force the offline extractor or the LLM")
    p.add_argument("--dry-run", action="store_true",
                   help="with --extract: print chunks and estimated tokens, call nothing")
    p.add_argument("--chunk-tokens", type=int, default=512, help="chunk size (512)")
    p.add_argument("--overlap-tokens", type=int, default=64, help="chunk overlap (64)")
    p.add_argument("--append", action="store_true",
                   help="keep the stored passages of documents ingested again (default: "
                        "replace them: passages no longer in a document are removed)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--show-problems", type=int, default=10, metavar="N",
                   help="list the first N skipped rows/triplets (default 10)")
    p.set_defaults(func=cmd_ingest)
