"""`hopgraph serve`: the REST API and the web page, in one warm process."""

from __future__ import annotations

import argparse
import ipaddress
import sys

from hopgraph.cli.common import llm_client, open_graph
from hopgraph.config import DEFAULT_ANSWER_CACHE, DEFAULT_MAX_BODY_MB, ServeSettings
from hopgraph.errors import UsageError


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def cmd_serve(args: argparse.Namespace) -> int:
    """Open the graph once and serve it until interrupted."""
    try:
        from hopgraph.serve.app import run
        from hopgraph.serve.service import GraphService
    except ImportError as exc:
        raise UsageError(f"`hopgraph serve` needs the 'serve' extra ({exc.name} is missing)",
                         fix='pip install "hopgraph[serve]"') from None
    if args.max_body_mb <= 0:
        raise UsageError(f"--max-body-mb must be positive, got {args.max_body_mb}")
    settings = ServeSettings.load(max_body_bytes=int(args.max_body_mb * 1024 * 1024),
                                  cache_size=args.cache)
    key = settings.api_key
    if key is None and not _loopback(args.host):
        print(f"warning: serving on {args.host}, reachable from other machines, with no API "
              "key: anyone who can connect can read and change the graph (set "
              "HOPGRAPH_API_KEY)", file=sys.stderr)
    llm = llm_client(args)
    try:
        with open_graph(args, llm=llm) as rag:
            service = GraphService(rag, llm, cache_size=settings.cache_size)
            print(f"hopgraph: serving graph {rag.store.graph!r} of {rag.store.uri} at "
                  f"http://{args.host}:{args.port}/ (API docs at /docs"
                  f"{', API key required' if key else ''}; LLM: "
                  f"{llm.settings.model if llm else 'none'}); Ctrl-C stops", file=sys.stderr)
            try:
                run(service, args.host, args.port, settings)
            finally:
                service.close()
    finally:
        if llm is not None:
            llm.close()
    return 0


def add_parser(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]
               ) -> None:
    """The `serve` subcommand."""
    p = sub.add_parser("serve", parents=parents,
                       help="serve the REST API and the web page (needs the 'serve' extra)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (8000)")
    p.add_argument("--max-body-mb", type=float, default=DEFAULT_MAX_BODY_MB, metavar="MB",
                   help=f"largest request body accepted ({DEFAULT_MAX_BODY_MB:g} MB; larger: "
                        "413)")
    p.add_argument("--cache", type=int, default=DEFAULT_ANSWER_CACHE, metavar="N",
                   help="answers to repeated /query requests kept until the next write "
                        f"({DEFAULT_ANSWER_CACHE}; 0: none)")
    p.set_defaults(func=cmd_serve)
