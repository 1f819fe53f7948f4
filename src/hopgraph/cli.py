"""The `hopgraph` command line: ingest, query, stats, demo, drop."""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from hopgraph.api import GraphRAG
from hopgraph.embed import EmbedderError
from hopgraph.loaders import InputError
from hopgraph.retrieve import METHODS, Retrieval
from hopgraph.store import StoreError

_EXPECTED_ERRORS = (InputError, StoreError, EmbedderError, ValueError, FileNotFoundError)


def _open(args: argparse.Namespace, create: bool = True) -> GraphRAG:
    return GraphRAG(uri=args.uri, graph=args.graph, token=args.token, embedder=args.embedder,
                    create=create)


# --- ingest --------------------------------------------------------------------------------

class _Bars:
    """One tqdm bar per embedding stage."""

    def __init__(self) -> None:
        from tqdm import tqdm

        self._tqdm = tqdm
        self._bars: dict[str, Any] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        bar = self._bars.get(stage)
        if bar is None:
            bar = self._bars[stage] = self._tqdm(total=total, desc=f"embed {stage}", unit="txt",
                                                 file=sys.stderr, leave=False)
        bar.update(done - bar.n)
        if done >= total:
            bar.close()


def cmd_ingest(args: argparse.Namespace) -> int:
    with _open(args) as rag:
        summary = rag.add_files(args.files, progress=None if args.quiet else _Bars())
    if args.json:
        print(json.dumps(summary.as_dict(), ensure_ascii=False, indent=2))
        return 0
    for problem in summary.problems[: args.show_problems]:
        print(f"skipped {problem.where}: {problem.what}", file=sys.stderr)
    hidden = len(summary.problems) - args.show_problems
    if hidden > 0:
        print(f"... and {hidden} more problems (--show-problems N, or --json)", file=sys.stderr)
    print(
        f"passages:  {summary.passages_added} added, {summary.passages_present} already present\n"
        f"entities:  {summary.entities_added} added, {summary.entities_present} already present\n"
        f"relations: {summary.relations_added} added, {summary.relations_present} already "
        f"present ({summary.relations_linked} linked to new passages)\n"
        f"skipped:   {summary.rows_skipped} malformed rows, "
        f"{summary.triplets_skipped} malformed triplets\n"
        f"embedded:  {summary.texts_embedded} texts in {summary.seconds:.1f}s"
    )
    return 0


# --- query ---------------------------------------------------------------------------------

def _short(text: str, width: int) -> str:
    return textwrap.shorten(" ".join(text.split()), width=width, placeholder=" …")


