"""The `hopgraph` command line: ingest, query, ask, docs, delete, serve, keys, mcp, stats,
check, export, drop, demo, eval.

One module per command family (ingest, query, documents, admin, bench); this one builds the
parser and turns hopgraph's errors into exit codes: 1 for a `HopgraphError`, 2 for a
`UsageError` (and for argparse's own usage errors).
"""

from __future__ import annotations

import argparse
import logging
import sys

from hopgraph.cli import admin, bench, documents, ingest, keys, mcp, query, serve
from hopgraph.errors import HopgraphError, UsageError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--uri", help="Milvus URI: a .db path (Milvus Lite, default "
                        "./hopgraph.db) or http://host:19530 [env HOPGRAPH_URI]")
    common.add_argument("--token", help="Milvus / Zilliz Cloud token [env HOPGRAPH_TOKEN]")
    common.add_argument("--graph", help="graph name; one database holds many "
                        "(default hopgraph) [env HOPGRAPH_GRAPH]")
    common.add_argument("--embedder", help="'local' (all-MiniLM-L6-v2, default), a "
                        "sentence-transformers model folder's path, or 'openai:MODEL' [env "
                        "HOPGRAPH_EMBEDDER]")
    common.add_argument("--embed-timeout", type=float, metavar="SECONDS",
                        help="an openai:MODEL embedder's seconds per request (default 60; a "
                        "batch that times out is halved) [env HOPGRAPH_EMBED_TIMEOUT]")
    common.add_argument("--embed-batch", type=int, metavar="N", help="texts per embeddings "
                        "request (default 256) [env HOPGRAPH_EMBED_BATCH]")
    common.add_argument("--embed-retries", type=int, metavar="N", help="retries of an "
                        "embeddings request after a 429, a 5xx or a lost connection (default "
                        "3) [env HOPGRAPH_EMBED_RETRIES]")
    common.add_argument("--rerank", metavar="PATH|URL", help="rerank each query's "
                        "candidates with a cross-encoder folder or a /rerank endpoint (default "
                        "off) [env HOPGRAPH_RERANK]")
    common.add_argument("--rerank-top-n", type=int, metavar="N", help="candidates the "
                        "reranker orders per query (default 20) [env HOPGRAPH_RERANK_TOP_N]")
    common.add_argument("-v", "--verbose", action="store_true", help="log progress details")

    llm_options = argparse.ArgumentParser(add_help=False)
    llm_options.add_argument("--llm", metavar="MODEL", help="chat model of an OpenAI-compatible "
                             "server [env HOPGRAPH_LLM_MODEL]; none: offline")
    llm_options.add_argument("--llm-base-url", metavar="URL", help="its base URL, e.g. "
                             "http://localhost:11434/v1 for Ollama [env HOPGRAPH_LLM_BASE_URL]")
    llm_options.add_argument("--no-llm", action="store_true",
                             help="offline path even when an LLM is configured")

    parser = argparse.ArgumentParser(
        prog="hopgraph", description="Graph RAG on Milvus: ingest documents into a graph, "
        "then retrieve multi-hop evidence for questions, offline by default.",
        epilog="`hopgraph COMMAND --help` gives a command's options; every command and "
               "option: docs/cli.md.")
    sub = parser.add_subparsers(dest="command", required=True)
    ingest.add_parser(sub, [common, llm_options])
    query.add_parsers(sub, [common, llm_options])
    admin.add_parsers(sub, [common])
    documents.add_parsers(sub, [common])
    bench.add_parser(sub, [common])
    serve.add_parser(sub, [common, llm_options])
    keys.add_parser(sub, [common])
    mcp.add_parser(sub, [common, llm_options])
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `hopgraph` command."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        code: int = args.func(args)
        return code
    except UsageError as exc:
        print(f"hopgraph {args.command}: usage error: {exc}", file=sys.stderr)
        return 2
    except HopgraphError as exc:
        print(f"hopgraph {args.command}: error: {exc}", file=sys.stderr)
        return 1
