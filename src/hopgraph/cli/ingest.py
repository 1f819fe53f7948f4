"""`hopgraph ingest`: passage/triplet files and raw documents (.txt, .pdf, .docx...), told apart
by suffix and content; `--extract` reads every text file as a raw document."""

from __future__ import annotations

import argparse
import json
import sys

from hopgraph.cli.common import Bars, llm_client, llm_configured, open_graph
from hopgraph.config import Settings
from hopgraph.ingest import extract
from hopgraph.ingest.documents import DEFAULT_CHUNK_TOKENS, DEFAULT_OVERLAP_TOKENS, SUFFIXES
from hopgraph.progress import tracked
from hopgraph.records import IngestSummary


def _prepare(args: argparse.Namespace) -> extract.Plan:
    """The documents read and chunked, and the extractor chosen, before any graph is opened
    (a missing file or, unless this is a dry run, a missing LLM stops here)."""
    return extract.prepare(args.files, args.extractor, llm_configured(args) is not None,
                           args.chunk_tokens, args.overlap_tokens,
                           require_llm=not args.dry_run, documents_only=args.extract,
                           root=args.root)


def _dry_run(plan: extract.Plan, args: argparse.Namespace) -> int:
    """What the ingest would do, calling nothing and storing nothing: the rows read; for raw
    documents with the LLM, the chunks and an estimate of the prompt tokens; offline, a
    sample of each document's triplets (the offline extractor runs in this process)."""
    for report in plan.rows:
        print(f"{report.path}: {len(report.records)} passages, {len(report.problems)} problems")
    if plan.extractor == "llm":
        from hopgraph.ingest.llm_extractor import estimate

        guess = estimate(plan.chunks)
        print(f"{len(plan.docs)} documents, {guess.chunks} chunks of <= {args.chunk_tokens} "
              f"tokens ({args.overlap_tokens} overlap)\nestimated prompt tokens: "
              f"{guess.prompt_tokens} (largest prompt {guess.max_prompt_tokens}; counted with "
              "the MiniLM tokenizer, so close to, not equal to, the LLM's count); no LLM call "
              "made")
    elif plan.extractor == "offline":
        done = extract.run(plan, names=Settings.load().names)
        for line in done.lines:
            print(line, file=sys.stderr)
        records = [record for report in done.reports for record in report.records]
        for doc in plan.docs:
            mine = [r for r in records if r.metadata.get("source") == doc.path]
            print(f"{doc.path} (title {plan.titles[doc.path]!r}): {len(mine)} passages, "
                  f"{sum(len(r.triplets) for r in mine)} triplets")
            for triplet in [t for r in mine for t in r.triplets][:8]:
                print(f"  ({triplet.subject} | {triplet.predicate} | {triplet.object})")
    for problem in plan.reading.problems:
        print(f"skipped {problem}", file=sys.stderr)
    return 0


def _extract(plan: extract.Plan, args: argparse.Namespace, bars: Bars | None
             ) -> extract.Extraction:
    """Extraction, run before the graph is opened: a long LLM run holds no Milvus Lite lock,
    and one that fails (or finds nothing to store) leaves no graph behind."""
    llm = llm_client(args) if plan.extractor == "llm" else None
    try:
        return extract.run(plan, llm, tracked(bars), Settings.load().names)
    finally:
        if llm is not None:
            llm.close()


def cmd_ingest(args: argparse.Namespace) -> int:
    """Ingest files and folders and print what was added and skipped. Everything is read
    (and extracted) before the graph is opened; a graph this command created is dropped
    again if its first write fails."""
    plan = _prepare(args)
    if args.dry_run:
        return _dry_run(plan, args)
    bars = None if args.quiet else Bars(units={"extract": "chunks"})
    done = _extract(plan, args, bars)
    with open_graph(args) as rag:
        try:
            summary = rag.add_extracted(done, progress=bars, append=args.append)
        except BaseException:
            if rag.created and not rag.documents():
                rag.drop()  # no empty graph left behind by a failed first ingest
            raise
    for line in summary.extraction_notes:
        print(line, file=sys.stderr)
    if args.json:
        print(json.dumps(summary.as_dict(), ensure_ascii=False, indent=2))
    else:
        print_summary(summary, args.show_problems)
        if summary.extractor:
            print(f"extractor: {summary.extractor}")
    skipped = summary.files_skipped + summary.rows_skipped + summary.triplets_skipped
    return STRICT_EXIT if args.strict and skipped else 0


