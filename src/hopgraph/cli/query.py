"""`hopgraph query` and `hopgraph ask`: one question, graph retrieval beside naive retrieval."""

from __future__ import annotations

import argparse
import json
import shutil
import textwrap

from hopgraph.answer import ANSWER_TOP_K, stream_answer
from hopgraph.cli.common import llm_client, open_graph, short, where_of, where_options
from hopgraph.config import NO_LLM_HELP
from hopgraph.errors import LLMError
from hopgraph.llm import LLMClient
from hopgraph.records import Retrieval, cited_sources, comparison_json
from hopgraph.retrieve import registry
from hopgraph.retrieve.query import DEFAULT_DEGREE, DEFAULT_TOP_K, Query


def _side_by_side(left: Retrieval, right: Retrieval, width: int) -> str:
    col = max(30, (width - 3) // 2)
    lines = [f"{'GRAPH (' + left.method + ')':<{col}} | NAIVE", f"{'-' * col}-+-{'-' * col}"]
    for i in range(max(len(left.passages), len(right.passages))):
        cells = []
        for result in (left, right):
            if i < len(result.passages):
                p = result.passages[i]
                cells.append(textwrap.wrap(f"{i + 1}. [{p.score:.3f}] {short(p.text, 3 * col)}",
                                           col))
            else:
                cells.append([])
        for j in range(max(len(cells[0]), len(cells[1]))):
            a = cells[0][j] if j < len(cells[0]) else ""
            b = cells[1][j] if j < len(cells[1]) else ""
            lines.append(f"{a:<{col}} | {b}")
    return "\n".join(lines)


def print_comparison(graph: Retrieval, naive: Retrieval) -> None:
    """Graph and naive passages side by side, then entities, relations, notes and timings."""
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


def _query(args: argparse.Namespace, llm: LLMClient | None) -> Query:
    """The `Query` the arguments ask for (checked before seconds of opening the graph)."""
    return Query(args.question, args.method or registry.default_for(llm is not None),
                 args.top_k, args.degree, tuple(args.entity) if args.entity else None,
                 where_of(args))


def _retrieve_both(args: argparse.Namespace, llm: LLMClient | None, naive: bool = True
                   ) -> tuple[Retrieval, Retrieval | None]:
    """Graph retrieval (the LLM path when `llm` is given) and, if asked, naive retrieval."""
    query = _query(args, llm)
    with open_graph(args, create=False, llm=llm) as rag:
        if not naive:
            return rag.retrieve(query), None
        return rag.compare(query)


def cmd_query(args: argparse.Namespace) -> int:
    """Graph passages beside naive ones, as text or one JSON object."""
    llm = llm_client(args)
    try:
        graph, naive = _retrieve_both(args, llm)
    finally:
        if llm is not None:
            llm.close()
    assert naive is not None
    if args.json:
        print(json.dumps(comparison_json(graph, naive), ensure_ascii=False, indent=2))
    else:
        print_comparison(graph, naive)
    return 0


def _print_evidence(title: str, result: Retrieval) -> None:
    print(f"{title} ({result.method}):")
    for i, p in enumerate(result.passages, start=1):
        print(f"  [{i}] {short(p.text, 160)}")
        print(f"      from: {p.source_line}")
        for relation in p.relations[:2]:
            print(f"      via: {relation}")
    for note in result.notes:
        print(f"  note: {note}")


def _stream(label: str, llm: LLMClient, question: str, result: Retrieval) -> None:
    print(f"\n{label}: ", end="", flush=True)
    try:
        written = []
        for chunk in stream_answer(llm, question, result.passages):
            written.append(chunk)
            print(chunk, end="", flush=True)
        print()
        for line in cited_sources("".join(written), result.passages):
            print(f"  {line}")
    except LLMError as exc:
        print(f"\n  (no answer: {exc})")


def cmd_ask(args: argparse.Namespace) -> int:
    """The evidence, then a streamed, cited answer (or how to configure an LLM)."""
    llm = llm_client(args)
    try:
        graph, naive = _retrieve_both(args, llm, naive=args.compare)
        print(f"Q: {args.question}\n")
        _print_evidence("Graph evidence", graph)
        if naive is not None:
            _print_evidence("\nNaive evidence", naive)
        if llm is None:
            print("\n" + NO_LLM_HELP)
            return 0
        _stream("Graph answer", llm, args.question, graph)
        if naive is not None:
            _stream("Naive answer", llm, args.question, naive)
        usage = llm.usage.as_dict()
        print(f"\nLLM {llm.settings.model}: " + ", ".join(f"{k} {v}" for k, v in usage.items()))
    finally:
        if llm is not None:
            llm.close()
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser],
                parents: list[argparse.ArgumentParser]) -> None:
    """The `query` and `ask` subcommands."""
    p = sub.add_parser("query", parents=parents, help="retrieve passages for a question")
    p.add_argument("question")
    _query_options(p, DEFAULT_TOP_K, "passages to return")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--memory-limit", type=int, metavar="ROWS", help="mirror vectors in memory "
                   "up to ROWS per collection (default for one question: 0, search in Milvus)")
    p.set_defaults(func=cmd_query)

    p = sub.add_parser("ask", parents=parents,
                       help="answer a question with citations (needs an LLM)")
    p.add_argument("question")
    p.add_argument("--compare", action="store_true", help="also answer from naive retrieval")
    _query_options(p, ANSWER_TOP_K, "passages given to the answer")
    p.add_argument("--memory-limit", type=int, metavar="ROWS", help="as for query")
    p.set_defaults(func=cmd_ask)


def _query_options(p: argparse.ArgumentParser, top_k: int, what: str) -> None:
    """The options of a `Query` (one flag each; their defaults are `Query`'s, but for the
    passages an answer is written from)."""
    p.add_argument("--top-k", type=int, default=top_k, help=f"{what} (default {top_k})")
    p.add_argument("--degree", type=int, default=DEFAULT_DEGREE,
                   help=f"expansion degree (default {DEFAULT_DEGREE})")
    p.add_argument("--entity", action="append", metavar="E",
                   help="query entity (repeatable); default: linked from the question")
    p.add_argument("--method", choices=registry.names(),
                   help="retrieval method (default: llm when an LLM is configured, else "
                        f"{registry.DEFAULT})")
    where_options(p)
