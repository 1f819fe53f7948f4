"""`hopgraph eval`: the benchmark harness on the command line."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from hopgraph.api import GraphRAG
from hopgraph.cli.common import Bars
from hopgraph.errors import InputError
from hopgraph.ingest.loaders import read_text
from hopgraph.records import LoadReport
from hopgraph.retrieve import registry
from hopgraph.retrieve.query import DEFAULT_DEGREE

RULES = ("title", "pairs", "surnames", "numbers")  # offline_extractor.Rules


def cmd_eval(args: argparse.Namespace) -> int:
    """Recall@2/5 and latency of each method on a HippoRAG-format benchmark."""
    from hopgraph.evaluate import evaluate, load_questions, markdown_table, report_json

    questions = load_questions(Path(args.questions), Path(args.corpus))
    methods = args.method or list(registry.offline_names())
    with tempfile.TemporaryDirectory(prefix="hopgraph-eval-") as tmp:
        # --graph names a graph to reuse (in --uri / HOPGRAPH_URI / ./hopgraph.db); without
        # it the benchmark gets a fresh graph in a temporary database.
        uri = args.uri if (args.uri or args.graph) else str(Path(tmp) / "eval.db")
        graph = args.graph or "eval"
        with GraphRAG(uri=uri, graph=graph, token=args.token, embedder=args.embedder) as rag:
            bars = None if args.quiet else Bars()
            if args.extract:
                rules = {**dict.fromkeys(args.without or [], False),
                         **dict.fromkeys(args.with_rule or [], True)}
                summary = rag.add_reports([_extracted(Path(args.corpus), rules)],
                                          progress=bars)
            else:
                summary = rag.add_files([args.openie], progress=bars)
        print(f"indexed {summary.passages_added} passages ({summary.passages_present} "
              f"present), {summary.relations_added} relations, skipped "
              f"{summary.triplets_skipped} malformed triplets in {summary.seconds:.1f}s; "
              f"{len(questions)} questions", file=sys.stderr)
        # Reopen, and wait for Milvus to index every row: Milvus Lite goes on indexing
        # after a large ingest, and that background work would be timed as query latency.
        with GraphRAG(uri=uri, graph=graph, token=args.token, embedder=args.embedder,
                      create=False) as rag:
            waited = rag.store.wait_indexed()
            print(f"waited {waited:.1f}s for Milvus to finish indexing", file=sys.stderr)
            scores = evaluate(rag.retriever, questions, methods, args.degree)
    print(markdown_table(scores, registry.DEFAULT))
    print(f"\nindexing: {summary.seconds:.1f} s ({summary.passages_added} passages, "
          f"{summary.relations_added} relations added; {summary.texts_embedded} texts "
          f"embedded); {len(questions)} questions")
    if args.json:
        report = report_json(scores, registry.DEFAULT, summary.seconds, len(questions))
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


def _extracted(corpus: Path, rules: dict[str, bool]) -> LoadReport:
    """The corpus's passages with triplets from the offline extractor (raw text only), the
    named rules turned on or off (for the ablation)."""
    import time

    from hopgraph.ingest.offline_extractor import Rules, extract_corpus

    started = time.perf_counter()
    items = json.loads(read_text(corpus))
    if not isinstance(items, list):
        raise InputError('expected a list of {"title", "text"} objects', where=str(corpus))
    report, stats = extract_corpus(items, str(corpus), Rules(**rules))
    seconds = time.perf_counter() - started
    print(f"offline extractor: {stats.passages} passages, {stats.sentences} sentences, "
          f"{stats.triplets} triplets in {seconds:.1f}s "
          f"({stats.passages / max(seconds, 1e-9):.0f} passages/s)", file=sys.stderr)
    return report


def add_parser(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]
               ) -> None:
    """The `eval` subcommand."""
    p = sub.add_parser("eval", parents=parents, help="Recall@2/5 and latency on a benchmark")
    p.add_argument("--corpus", required=True, help="corpus.json ([{title, text}])")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--openie", help="HippoRAG OpenIE file with the triplets")
    source.add_argument("--extract", choices=["offline"],
                        help="build the graph from the corpus text with the offline extractor")
    p.add_argument("--without", action="append", choices=RULES, metavar="RULE",
                   help=f"with --extract offline: turn a rule off ({', '.join(RULES)}; "
                        "repeatable; for the ablation)")
    p.add_argument("--with", dest="with_rule", action="append", choices=RULES, metavar="RULE",
                   help="with --extract offline: turn a rule on (surnames is off by default)")
    p.add_argument("--questions", required=True, help="questions with supporting paragraphs")
    p.add_argument("--method", action="append", choices=registry.offline_names(),
                   help="method to run (repeatable; default: every method that needs no LLM)")
    p.add_argument("--degree", type=int, default=DEFAULT_DEGREE,
                   help=f"expansion degree (default {DEFAULT_DEGREE})")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_eval)
