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

from hopgraph.answer import stream_answer
from hopgraph.api import GraphRAG, stats_of
from hopgraph.config import Settings
from hopgraph.embed import EmbedderError
from hopgraph.llm import LLMClient, LLMError, LLMSettings
from hopgraph.loaders import InputError
from hopgraph.retrieve import METHODS, OFFLINE_METHODS, Retrieval
from hopgraph.store import MilvusStore, StoreError

_EXPECTED_ERRORS = (InputError, StoreError, EmbedderError, LLMError, ValueError,
                    FileNotFoundError)
NO_LLM_HELP = (
    "An LLM is needed to write the answer, and none is configured. Point hopgraph at any "
    "OpenAI-compatible server:\n"
    "  OpenAI:  export OPENAI_API_KEY=sk-...; export HOPGRAPH_LLM_MODEL=gpt-4o-mini\n"
    "  Ollama:  export HOPGRAPH_LLM_MODEL=llama3.1 "
    "HOPGRAPH_LLM_BASE_URL=http://localhost:11434/v1\n"
    "  or pass --llm MODEL [--llm-base-url URL]. The retrieved evidence is shown above."
)


def _llm_client(args: argparse.Namespace) -> LLMClient | None:
    """The LLM client the arguments and HOPGRAPH_LLM_* ask for, or None (offline)."""
    if getattr(args, "no_llm", False):
        return None
    settings = LLMSettings.from_env(model=getattr(args, "llm", None),
                                    base_url=getattr(args, "llm_base_url", None))
    return LLMClient(settings) if settings.configured else None


def _open(args: argparse.Namespace, create: bool = True, llm: LLMClient | None = None
          ) -> GraphRAG:
    return GraphRAG(uri=args.uri, graph=args.graph, token=args.token, embedder=args.embedder,
                    create=create, llm=llm, memory_limit=_memory_limit(args))


def _memory_limit(args: argparse.Namespace) -> int | None:
    """One question per process: search in Milvus unless told otherwise.

    Mirroring the vectors costs seconds (8 s for the 35k rows of MuSiQue) and pays off only
    over many questions; `eval` and library users keep the mirror.
    """
    if getattr(args, "memory_limit", None) is not None:
        return args.memory_limit
    one_shot = args.command in ("query", "ask") and "HOPGRAPH_MEMORY_LIMIT" not in os.environ
    return 0 if one_shot else None


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


def _extract(args: argparse.Namespace) -> tuple[list[Any], list[Any], int] | None:
    """Raw documents → chunks → LLM triplets; None after a dry run."""
    from tqdm import tqdm

    from hopgraph.extract import chunk_documents, estimate, extract_records, read_documents

    problems: list[Any] = []
    docs = read_documents(args.files, problems)
    chunks = chunk_documents(docs, chunk_tokens=args.chunk_tokens,
                             overlap_tokens=args.overlap_tokens)
    if args.dry_run:
        guess = estimate(chunks)
        print(f"{len(docs)} documents, {guess.chunks} chunks of <= {args.chunk_tokens} tokens "
              f"({args.overlap_tokens} overlap)\nestimated prompt tokens: {guess.prompt_tokens} "
              f"(largest prompt {guess.max_prompt_tokens}; counted with the MiniLM tokenizer, "
              "so close to, not equal to, the LLM's count); no LLM call made")
        for problem in problems:
            print(f"skipped {problem.where}: {problem.what}", file=sys.stderr)
        return None
    llm = _llm_client(args)
    if llm is None:
        raise ValueError("--extract needs an LLM to extract triplets.\n" + NO_LLM_HELP.split(
            "\n", 1)[1].replace(" The retrieved evidence is shown above.", ""))
    with llm, tqdm(total=len(chunks), desc="extract", unit="chunk", file=sys.stderr,
                   disable=args.quiet) as bar:
        report = extract_records(llm, chunks, progress=bar.update)
        usage = llm.usage.as_dict()
    print(f"extracted {report.triplets} triplets from {len(chunks)} chunks of {len(docs)} "
          f"documents ({report.cached} chunks from cache, {report.chunks_failed} failed, "
          f"{report.triplets_skipped} malformed triplets skipped); LLM " +
          ", ".join(f"{k} {v}" for k, v in usage.items()), file=sys.stderr)
    return report.records, problems + report.problems, report.chunks_failed


def cmd_ingest(args: argparse.Namespace) -> int:
    extracted = None
    if args.extract:
        extracted = _extract(args)
        if extracted is None:
            return 0
    with _open(args) as rag:
        bars = None if args.quiet else _Bars()
        if extracted is not None:
            summary = rag.add(extracted[0], progress=bars)
            summary.problems[:0] = extracted[1]
            summary.rows_skipped += extracted[2]  # chunks the LLM gave nothing usable for
        else:
            summary = rag.add_files(args.files, progress=bars)
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
        "llm": graph.llm,
    }


def _method(args: argparse.Namespace, llm: LLMClient | None) -> str:
    return args.method or ("llm" if llm is not None else "default")


def _retrieve_both(args: argparse.Namespace, llm: LLMClient | None, naive: bool = True
                   ) -> tuple[Retrieval, Retrieval | None]:
    """Graph retrieval (the LLM path when `llm` is given) and, if asked, naive retrieval."""
    with _open(args, create=False, llm=llm) as rag:
        graph = rag.retrieve(args.question, top_k=args.top_k, degree=args.degree,
                             entities=args.entity, method=_method(args, llm))
        return graph, rag.naive(args.question, top_k=args.top_k) if naive else None


