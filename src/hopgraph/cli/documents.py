"""`hopgraph docs` and `hopgraph delete`: the documents of a graph, and removing them."""

from __future__ import annotations

import argparse
import json
import sys

from hopgraph.cli.common import open_graph, open_store
from hopgraph.store.inventory import documents


def cmd_docs(args: argparse.Namespace) -> int:
    """List the stored documents with their passage counts, by document id."""
    store = open_store(args)
    try:
        with store.strong_reads():  # every write acknowledged before, by any process
            counts = documents(store)
        state = store.incomplete
    finally:
        store.close()
    if state:
        print(f"warning: {state}", file=sys.stderr)
    rows = sorted(counts.items())
    if args.json:
        print(json.dumps([{"doc_id": doc, "passages": n} for doc, n in rows],
                         ensure_ascii=False, indent=2))
        return 0
    for doc, n in rows:
        print(f"{n:>8}  {doc}")
    print(f"{len(rows)} documents, {sum(counts.values())} passages")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    """Delete documents with the relations and entities only they hold, after asking (or
    with --yes). Exit 1 if any id was not stored (the others are deleted)."""
    with open_graph(args, create=False) as rag:
        stored = rag.documents()
        found = [d for d in dict.fromkeys(args.doc_ids) if d in stored]
        if found and not args.yes:
            if not sys.stdin.isatty():
                print("delete: refusing without --yes (no terminal to ask on)", file=sys.stderr)
                return 2
            for doc in found:
                print(f"{stored[doc]:>8} passages  {doc}")
            answer = input(f"Delete these {len(found)} documents from graph "
                           f"{rag.name!r}? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("nothing deleted")
                return 1
        removal = rag.delete(args.doc_ids)
    for doc in removal.missing:
        print(f"not stored: {doc}", file=sys.stderr)
    if args.json:
        print(json.dumps(removal.as_dict(), ensure_ascii=False, indent=2))
    else:
        print(f"deleted {len(removal.documents)} documents: {removal.passages} passages, "
              f"{removal.relations} relations, {removal.entities} entities "
              f"({removal.relations_unlinked} shared relations kept, minus these passages) "
              f"in {removal.seconds:.2f}s")
    return 1 if removal.missing else 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser],
                parents: list[argparse.ArgumentParser]) -> None:
    """The `docs` and `delete` subcommands."""
    p = sub.add_parser("docs", parents=parents,
                       help="list the graph's documents with their passage counts")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_docs)

    p = sub.add_parser("delete", parents=parents,
                       help="delete documents, with relations and entities only they hold")
    p.add_argument("doc_ids", nargs="+", metavar="DOC_ID",
                   help="document ids, as `hopgraph docs` lists them")
    p.add_argument("--yes", action="store_true", help="do not ask")
    p.add_argument("--json", action="store_true", help="print what was removed as JSON")
    p.set_defaults(func=cmd_delete)