def _side_by_side(left: Retrieval, right: Retrieval, width: int) -> str:
    col = max(30, (width - 3) // 2)
    lines = [f"{'GRAPH (' + left.method + ')':<{col}} | NAIVE", f"{'-' * col}-+-{'-' * col}"]
    for i in range(max(len(left.passages), len(right.passages))):
        cells = []
        for result in (left, right):
            if i < len(result.passages):
                p = result.passages[i]
                cells.append(textwrap.wrap(f"{i + 1}. [{p.score:.3f}] {_short(p.text, 3 * col)}",
                                           col))
            else:
                cells.append([])
        for j in range(max(len(cells[0]), len(cells[1]))):
            a = cells[0][j] if j < len(cells[0]) else ""
            b = cells[1][j] if j < len(cells[1]) else ""
            lines.append(f"{a:<{col}} | {b}")
    return "\n".join(lines)


def _print_query(graph: Retrieval, naive: Retrieval) -> None:
    width = shutil.get_terminal_size((120, 20)).columns
    print(f"Q: {graph.question}\n")
    print(_side_by_side(graph, naive, width))
    if graph.entities:
        print("\nentities: " + ", ".join(f"{e['name']} ({e['how']})" for e in graph.entities))
    if graph.relations:
        print("relations used:")
        for rel in graph.relations[:8]:
            print(f"  [{rel.score:.3f}] {rel.text}")
    for note in graph.notes:
        print(f"note: {note}")
    timings = ", ".join(f"{k} {v:.1f}" for k, v in graph.timings_ms.items())
    print(f"timings (ms): {timings}; naive total {naive.timings_ms.get('total', 0):.1f}")


def _query_json(graph: Retrieval, naive: Retrieval) -> dict[str, Any]:
    def passages(result: Retrieval) -> list[dict[str, Any]]:
        return [{"id": p.id, "text": p.text, "score": round(p.score, 6),
                 "relations": p.relations} for p in result.passages]

    return {
        "question": graph.question,
        "method": graph.method,
        "graph": passages(graph),
        "naive": passages(naive),
        "entities": graph.entities,
        "relations": [{"id": r.id, "text": r.text, "score": round(r.score, 6)}
                      for r in graph.relations],
        "timings_ms": graph.timings_ms,
        "naive_timings_ms": naive.timings_ms,
        "notes": graph.notes,
    }


def cmd_query(args: argparse.Namespace) -> int:
    with _open(args, create=False) as rag:
        graph = rag.retrieve(args.question, top_k=args.top_k, degree=args.degree,
                             entities=args.entity, method=args.method)
        naive = rag.naive(args.question, top_k=args.top_k)
    if args.json:
        print(json.dumps(_query_json(graph, naive), ensure_ascii=False, indent=2))
    else:
        _print_query(graph, naive)
    return 0


# --- stats, drop, demo -----------------------------------------------------------------------

def cmd_stats(args: argparse.Namespace) -> int:
    with _open(args, create=False) as rag:
        stats = rag.stats()
    if args.json:
        print(json.dumps(stats, ensure_ascii=False, indent=2))
    else:
        for key, value in stats.items():
            print(f"{key:<10} {value}")
    return 0


def cmd_drop(args: argparse.Namespace) -> int:
    graph = args.graph or os.environ.get("HOPGRAPH_GRAPH") or "hopgraph"
    if not args.yes:
        if not sys.stdin.isatty():
            print("drop: refusing without --yes (no terminal to ask on)", file=sys.stderr)
            return 2
        answer = input(f"Delete graph {graph!r} and everything in it? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing deleted")
            return 1
    with _open(args, create=False) as rag:
        rag.drop()
    print(f"dropped graph {graph!r}")
    return 0


def demo_data_path() -> Path:
    """The Bernoulli demo file: $HOPGRAPH_DEMO_DATA, or ../shared/data beside the project."""
    env = os.environ.get("HOPGRAPH_DEMO_DATA")
    candidates = [Path(env)] if env else []
    relative = Path("shared/data/bernoulli/nano.json")
    for base in (Path.cwd(), *Path.cwd().parents, *Path(__file__).resolve().parents):
        candidates.append(base / ".." / relative)
        candidates.append(base / relative)
    for path in candidates:
        if path.is_file():
            return path.resolve()
    raise FileNotFoundError(
        "the Bernoulli demo data (shared/data/bernoulli/nano.json) was not found beside the "
        "project; set HOPGRAPH_DEMO_DATA=/path/to/nano.json"
    )


def cmd_demo(args: argparse.Namespace) -> int:
    path = Path(args.data) if args.data else demo_data_path()
    question = json.loads(path.read_text(encoding="utf-8"))["queries"][0]["question"]
    with tempfile.TemporaryDirectory(prefix="hopgraph-demo-") as tmp:
        uri = str(Path(tmp) / "demo.db")
        with GraphRAG(uri=uri, graph="demo", embedder=args.embedder) as rag:
            summary = rag.add_files([path])
            print(f"loaded {path.name}: {summary.passages_added} passages, "
                  f"{summary.entities_added} entities, {summary.relations_added} relations "
                  f"({summary.seconds:.1f}s)\n")
            graph = rag.retrieve(question, top_k=args.top_k)
            naive = rag.naive(question, top_k=args.top_k)
    _print_query(graph, naive)
    return 0


# --- eval --------------------------------------------------------------------------------------

def cmd_eval(args: argparse.Namespace) -> int:
    from hopgraph.evaluate import (
        EVAL_METHODS,
        load_questions,
        markdown_table,
        report_json,
        score_method,
    )

    questions = load_questions(Path(args.questions), Path(args.corpus))
    methods = args.method or list(EVAL_METHODS)
    with tempfile.TemporaryDirectory(prefix="hopgraph-eval-") as tmp:
        uri = args.uri or str(Path(tmp) / "eval.db")
        graph = args.graph or "eval"
        with GraphRAG(uri=uri, graph=graph, token=args.token, embedder=args.embedder) as rag:
            summary = rag.add_files([args.openie], progress=None if args.quiet else _Bars())
        print(f"indexed {summary.passages_added} passages ({summary.passages_present} "
              f"present), {summary.relations_added} relations, skipped "
              f"{summary.triplets_skipped} malformed triplets in {summary.seconds:.1f}s; "
              f"{len(questions)} questions", file=sys.stderr)
        # Reopen: Milvus Lite keeps compacting and indexing after a large ingest, and that
        # background work would otherwise be timed as query latency.
        with GraphRAG(uri=uri, graph=graph, token=args.token, embedder=args.embedder,
                      create=False) as rag:
            for method in methods:  # warm-up: model load and first searches are not timed
                rag.retrieve(questions[0].text, top_k=5, degree=args.degree, method=method)
            scores = {
                method: score_method(
                    lambda q, m=method: [p.id for p in rag.retrieve(
                        q, top_k=5, degree=args.degree, method=m).passages],
                    questions,
                )
                for method in methods
            }
    print(markdown_table(scores, "default"))
    if args.json:
        report = report_json(scores, "default", summary.seconds, len(questions))
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


# --- parser --------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--uri", help="Milvus URI: a .db path (Milvus Lite, default "
                        "./hopgraph.db) or http://host:19530 [env HOPGRAPH_URI]")
    common.add_argument("--token", help="Milvus / Zilliz Cloud token [env HOPGRAPH_TOKEN]")
    common.add_argument("--graph", help="graph name; one database holds many "
                        "(default hopgraph) [env HOPGRAPH_GRAPH]")
    common.add_argument("--embedder", help="'local' (all-MiniLM-L6-v2, default) or "
                        "'openai:MODEL' [env HOPGRAPH_EMBEDDER]")
    common.add_argument("-v", "--verbose", action="store_true", help="log progress details")

    parser = argparse.ArgumentParser(prog="hopgraph", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", parents=[common], help="ingest passage/triplet files")
    p.add_argument("files", nargs="+", help="JSON, JSONL or HippoRAG OpenIE files")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--show-problems", type=int, default=10, metavar="N",
                   help="list the first N skipped rows/triplets (default 10)")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("query", parents=[common], help="retrieve passages for a question")
    p.add_argument("question")
    p.add_argument("--top-k", type=int, default=5, help="passages to return (default 5)")
    p.add_argument("--degree", type=int, default=1, help="expansion degree (default 1)")
    p.add_argument("--entity", action="append", metavar="E",
                   help="query entity (repeatable); default: linked from the question")
    p.add_argument("--method", choices=METHODS, default="default", help="retrieval method")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_query)

    p = sub.add_parser("stats", parents=[common], help="row counts of a graph")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("drop", parents=[common], help="delete a graph")
    p.add_argument("--yes", action="store_true", help="do not ask")
    p.set_defaults(func=cmd_drop)

    p = sub.add_parser("demo", parents=[common], help="Bernoulli demo in a temporary graph")
    p.add_argument("--data", help="demo file (default: ../shared/data/bernoulli/nano.json)")
    p.add_argument("--top-k", type=int, default=2)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("eval", parents=[common], help="Recall@2/5 and latency on a benchmark")
    p.add_argument("--corpus", required=True, help="corpus.json ([{title, text}])")
    p.add_argument("--openie", required=True, help="HippoRAG OpenIE file with the triplets")
    p.add_argument("--questions", required=True, help="questions with supporting paragraphs")
    p.add_argument("--method", action="append", choices=METHODS,
                   help="method to run (repeatable; default: all)")
    p.add_argument("--degree", type=int, default=1, help="expansion degree (default 1)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_eval)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `hopgraph` command."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except _EXPECTED_ERRORS as exc:
        print(f"hopgraph {args.command}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