STRICT_EXIT = 3  # `--strict`: stored, but something was skipped


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def print_summary(summary: IngestSummary, show_problems: int) -> None:
    """The ingest summary for people: problems on stderr, counts on stdout."""
    for problem in summary.problems[:show_problems]:
        print(f"skipped {problem}", file=sys.stderr)
    hidden = len(summary.problems) - show_problems
    if hidden > 0:
        print(f"... and {hidden} more problems (--show-problems N, or --json)", file=sys.stderr)
    s = summary
    lines = [f"documents: {s.documents_added} added, {s.documents_replaced} replaced, "
             f"{s.documents_unchanged} unchanged",
             f"passages:  {s.passages_added} added, {s.passages_present} already present",
             f"entities:  {s.entities_added} added, {s.entities_present} already present",
             f"relations: {s.relations_added} added, {s.relations_present} already present "
             f"({s.relations_linked} linked to new passages)"]
    if s.passages_removed or s.relations_removed or s.relations_unlinked:
        lines.append(f"removed:   {s.passages_removed} passages, {s.relations_removed} "
                     f"relations, {s.entities_removed} entities no longer in the replaced or "
                     f"retired documents ({s.relations_unlinked} relations kept with fewer "
                     "passages)")
    if s.passages_updated:
        lines.append(f"updated:   {s.passages_updated} passages (metadata or text case)")
    if s.documents_retired:
        lines.append(f"retired:   {_count(s.documents_retired, 'document')} stored under the "
                     "id an earlier version gave the same file (its path as typed)")
    listed = " (not read: listed above)" if s.files_skipped else ""
    lines.append(f"skipped:   {_count(s.files_skipped, 'file')}{listed}, {s.rows_skipped} "
                 f"malformed rows, {s.triplets_skipped} malformed triplets")
    lines.append(f"embedded:  {s.texts_embedded} texts in {s.seconds:.1f}s")
    print("\n".join(lines))


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser],
               parents: list[argparse.ArgumentParser]) -> None:
    """The `ingest` subcommand."""
    p = sub.add_parser("ingest", parents=parents,
                       help="ingest passage/triplet files and raw documents")
    p.add_argument("files", nargs="+", help="files or folders: JSON, JSONL or HippoRAG OpenIE "
                   f"rows, and {', '.join(SUFFIXES)} documents (told apart by suffix and "
                   "content)")
    p.add_argument("--extract", action="store_true",
                   help="read every text file as a raw document, even one holding JSON")
    p.add_argument("--extractor", choices=extract.EXTRACTORS, default="auto",
                   help="for raw documents: force the offline extractor or the LLM (auto: "
                        "the LLM when one is configured)")
    p.add_argument("--dry-run", action="store_true",
                   help="read, chunk and (offline) extract; print what would be stored, "
                        "store nothing, call no LLM")
    p.add_argument("--chunk-tokens", type=int, default=DEFAULT_CHUNK_TOKENS,
                   help=f"raw documents: largest chunk in tokens, headings included "
                        f"({DEFAULT_CHUNK_TOKENS})")
    p.add_argument("--overlap-tokens", type=int, default=DEFAULT_OVERLAP_TOKENS,
                   help=f"raw documents: overlap between the pieces of a paragraph longer "
                        f"than a chunk ({DEFAULT_OVERLAP_TOKENS})")
    p.add_argument("--root", metavar="DIR",
                   help="document ids are paths within DIR (default: within the folder "
                        "given; a file given by itself is its name)")
    p.add_argument("--strict", action="store_true",
                   help=f"exit {STRICT_EXIT} when a file, row or triplet was skipped (what "
                        "was good is still stored)")
    p.add_argument("--append", action="store_true",
                   help="keep the stored passages of documents ingested again (default: "
                        "replace them: passages no longer in a document are removed)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--show-problems", type=int, default=10, metavar="N",
                   help="list the first N skipped rows/triplets (default 10)")
    p.set_defaults(func=cmd_ingest)
