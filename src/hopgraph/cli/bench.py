"""`hopgraph eval`: the benchmark harness on the command line: a corpus given as passages
(Recall@2/5), or a folder of documents ingested with the product's defaults (recall at a
budget of words, `hopgraph.budget`)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from hopgraph.api import GraphRAG
from hopgraph.cli.common import Bars, embed_options, where_of, where_options
from hopgraph.config import NAME_SOURCES, Settings
from hopgraph.errors import InputError, UsageError
from hopgraph.ingest.loaders import read_text
from hopgraph.ingest.mentions import Rules
from hopgraph.records import LoadReport
from hopgraph.retrieve import registry
from hopgraph.retrieve.query import DEFAULT_DEGREE

# the offline extractor's rules that turn on and off (`names` says where names come from)
RULES = tuple(f.name for f in dataclasses.fields(Rules) if f.type in (bool, "bool"))


def cmd_eval(args: argparse.Namespace) -> int:
    """Recall@2/5 and latency of each method on a HippoRAG-format benchmark."""
    from hopgraph.evaluate import evaluate, load_questions, markdown_table, report_json

    if args.documents:
        return _eval_documents(args)
    if not args.corpus or not (args.openie or args.extract):
        raise UsageError("eval needs --corpus with --openie FILE or --extract offline, or "
                         "--documents DIR")
    questions = load_questions(Path(args.questions), Path(args.corpus))
    methods = args.method or list(registry.offline_names())
    with tempfile.TemporaryDirectory(prefix="hopgraph-eval-") as tmp:
        # --graph names a graph to reuse (in --uri / HOPGRAPH_URI / ./hopgraph.db); without
        # it the benchmark gets a fresh graph in a temporary database.
        uri = args.uri if (args.uri or args.graph) else str(Path(tmp) / "eval.db")
        graph = args.graph or "eval"
        with GraphRAG(uri=uri, graph=graph, token=args.token, **embed_options(args)) as rag:
            bars = None if args.quiet else Bars()
            if args.extract:
                rules = {**dict.fromkeys(args.without or [], False),
                         **dict.fromkeys(args.with_rule or [], True)}
                summary = rag.add_reports([_extracted(Path(args.corpus), rules, args.names)],
                                          progress=bars)
            else:
                summary = rag.add_files([args.openie], progress=bars)
        print(f"indexed {summary.passages_added} passages ({summary.passages_present} "
              f"present), {summary.relations_added} relations, skipped "
              f"{summary.triplets_skipped} malformed triplets in {summary.seconds:.1f}s; "
              f"{len(questions)} questions", file=sys.stderr)
        # Reopen, and wait for Milvus to index every row: Milvus Lite goes on indexing
        # after a large ingest, and that background work would be timed as query latency.
        with GraphRAG(uri=uri, graph=graph, token=args.token, **embed_options(args),
                      create=False) as rag:
            waited = rag.wait_indexed()
            print(f"waited {waited:.1f}s for Milvus to finish indexing", file=sys.stderr)
            scores = evaluate(rag, questions, methods, args.degree, where_of(args))
            budgets = _budgets(rag, args, methods)
    print(markdown_table(scores, registry.DEFAULT))
    if budgets is not None:
        print(f"\nrecall at a budget of words (passages as chunks):\n{budgets[0]}")
    print(f"\nindexing: {summary.seconds:.1f} s ({summary.passages_added} passages, "
          f"{summary.relations_added} relations added; {summary.texts_embedded} texts "
          f"embedded); {len(questions)} questions")
    if args.json:
        report = report_json(scores, registry.DEFAULT, summary.seconds, len(questions))
        if budgets is not None:
            report["budgets"] = budgets[1]
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


def _budgets(rag: GraphRAG, args: argparse.Namespace, methods: list[str]
             ) -> tuple[str, dict[str, Any]] | None:
    """With --budgets: recall at those budgets of words (table, JSON), else None."""
    if not args.budgets:
        return None
    from hopgraph.budget import budget_json, budget_table, evaluate_budgets, load_gold

    scores = evaluate_budgets(rag, load_gold(Path(args.questions)), methods,
                              tuple(args.budgets), where_of(args))
    return budget_table(scores), budget_json(scores)


def _eval_documents(args: argparse.Namespace) -> int:
    """A folder of documents ingested as `hopgraph ingest` would (chunking, extraction),
    scored as recall at budgets of words."""
    from hopgraph.budget import BUDGETS

    args.budgets = args.budgets or list(BUDGETS)
    methods = args.method or ["naive", registry.DEFAULT]
    options = {k: v for k, v in (("chunk_tokens", args.chunk_tokens),
                                 ("overlap_tokens", args.overlap_tokens)) if v is not None}
    with tempfile.TemporaryDirectory(prefix="hopgraph-eval-") as tmp:
        uri = args.uri if (args.uri or args.graph) else str(Path(tmp) / "eval.db")
        with GraphRAG(uri=uri, graph=args.graph or "eval", token=args.token,
                      **embed_options(args)) as rag:
            summary = rag.add_files([args.documents], progress=None if args.quiet else Bars(),
                                    **options)
            rag.wait_indexed()
            table, rows = _budgets(rag, args, methods) or ("", {})
    print(f"{summary.passages_added} chunks ({summary.passages_present} present) from "
          f"{args.documents} in {summary.seconds:.1f}s; extractor {summary.extractor}",
          file=sys.stderr)
    print(table)
    if args.json:
        report = {"documents": str(args.documents), "chunks": summary.passages_added,
                  "index_seconds": round(summary.seconds, 2), "budgets": rows}
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


def _extracted(corpus: Path, rules: dict[str, bool], names: str | None) -> LoadReport:
    """The corpus's passages with triplets from the offline extractor (raw text only), the
    named rules turned on or off (for the ablation), names from `names` (default
    $HOPGRAPH_NAMES, else the rules)."""
    import time

    from hopgraph.ingest.offline_records import extract_corpus

    started = time.perf_counter()
    items = json.loads(read_text(corpus))
    if not isinstance(items, list):
        raise InputError('expected a list of {"title", "text"} objects', where=str(corpus))
    report, stats = extract_corpus(items, str(corpus),
                                   Rules(**rules, names=names or Settings.load().names))
    seconds = time.perf_counter() - started
    print(f"offline extractor: {stats.passages} passages, {stats.sentences} sentences, "
          f"{stats.triplets} triplets in {seconds:.1f}s "
          f"({stats.passages / max(seconds, 1e-9):.0f} passages/s)", file=sys.stderr)
    return report


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser],
               parents: list[argparse.ArgumentParser]) -> None:
    """The `eval` subcommand."""
    p = sub.add_parser("eval", parents=parents, help="Recall@2/5 and latency on a benchmark")
    p.add_argument("--corpus", help="corpus.json ([{title, text}]): its passages as given")
    p.add_argument("--documents", metavar="DIR",
                   help="instead of --corpus: a folder of files, ingested as `hopgraph "
                        "ingest` does; scored at budgets of words")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--openie", help="HippoRAG OpenIE file with the triplets")
    source.add_argument("--extract", choices=["offline"],
                        help="build the graph from the corpus text with the offline extractor")
    p.add_argument("--without", action="append", choices=RULES, metavar="RULE",
                   help=f"with --extract offline: turn a rule off ({', '.join(RULES)}; "
                        "repeatable; for the ablation)")
    p.add_argument("--with", dest="with_rule", action="append", choices=RULES, metavar="RULE",
                   help="with --extract offline: turn a rule on (surnames is off by default)")
    p.add_argument("--names", choices=NAME_SOURCES,
                   help="with --extract offline: where names come from: the rules, spaCy or "
                        "both (default $HOPGRAPH_NAMES, else rules; spaCy needs the spacy extra)")
    p.add_argument("--questions", required=True, help="questions with supporting paragraphs")
    p.add_argument("--method", action="append", choices=registry.offline_names(),
                   help="method to run (repeatable; default: every method that needs no LLM)")
    p.add_argument("--degree", type=int, default=DEFAULT_DEGREE,
                   help=f"expansion degree (default {DEFAULT_DEGREE})")
    p.add_argument("--budgets", type=_numbers, metavar="N,N,...",
                   help="recall at these budgets of retrieved words (with --documents: "
                        "default 200,400,800)")
    p.add_argument("--chunk-tokens", type=int, help="with --documents: chunk size (default: "
                   "ingest's)")
    p.add_argument("--overlap-tokens", type=int, help="with --documents: chunk overlap "
                   "(default: ingest's)")
    where_options(p)
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_eval)


def _numbers(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like 200,400,800, got {text!r}"
                                         ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive numbers, got {text!r}")
    return values
