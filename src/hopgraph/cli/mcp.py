"""`hopgraph mcp`: one graph served to agents over MCP (docs/mcp.md), on stdio for a client
that starts the process itself, or over streamable HTTP (`--http`) behind the API keys of
`hopgraph serve`."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import TYPE_CHECKING

from hopgraph.cli.common import llm_client, open_graph
from hopgraph.cli.serve import warn_or_refuse
from hopgraph.config import ServeSettings
from hopgraph.errors import UsageError, install_extra
from hopgraph.store.lite import is_local_uri

if TYPE_CHECKING:  # the mcp extra is imported when the command runs
    from hopgraph.integrations.mcp import LogLevel

DEFAULT_PORT = 8001  # beside `hopgraph serve`'s 8000
PATH = "/mcp"  # the SDK's endpoint path, where clients connect


def cmd_mcp(args: argparse.Namespace) -> int:
    """Open the graph once (never creating it) and serve it until the client leaves (stdio)
    or until interrupted (HTTP)."""
    try:
        from hopgraph.integrations.mcp import build_server
        if args.http:
            from hopgraph.integrations.mcp_http import key_check
    except ImportError as exc:
        missing = (exc.name or "mcp").split(".")[0]
        raise UsageError(f"`hopgraph mcp` needs the 'mcp' extra ({missing} is missing)",
                         fix=install_extra("mcp")) from None
    from hopgraph.serve.service import GraphService, database_keys  # no web framework

    llm = llm_client(args)
    log_level: LogLevel = "INFO" if args.verbose else "WARNING"
    try:
        # On stdio, stdout is the protocol's wire: whatever opening the graph might print
        # goes to stderr (while serving, the SDK itself points stdout there).
        with contextlib.redirect_stdout(sys.stderr):
            rag = open_graph(args, create=False, llm=llm)
        try:
            service = GraphService(rag, llm, cache_size=0)  # builds the retriever: warm
            try:
                if not args.http:
                    build_server(service, log_level=log_level).run("stdio")
                    return 0
                settings = ServeSettings.load()
                keys = database_keys(rag)
                keyed = settings.api_key is not None or bool(keys.all())
                warn_or_refuse(args, is_local_uri(rag.uri), keyed)
                guard = key_check(keys, settings.api_key, rag.name)
                server = build_server(service, guard=guard, log_level=log_level)
                print(f"hopgraph: serving graph {rag.name!r} of {rag.uri} over "
                      f"MCP at http://{args.host}:{args.port}{PATH} ("
                      f"{'API key required' if keyed else 'no API key'}; LLM: "
                      f"{llm.settings.model if llm else 'none'}); Ctrl-C stops",
                      file=sys.stderr, flush=True)
                server.run("streamable-http", host=args.host, port=args.port,
                           streamable_http_path=PATH)
            finally:
                service.close()
        finally:
            rag.close()
    finally:
        if llm is not None:
            llm.close()
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser],
               parents: list[argparse.ArgumentParser]) -> None:
    """The `mcp` subcommand."""
    p = sub.add_parser("mcp", parents=parents,
                       help="serve the graph to agents over MCP: search, ask, entity, "
                            "documents (needs the 'mcp' extra)")
    p.add_argument("--http", action="store_true",
                   help=f"serve streamable HTTP at http://HOST:PORT{PATH} instead of stdio "
                        "(API keys as for `hopgraph serve`)")
    p.add_argument("--host", default="127.0.0.1", help="with --http: address to bind "
                                                        "(127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"with --http: port ({DEFAULT_PORT})")
    p.add_argument("--no-auth", action="store_true",
                   help="with --http: serve beyond loopback with no API key (otherwise "
                        "refused)")
    p.set_defaults(func=cmd_mcp)