def cmd_query(args: argparse.Namespace) -> int:
    llm = _llm_client(args)
    try:
        graph, naive = _retrieve_both(args, llm)
    finally:
        if llm is not None:
            llm.close()
    assert naive is not None
    if args.json:
        print(json.dumps(_query_json(graph, naive), ensure_ascii=False, indent=2))
    else:
        _print_query(graph, naive)
    return 0


# --- ask ----------------------------------------------------------------------------------------

def _print_evidence(title: str, result: Retrieval) -> None:
    print(f"{title} ({result.method}):")
    for i, p in enumerate(result.passages, start=1):
        print(f"  [{i}] {_short(p.text, 160)}")
        for relation in p.relations[:2]:
            print(f"      via: {relation}")
    for note in result.notes:
        print(f"  note: {note}")


def _stream(label: str, llm: LLMClient, question: str, result: Retrieval) -> None:
    print(f"\n{label}: ", end="", flush=True)
    try:
        for chunk in stream_answer(llm, question, [p.text for p in result.passages]):
            print(chunk, end="", flush=True)
        print()
    except LLMError as exc:
        print(f"\n  (no answer: {exc})")


def cmd_ask(args: argparse.Namespace) -> int:
    llm = _llm_client(args)
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


# --- stats, drop, demo -----------------------------------------------------------------------

def _store(args: argparse.Namespace) -> MilvusStore:
    """The graph's collections alone: stats and drop need no embedder and no graph load."""
    settings = Settings.load(uri=args.uri, graph=args.graph, token=args.token)
    store = MilvusStore(settings.uri, settings.graph, settings.token)
    if not store.exists():
        store.close()
        raise StoreError(f"graph {settings.graph!r} does not exist at {settings.uri}")
    return store


def cmd_stats(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        stats = stats_of(store)
    finally:
        store.close()
    if args.json:
        print(json.dumps(stats, ensure_ascii=False, indent=2))
    else:
        for key, value in stats.items():
            print(f"{key:<10} {value}")
    return 0


def cmd_drop(args: argparse.Namespace) -> int:
    store = _store(args)
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
        # --graph names a graph to reuse (in --uri / HOPGRAPH_URI / ./hopgraph.db); without
        # it the benchmark gets a fresh graph in a temporary database.
        uri = args.uri if (args.uri or args.graph) else str(Path(tmp) / "eval.db")
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
    print(f"\nindexing: {summary.seconds:.1f} s ({summary.passages_added} passages, "
          f"{summary.relations_added} relations added; {summary.texts_embedded} texts "
          f"embedded); {len(questions)} questions")
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

    llm_options = argparse.ArgumentParser(add_help=False)
    llm_options.add_argument("--llm", metavar="MODEL", help="chat model of an OpenAI-compatible "
                             "server [env HOPGRAPH_LLM_MODEL]; none: offline")
    llm_options.add_argument("--llm-base-url", metavar="URL", help="its base URL, e.g. "
                             "http://localhost:11434/v1 for Ollama [env HOPGRAPH_LLM_BASE_URL]")
    llm_options.add_argument("--no-llm", action="store_true",
                             help="offline path even when an LLM is configured")

    parser = argparse.ArgumentParser(prog="hopgraph", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", parents=[common, llm_options],
                       help="ingest passage/triplet files, or raw text with --extract")
    p.add_argument("files", nargs="+", help="JSON, JSONL or HippoRAG OpenIE files; with "
                   "--extract: .txt, .md, .pdf files or folders of them")
    p.add_argument("--extract", action="store_true",
                   help="raw documents: chunk them and extract triplets with the LLM")
    p.add_argument("--dry-run", action="store_true",
                   help="with --extract: print chunks and estimated tokens, call nothing")
    p.add_argument("--chunk-tokens", type=int, default=512, help="chunk size (512)")
    p.add_argument("--overlap-tokens", type=int, default=64, help="chunk overlap (64)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--show-problems", type=int, default=10, metavar="N",
                   help="list the first N skipped rows/triplets (default 10)")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("query", parents=[common, llm_options],
                       help="retrieve passages for a question")
    p.add_argument("question")
    p.add_argument("--top-k", type=int, default=5, help="passages to return (default 5)")
    p.add_argument("--degree", type=int, default=1, help="expansion degree (default 1)")
    p.add_argument("--entity", action="append", metavar="E",
                   help="query entity (repeatable); default: linked from the question")
    p.add_argument("--method", choices=METHODS,
                   help="retrieval method (default: llm when an LLM is configured, else default)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--memory-limit", type=int, metavar="ROWS", help="mirror vectors in memory "
                   "up to ROWS per collection (default for one question: 0, search in Milvus)")
    p.set_defaults(func=cmd_query)

    p = sub.add_parser("ask", parents=[common, llm_options],
                       help="answer a question with citations (needs an LLM)")
    p.add_argument("question")
    p.add_argument("--compare", action="store_true", help="also answer from naive retrieval")
    p.add_argument("--top-k", type=int, default=3, help="passages given to the answer (3)")
    p.add_argument("--degree", type=int, default=1, help="expansion degree (default 1)")
    p.add_argument("--entity", action="append", metavar="E", help="query entity (repeatable)")
    p.add_argument("--method", choices=METHODS,
                   help="retrieval method (default: llm when an LLM is configured, else default)")
    p.add_argument("--memory-limit", type=int, metavar="ROWS", help="as for query")
    p.set_defaults(func=cmd_ask)

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
    p.add_argument("--method", action="append", choices=OFFLINE_METHODS,
                   help="method to run (repeatable; default: all offline methods)")
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
