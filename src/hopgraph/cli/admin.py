"""`hopgraph stats`, `check`, `export`, `drop` and `demo`: looking after graphs, and the demo."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from hopgraph.api import GraphRAG
from hopgraph.cli.common import embed_options, open_store
from hopgraph.cli.query import print_comparison
from hopgraph.config import demo_data_override
from hopgraph.errors import InputError
from hopgraph.export import FORMATS, export_graphml, export_jsonl
from hopgraph.ingest.loaders import read_text
from hopgraph.store.check import check, check_and_repair


def cmd_stats(args: argparse.Namespace) -> int:
    """Row counts and stored settings of a graph."""
    store = open_store(args)
    try:
        stats = store.stats()
    finally:
        store.close()
    if args.json:
        print(json.dumps(stats, ensure_ascii=False, indent=2))
    else:
        for key, value in stats.items():
            print(f"{key:<10} {value}")
    return 0


def cmd_drop(args: argparse.Namespace) -> int:
    """Delete a graph, after asking (or with --yes)."""
    store = open_store(args)
    try:
        if not args.yes:
            if not sys.stdin.isatty():
                print("drop: refusing without --yes (no terminal to ask on)", file=sys.stderr)
                return 2
            answer = input(f"Delete graph {store.graph!r} at {store.uri} and everything in "
                           "it? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("nothing deleted")
                return 1
        store.drop()
    finally:
        store.close()
    print(f"dropped graph {store.graph!r}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """A graph's invariants; with --repair, the safe fixes. Exit 0 when clean (after repairs),
    1 when problems remain."""
    store = open_store(args)
    try:
        report = check_and_repair(store) if args.repair else check(store)
    finally:
        store.close()
    if args.json:
        print(json.dumps(report.as_dict(), ensure_ascii=False, indent=2))
    else:
        counts = ", ".join(f"{n} {kind}" for kind, n in report.counts.items())
        print(f"graph {report.graph!r} at {report.uri}: {counts}")
        if args.repair:
            print(f"repaired {report.repaired} rows")
        for finding in report.problems[:50]:
            fix = " (--repair fixes it)" if finding.repairable else ""
            print(f"  {finding.kind}: {finding.id}: {finding.detail}{fix}")
        if len(report.problems) > 50:
            print(f"  ... and {len(report.problems) - 50} more (--json lists them all)")
        print(f"{len(report.problems)} problems")
    return 1 if report.problems else 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write the graph as JSONL (re-ingestable) or GraphML, to --out or stdout, read
    strong: with every write acknowledged before, by any process."""
    store = open_store(args)
    try:
        with store.strong_reads():
            if args.format == "jsonl":
                if args.out:
                    with open(args.out, "w", encoding="utf-8") as out:
                        report = export_jsonl(store, out)
                else:
                    report = export_jsonl(store, sys.stdout)
            else:
                target = Path(args.out) if args.out else sys.stdout.buffer
                report = export_graphml(store, target, passages=args.passages)
                sys.stdout.flush()
    finally:
        store.close()
    print(f"exported {report.entities} entities, {report.relations} relations, "
          f"{report.passages} passages" + (f" to {args.out}" if args.out else ""),
          file=sys.stderr)
    for note in report.skipped[:20]:
        print(f"left out: {note}", file=sys.stderr)
    if len(report.skipped) > 20:
        print(f"left out: ... and {len(report.skipped) - 20} more relations", file=sys.stderr)
    return 0


def demo_data_path() -> Path:
    """The Bernoulli demo file: $HOPGRAPH_DEMO_DATA, or ../shared/data beside the project."""
    override = demo_data_override()
    candidates = [override] if override else []
    relative = Path("shared/data/bernoulli/nano.json")
    for base in (Path.cwd(), *Path.cwd().parents, *Path(__file__).resolve().parents):
        candidates.append(base / ".." / relative)
        candidates.append(base / relative)
    for path in candidates:
        if path.is_file():
            return path.resolve()
    raise InputError("the Bernoulli demo data (shared/data/bernoulli/nano.json) was not found "
                     "beside the project", fix="set HOPGRAPH_DEMO_DATA=/path/to/nano.json")


def cmd_demo(args: argparse.Namespace) -> int:
    """The Bernoulli side by side, in a fresh temporary graph."""
    path = Path(args.data) if args.data else demo_data_path()
    try:
        question = json.loads(read_text(path))["queries"][0]["question"]
    except (json.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
        raise InputError(f"not a demo file: no queries[0].question ({exc!r})",
                         where=str(path)) from None
    with tempfile.TemporaryDirectory(prefix="hopgraph-demo-") as tmp:
        uri = str(Path(tmp) / "demo.db")
        with GraphRAG(uri=uri, graph="demo", **embed_options(args)) as rag:
            summary = rag.add_files([path])
            print(f"loaded {path.name}: {summary.passages_added} passages, "
                  f"{summary.entities_added} entities, {summary.relations_added} relations "
                  f"({summary.seconds:.1f}s)\n")
            graph = rag.retrieve(question, top_k=args.top_k)
            naive = rag.naive(question, top_k=args.top_k)
    print_comparison(graph, naive)
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser],
                parents: list[argparse.ArgumentParser]) -> None:
    """The `stats`, `check`, `export`, `drop` and `demo` subcommands."""
    p = sub.add_parser("stats", parents=parents, help="row counts of a graph")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("drop", parents=parents, help="delete a graph")
    p.add_argument("--yes", action="store_true", help="do not ask")
    p.set_defaults(func=cmd_drop)

    p = sub.add_parser("check", parents=parents,
                       help="verify a graph's invariants (and repair what is safe)")
    p.add_argument("--repair", action="store_true",
                   help="drop dangling passage ids, delete relations left without passages "
                        "and entities without relations")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("export", parents=parents,
                       help="write the graph as JSONL (ingests back) or GraphML")
    p.add_argument("--format", choices=FORMATS, default="jsonl")
    p.add_argument("--out", metavar="FILE", help="write here (default: standard output)")
    p.add_argument("--passages", action="store_true",
                   help="GraphML: passages as nodes too (JSONL always holds them)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("demo", parents=parents, help="Bernoulli demo in a temporary graph")
    p.add_argument("--data", help="demo file (default: ../shared/data/bernoulli/nano.json)")
    p.add_argument("--top-k", type=int, default=2)
    p.set_defaults(func=cmd_demo)
